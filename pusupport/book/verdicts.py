"""Paired comparisons over seeds and the book's verdict rule.

A method and its baseline share each seed's data, so the per-seed difference
d_s = metric(method, s) − metric(baseline, s) is what is tested (lower is better: d < 0
is the paper's side). :func:`paired_difference` gives its mean, a 95 % t interval [L, U],
the t test's p and the exact sign-flip p (all 2ⁿ sign patterns). :func:`judge` applies
the rule (:data:`RULE`; its changes, dated, in :data:`RULE_CHANGES`), in which worse evidence
for the method never gets a weaker verdict against it:

1. fewer seeds than :func:`min_seeds` of the claim's family: the exact test cannot reach
   p < 0.05 once adjusted (6 seeds alone, 8 in a family of 5) — *descriptive only*;
2. first, is a gain of Δ ruled out? Δ is the smallest gain a practitioner would act on (the
   claim's :class:`Margin`). It is, when L > −Δ and the exact test of a gain of Δ (the sign
   flips of d + Δ, adjusted as the exact test of d is) gives p < 0.05 on that side: the t
   interval alone errs where the differences are skewed. Then the verdict is *a loss
   smaller than Δ* (L > 0, U < Δ) or *contradicted* (L > 0, U ≥ Δ) where a loss is shown —
   both the t test and the exact test give p < 0.05 and the t test p < 0.01 — *a gain
   smaller than Δ* (U < 0) where a gain is shown so, and else *a gain of Δ ruled out*, with
   a note where a loss or a smaller gain is borderline (0.01 ≤ p_t < 0.05);
3. a gain of Δ not ruled out: *reproduced* where a gain is shown (U < 0, L ≤ −Δ: a gain of Δ
   inside the interval), *borderline* (no verdict) where the t test's p lies in
   [0.01, 0.05), else *inconclusive at this scale*, with the seeds that would give 80 %
   power at a true gain of Δ/2 (:func:`~pusupport.book.seeds.seeds_needed`);
4. a verdict whose deciding end of the interval lies within ``floor`` of its boundary
   (−Δ for the gain of Δ ruled out, 0 for a gain or a loss shown) — a few test points, the
   test set's resolution — is withheld: a loss or a smaller gain falls back to *a gain of Δ
   ruled out*, which is withheld as *unstable at this scale* only at its own boundary.
   Rounding (another thread count, bf16) moves a run about as much as another seed does;
   the interval covers that, and the rule's error rates hold with it
   (``tests/test_verdict_simulation.py``).

Claims stated together are a family, judged on adjusted p-values and a simultaneous
interval: on shared seeds (:func:`judge_jointly`) by a max-|t| sign-flip test that flips
each seed's sign jointly across the family (it keeps their correlation) beside Holm for
the t test; on different data (:func:`judge_within`) by Bonferroni, so that each page
judges its own claim exactly as the summary does.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache

import numpy as np

from .seeds import ALPHA, POWER, STRONG, min_seeds, seeds_needed
from .signflip import holm, max_t_sign_flip, sign_flip_p_value

REPRODUCED, CONTRADICTED, RULED_OUT, INCONCLUSIVE = (
    "reproduced", "contradicted", "a gain of Δ ruled out", "inconclusive at this scale")
SMALLER_GAIN, SMALLER_LOSS = "a gain smaller than Δ", "a loss smaller than Δ"
BORDERLINE, DESCRIPTIVE, UNSTABLE, NOT_RUN = (
    "borderline", "descriptive only", "unstable at this scale", "not run here")
VERDICTS = (REPRODUCED, SMALLER_GAIN, CONTRADICTED, SMALLER_LOSS, RULED_OUT, INCONCLUSIVE,
            BORDERLINE, DESCRIPTIVE, UNSTABLE, NOT_RUN)
#: The fewest seeds a claim judged alone needs (2/2⁶ = 0.031).
MIN_SEEDS = min_seeds(1)
#: Each version of the rule, when it took effect (its commit's date) and what changed. A
#: committed record keeps the version that judged it when it was committed; judged under
#: another, it is re-judged under :data:`RULE` and says so.
RULE_CHANGES = (
    (1, "2026-11-24", "the first rule: a difference shown by both the t test and the exact "
                      "sign-flip test at p < 0.05; reproduced, contradicted, ruled out, inconclusive"),
    (2, "2026-11-25", "each page's family adjusted over the families stated beside it"),
    (3, "2026-11-26", "a gain (a loss) shown but smaller than Δ is its own verdict; the fewest "
                      "seeds that can decide count the family"),
    (4, "2026-11-26", "the interval covers the test set's sampling where the seeds share it"),
    (5, "2026-11-26", "the run-to-run spread is no longer a floor of the verdicts"),
    (6, "2026-11-27", "monotone: a gain of Δ is ruled out first, also by the exact one-sided "
                      "test, and a borderline loss no longer takes that verdict away; Δ named "
                      "for what it is, not \"the paper's gain\""),
)
RULE = RULE_CHANGES[-1][0]


@dataclass(frozen=True)
class Paired:
    """The paired difference method − baseline over ``n`` seeds (NaN where n < 2)."""

    n: int
    mean: float
    low: float
    high: float
    p_t: float
    p_exact: float
    detectable: float
    sd: float = math.nan
    differences: tuple = ()
    se: float = math.nan        # the mean's standard error: seeds, and the test set when sampled
    df: float = math.nan        # its degrees of freedom (Satterthwaite's with a test-set part)
    test_var: float = math.nan  # the part of se² from sampling the test set (NaN: not covered)

    def __post_init__(self):
        if math.isnan(self.se) and self.n >= 2:          # the seeds alone
            object.__setattr__(self, "se", self.sd / math.sqrt(self.n))
            object.__setattr__(self, "df", self.n - 1)

    def interval(self, digits: int = 4) -> str:
        """The mean and its 95 % interval, e.g. "-0.0123 [-0.0300, +0.0050]"."""
        if self.n < 2:
            return f"{self.mean:+.{digits}f} (single seed: no interval)"
        if not self.high > self.low:
            return f"{self.mean:+.{digits}f} at each of {self.n} seeds (no spread: no interval)"
        return f"{self.mean:+.{digits}f} [{self.low:+.{digits}f}, {self.high:+.{digits}f}]"

    def describe(self, digits: int = 4) -> str:
        """:meth:`interval` with both p-values and the detectable difference."""
        if not self.high > self.low:
            return self.interval(digits)
        return (f"{self.interval(digits)}, t-test p = {self.p_t:.3f}, sign-flip p = "
                f"{self.p_exact:.3f}, detectable ≥ {self.detectable:.{digits}f}")


@lru_cache(maxsize=None)
def _t_quantile(q: float, df: int) -> float:
    from scipy.stats import t
    return float(t.ppf(q, df))


def _t_p_value(mean: float, se: float, df: float) -> float:
    from scipy.stats import t
    if se == 0:
        return 1.0 if mean == 0 else 0.0
    return float(2 * t.sf(abs(mean) / se, df))


def shared_test_variance(wrong_method, wrong_baseline) -> tuple[float, float, float]:
    """The variance a shared test set adds to the mean paired difference: the per-point
    differences δ_si (seeds × points, from 0/1 errors) as a crossed two-way random-effects
    design, δ_si = μ + a_s + b_i + e_si. Var(mean) = σ²_a/n + σ²_b/N + σ²_e/(nN) is
    (MS_seed + MS_point − MS_res)/(nN); its test-set part (MS_point − MS_res)/(nN), at least
    0. Returns (that part, the whole, Satterthwaite's degrees of freedom)."""
    d = np.asarray(wrong_method, dtype=float) - np.asarray(wrong_baseline, dtype=float)
    n, N = d.shape
    grand, seeds, points = d.mean(), d.mean(1), d.mean(0)
    ms_seed = N * ((seeds - grand) ** 2).sum() / (n - 1)
    ms_point = n * ((points - grand) ** 2).sum() / (N - 1)
    ss_res = ((d - grand) ** 2).sum() - (n - 1) * ms_seed - (N - 1) * ms_point
    ms_res = max(ss_res, 0.0) / ((n - 1) * (N - 1))
    test = max(ms_point - ms_res, 0.0) / (n * N)
    whole = ms_seed / (n * N) + test
    parts = [(ms_seed / (n * N), n - 1)] + ([(ms_point / (n * N), N - 1), (ms_res / (n * N), (n - 1) * (N - 1))]
                                           if test > 0 else [])
    denominator = sum(v ** 2 / df for v, df in parts)
    return test, whole, (whole ** 2 / denominator if denominator > 0 else n - 1)


def paired_difference(method, baseline, wrong: tuple | None = None) -> Paired:
    """Paired method − baseline over seeds (sequences of equal length, in seed order).
    ``wrong``: both methods' 0/1 errors on each point of a test set the seeds share (seeds ×
    points each, their means the values given) — the interval then covers the test set's
    sampling too (:func:`shared_test_variance`); without it, the training randomness on this test set."""
    a, b = np.asarray(method, dtype=float), np.asarray(baseline, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or len(a) == 0:
        raise ValueError(f"need one value per seed for both, got shapes {a.shape} and {b.shape}")
    d = a - b
    n, mean = len(d), float(d.mean())
    if n < 2:
        return Paired(1, mean, math.nan, math.nan, math.nan, math.nan, math.nan,
                      differences=tuple(d))
    sd = float(d.std(ddof=1)) if np.ptp(d) > 1e-12 else 0.0            # equal up to rounding
    se, df, test_var = sd / math.sqrt(n), n - 1, math.nan
    if wrong is not None:
        per_seed = np.asarray(wrong[0], dtype=float).mean(1) - np.asarray(wrong[1], dtype=float).mean(1)
        if per_seed.shape != d.shape or not np.allclose(per_seed, d, atol=1e-9):
            raise ValueError("the per-point errors do not give the per-seed values: pass each "
                             "seed's errors in the values' seed order")
        test_var, whole, df = shared_test_variance(*wrong)
        se = math.sqrt(whole) if sd > 0 or test_var > 0 else 0.0
    half = _t_quantile(0.975, df) * se
    detectable = (_t_quantile(0.975, df) + _t_quantile(0.80, df)) * se
    return Paired(n, mean, mean - half, mean + half, _t_p_value(mean, se, df),
                  sign_flip_p_value(d), detectable, sd, tuple(d), se, df, test_var)


@dataclass(frozen=True)
class Margin:
    """Δ, the smallest gain that would matter for a claim: ``relative`` × the baseline's mean
    error at the scale run, never below ``points`` test points; and why."""

    relative: float = 0.1
    points: int = 3
    reason: str = ("the smallest gain a practitioner would act on, taken as a tenth of the "
                   "baseline's error at the scale run: the paper reports its results as curves, "
                   "with no numbers for its gains")

    def value(self, baseline_error: float, n_test: int | None) -> float:
        floor = self.points / n_test if n_test else 0.0
        return max(self.relative * abs(baseline_error), floor)


@dataclass(frozen=True)
class Judged:
    """A paired comparison judged under the rule: the verdict and what it rests on (the
    p-values and interval as judged — adjusted in a family — Δ and the floor)."""

    verdict: str
    paired: Paired
    margin: float
    floor: float
    p_t: float
    p_exact: float
    low: float
    high: float
    adjustment: str = ""
    family: int = 1
    p_margin: float = math.nan  # the exact test of a gain of Δ, adjusted (NaN: not run)
    note: str = ""              # a borderline loss or smaller gain beside a gain of Δ ruled out

    @cached_property
    def needed(self) -> int | None:
        """Inconclusive: the seeds that would decide (:func:`seeds_needed`); else None."""
        if self.verdict != INCONCLUSIVE:
            return None
        test_var = self.paired.test_var if self.paired.test_var == self.paired.test_var else 0.0
        return seeds_needed(self.paired.sd, self.margin, self.paired.n, self.family, test_var=test_var)

    @property
    def level(self) -> str:
        """The interval's confidence: "95 %", or "95 % simultaneous" within a family."""
        return "95 % simultaneous" if self.adjustment else "95 %"

    def ruled_out(self) -> str:
        """What the interval excludes, with no Δ needed."""
        if not self.high > self.low:
            return "—"
        if self.low >= 0:
            return f"any gain ruled out at {self.level}"
        return f"gains above {-self.low:.4f} ruled out at {self.level}"

    def text(self) -> str:
        """The verdict with its reason in a few words."""
        v = self.verdict
        if v in (REPRODUCED, SMALLER_GAIN):
            return (f"{v}: lowers the error by {-self.high:.4f} to {-self.low:.4f}"
                    + (f", less than Δ = {self.margin:.4f}" if v == SMALLER_GAIN else ""))
        if v in (CONTRADICTED, SMALLER_LOSS):
            return (f"{v}: raises the error by {self.low:.4f} to {self.high:.4f}"
                    + (f", less than Δ = {self.margin:.4f}" if v == SMALLER_LOSS else ""))
        if v == RULED_OUT:
            return f"{v}: no gain of Δ = {self.margin:.4f} or more" + (f"; {self.note}" if self.note else "")
        if v == INCONCLUSIVE:
            more = (f"about {self.needed} seeds would give" if self.needed else "more than 1,000 "
                    "seeds would be needed for" if not self.paired.test_var > 0 else
                    "no number of seeds on this test set gives")
            return (f"{v}: {more} {POWER:.0%} power to decide at a true gain of Δ/2 (Δ = "
                    f"{self.margin:.4f}{'' if self.family == 1 else f', a family of {self.family}'})")
        if v == BORDERLINE:
            return f"{v} (p = {self.p_t:.3f}): no verdict"
        if v == DESCRIPTIVE:
            n, needs = self.paired.n, min_seeds(self.family)
            if self.family > 1:
                return f"{v}: {n} seed{'' if n == 1 else 's'}; a family of {self.family} needs {needs}"
            return f"{v}: {n} seed{'' if n == 1 else 's'}, a verdict needs {needs}"
        return (f"{v}: the interval's deciding end lies within {self.floor:.4f} of its "
                "boundary, the test set's resolution")


def judge(paired: Paired, margin: float, floor: float = 0.0, *, p_t: float | None = None,
          p_exact: float | None = None, interval: tuple | None = None, adjustment: str = "",
          lower_is_better: bool = True, family: int = 1, p_margin: float | None = None) -> Judged:
    """The verdict on the paper's claim that the method beats the baseline by ``margin``
    (Δ) or more; ``p_t``, ``p_exact``, ``interval``, ``p_margin`` (the exact test of a gain
    of Δ: the sign flips of the differences + Δ): adjusted values for a family of ``family``
    (Bonferroni's factor, which sets the fewest seeds that can decide). The exact test needs
    the differences: a :class:`Paired` built from its summary numbers alone is judged on its
    interval there."""
    p_t = paired.p_t if p_t is None else p_t
    p_exact = paired.p_exact if p_exact is None else p_exact
    low, high = (paired.low, paired.high) if interval is None else interval
    judged = Judged(DESCRIPTIVE, paired, margin, floor, p_t, p_exact, low, high, adjustment,
                    family=family)
    if paired.n < min_seeds(family):
        return judged
    lo, hi = (low, high) if lower_is_better else (-high, -low)      # oriented: < 0 is a gain
    if p_margin is None and paired.differences:
        gains = np.asarray(paired.differences, dtype=float) * (1 if lower_is_better else -1)
        p_margin = min(1.0, family * sign_flip_p_value(gains + margin))
    judged = replace(judged, p_margin=math.nan if p_margin is None else p_margin)
    shown = p_t < ALPHA and p_exact < ALPHA and not lo <= 0 <= hi   # (a Holm family's interval may hold 0)
    if lo > -margin and not judged.p_margin >= ALPHA:               # a gain of Δ ruled out
        if lo + margin < floor:
            return replace(judged, verdict=UNSTABLE)
        side, edge = ("loss", lo) if lo > 0 else ("smaller gain", -hi)   # its end against 0
        if shown and p_t < STRONG and edge >= floor:
            return replace(judged, verdict=(CONTRADICTED if hi >= margin else SMALLER_LOSS) if lo > 0
                           else SMALLER_GAIN)
        note = ("" if not shown else f"a {side} borderline (t-test p = {p_t:.3f})" if p_t >= STRONG
                else f"a {side} within {floor:.4f} of 0, the test set's resolution")
        return replace(judged, verdict=RULED_OUT, note=note)
    if shown and hi < 0:                                            # a gain, Δ not ruled out
        if p_t >= STRONG or lo > -margin:
            return replace(judged, verdict=BORDERLINE)
        return replace(judged, verdict=UNSTABLE if -hi < floor else REPRODUCED)
    return replace(judged, verdict=INCONCLUSIVE)


def judge_within(paired: Paired, margin: float, floor: float, family: int) -> Judged:
    """:func:`judge` for one of ``family`` claims stated together on different data:
    Bonferroni-adjusted p-values and interval (Holm would improve on it only by ranking the
    other claims' p-values, which a page judging its own claim does not have)."""
    if family <= 1 or paired.n < 2:
        return judge(paired, margin, floor, family=max(family, 1))
    c = _t_quantile(1 - ALPHA / (2 * family), paired.df)
    return judge(paired, margin, floor, p_t=min(1.0, family * paired.p_t),
                 p_exact=min(1.0, family * paired.p_exact),
                 interval=(paired.mean - c * paired.se, paired.mean + c * paired.se),
                 adjustment=f"Bonferroni over {family}", family=family)


def judge_jointly(paireds: list[Paired], margins: list[float], floors: list[float],
                  across: int = 1) -> list[Judged]:
    """Claims stated together on the same seeds (e.g. the readings): the exact test is a
    max-|t| sign-flip test flipping each seed jointly across them, the t test's p-values
    are Holm-adjusted, and each is judged on the simultaneous interval of max |t| (the exact
    test of a gain of Δ is the max-|t| test of the differences + Δ).
    ``across`` > 1: this family is one of that many stated together on other data (other
    seeds): Bonferroni over them — p-values times ``across``, the interval at 1 − α/across.
    One seed: each is judged alone (descriptive only), so every family goes through here."""
    if len({p.n for p in paireds}) != 1:
        raise ValueError("a joint family needs the same seeds for every member")
    if paireds[0].n < 2:
        return [judge(p, margin, floor, family=across) for p, margin, floor in zip(paireds, margins, floors)]
    k = len(paireds)
    p_exact, critical = max_t_sign_flip(np.column_stack([p.differences for p in paireds]),
                                        ALPHA / across)
    p_exact = [min(1.0, across * p) for p in p_exact]
    p_margin = max_t_sign_flip(np.column_stack([np.asarray(p.differences) + margin
                                                for p, margin in zip(paireds, margins)]), ALPHA / across)[0]
    p_t = [min(1.0, across * p) for p in holm([p.p_t for p in paireds])]
    how = f"max-|t| sign-flip over {k}" + (f", Bonferroni over {across} families" if across > 1 else "")
    half = [critical * p.se if math.isfinite(critical) else math.inf for p in paireds]   # too few seeds: unbounded
    return [judge(p, margin, floor, p_t=pt, p_exact=pe, adjustment=how, family=across,
                  p_margin=min(1.0, across * pm), interval=(p.mean - h, p.mean + h))
            for p, h, margin, floor, pt, pe, pm in zip(paireds, half, margins, floors, p_t, p_exact, p_margin)]
