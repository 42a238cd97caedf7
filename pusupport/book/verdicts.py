"""Paired comparisons over seeds and the book's verdict rule.

A method and its baseline share each seed's data, so the per-seed difference
d_s = metric(method, s) − metric(baseline, s) is what is tested (lower is better: d < 0
is the paper's side). :func:`paired_difference` gives its mean, a 95 % t interval [L, U],
the t test's p and the exact sign-flip p (all 2ⁿ sign patterns). :func:`judge` applies
the rule:

1. fewer seeds than :func:`min_seeds` of the claim's family: the exact test cannot reach
   p < 0.05 once adjusted (6 seeds alone, 8 in a family of 5) — *descriptive only*;
2. a difference is shown when both the t test and the exact test give p < 0.05 (adjusted
   for the claim's family); then p_t ≥ 0.01 is *borderline*; else, Δ being the smallest
   gain that would matter (the claim's :class:`Margin`), *reproduced* (U < 0, L ≤ −Δ: a
   gain of Δ not excluded), *a gain smaller than Δ* (−Δ < L ≤ U < 0), *contradicted*
   (L > 0, U ≥ Δ) or *a loss smaller than Δ* (0 < L ≤ U < Δ);
3. no difference shown: *the paper's gain ruled out* when L > −Δ, else *inconclusive at
   this scale*, with the seeds that would decide with 80 % power at a true gain of Δ/2
   (:func:`~pusupport.book.seeds.seeds_needed`);
4. a verdict whose deciding end of the interval lies within ``floor`` of its boundary
   (0, or −Δ) — a few test points, the test set's resolution — is withheld as *unstable
   at this scale*. Rounding (another thread count, bf16) moves a run about as much as
   another seed does; the interval covers that, and the rule's error rates hold with it
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
    "reproduced", "contradicted", "the paper's gain ruled out", "inconclusive at this scale")
SMALLER_GAIN, SMALLER_LOSS = "a gain smaller than Δ", "a loss smaller than Δ"
BORDERLINE, DESCRIPTIVE, UNSTABLE, NOT_RUN = (
    "borderline", "descriptive only", "unstable at this scale", "not run here")
VERDICTS = (REPRODUCED, SMALLER_GAIN, CONTRADICTED, SMALLER_LOSS, RULED_OUT, INCONCLUSIVE,
            BORDERLINE, DESCRIPTIVE, UNSTABLE, NOT_RUN)
#: The fewest seeds a claim judged alone needs (2/2⁶ = 0.031).
MIN_SEEDS = min_seeds(1)


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
    reason: str = ("a tenth of the baseline's error at the scale run: the paper prints no "
                   "numbers for its gaps, and its Table 2 gains are about a tenth of nnPU's error")

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
            return f"{v}: no gain of Δ = {self.margin:.4f} or more"
        if v == INCONCLUSIVE:
            more = (f"about {self.needed} seeds" if self.needed else "more than 1,000 seeds"
                    if not self.paired.test_var > 0 else "no number of seeds on this test set")
            return (f"{v}: {more} would decide at Δ = {self.margin:.4f} ({POWER:.0%} power at a "
                    f"true gain of Δ/2{'' if self.family == 1 else f', a family of {self.family}'})")
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
          lower_is_better: bool = True, family: int = 1) -> Judged:
    """The verdict on the paper's claim that the method beats the baseline by ``margin``
    (Δ) or more; ``p_t``, ``p_exact``, ``interval``: adjusted values for a family of
    ``family`` (Bonferroni's factor, which sets the fewest seeds that can decide)."""
    p_t = paired.p_t if p_t is None else p_t
    p_exact = paired.p_exact if p_exact is None else p_exact
    low, high = (paired.low, paired.high) if interval is None else interval
    judged = Judged(DESCRIPTIVE, paired, margin, floor, p_t, p_exact, low, high, adjustment,
                    family=family)
    if paired.n < min_seeds(family):
        return judged
    lo, hi = (low, high) if lower_is_better else (-high, -low)      # oriented: < 0 is a gain
    if p_t < ALPHA and p_exact < ALPHA:
        if p_t >= STRONG or lo <= 0 <= hi:      # (the interval of a Holm family may still hold 0)
            return replace(judged, verdict=BORDERLINE)
        if hi < 0:                              # the deciding ends: U against 0, L against −Δ
            verdict, edge = (REPRODUCED, -hi) if lo <= -margin else (SMALLER_GAIN, min(-hi, lo + margin))
        else:
            verdict, edge = (CONTRADICTED, lo) if hi >= margin else (SMALLER_LOSS, min(lo, margin - hi))
    elif lo > -margin:
        verdict, edge = RULED_OUT, lo + margin
    else:
        return replace(judged, verdict=INCONCLUSIVE)
    return replace(judged, verdict=UNSTABLE if edge < floor else verdict)


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
    are Holm-adjusted, and each is judged on the simultaneous interval of max |t|.
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
    p_t = [min(1.0, across * p) for p in holm([p.p_t for p in paireds])]
    how = f"max-|t| sign-flip over {k}" + (f", Bonferroni over {across} families" if across > 1 else "")
    half = [critical * p.se if math.isfinite(critical) else math.inf for p in paireds]   # too few seeds: unbounded
    return [judge(p, margin, floor, p_t=pt, p_exact=pe, adjustment=how, family=across,
                  interval=(p.mean - h, p.mean + h))
            for p, h, margin, floor, pt, pe in zip(paireds, half, margins, floors, p_t, p_exact)]
