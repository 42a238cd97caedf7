"""How the book judges a claim against a page's results files. Each claim belongs to its
experiment (:mod:`pusupport.book.experiments`); :mod:`pusupport.book.registry` collects them.

A claim that a method beats a baseline is judged on the per-seed paired difference under
the verdict rule of :mod:`pusupport.book.verdicts`, with the claim's margin Δ, the
floor below which a difference is not measured (:data:`FLOOR_POINTS` test points, the test
set's resolution) and the adjustment for the claims stated beside it (its ``family``). Other claims keep their own checks, each able to fail.
The intervals cover training randomness on each page's fixed test split (the synthetic
page draws a new test set per seed).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from ..core.metrics import unpack_rows
from .records import read_history
from .seeds import min_seeds
from .verdicts import (CONTRADICTED, INCONCLUSIVE, NOT_RUN, REPRODUCED, RULE_CHANGES, Judged,
                       Margin, Paired, judge_within, paired_difference)

#: The family of the paper's aaPU-vs-nnPU claims (synthetic, CIFAR-10, CIFAR-100, 20 News),
#: stated together in its §4 and adjusted together; Fashion-MNIST, which the paper does not
#: use, is judged beside them (:data:`BESIDE_THE_PAPER`), not inside.
AAPU_VS_NNPU = "aaPU vs nnPU (§4)"
BESIDE_THE_PAPER = "aaPU vs nnPU beyond the paper"
#: The families whose claims compare aaPU with nnPU on one data set's page.
COMPARISONS = (AAPU_VS_NNPU, BESIDE_THE_PAPER)
#: Epochs averaged for the damped comparison (the mean test error of the last k epochs).
LAST_K = 3
#: The smallest difference a page measures, in test points: a verdict's deciding end of
#: its interval must lie farther than this from its boundary.
FLOOR_POINTS = 2


@dataclass(frozen=True)
class Outcome:
    """What a check measured and its verdict; a comparison also carries its paired
    difference, the baseline's mean (for Δ) and, once judged, how it was judged."""

    measured: str
    verdict: str
    seeds: int | None = None
    paired: Paired | None = None
    baseline: float | None = None
    judged: Judged | None = None


@dataclass(frozen=True)
class Claim:
    """A claim, how to judge it (``check(summary, history)`` returns an :class:`Outcome`),
    the data set whose page tests it (None: the experiment's only page), Δ for a
    comparison, and the family of claims stated together (adjusted together)."""

    claim: str
    check: Callable[[dict, pd.DataFrame], Outcome]
    dataset: str | None = None
    margin: Margin = field(default_factory=Margin)
    family: str | None = None


def observed(text: str, reproduced: bool, contradicted: bool) -> Outcome:
    """A check that is not a comparison: reproduced or contradicted beyond its noise
    threshold, inconclusive at this scale in between."""
    if reproduced and contradicted:
        raise ValueError(f"a check cannot both reproduce and contradict its claim: {text}")
    return Outcome(text, REPRODUCED if reproduced else CONTRADICTED if contradicted else INCONCLUSIVE)


def shared_test(summary: dict) -> bool:
    """Whether a page's seeds share one test set (a real data set's test split), whose
    sampling an interval must then cover; the synthetic page draws a test set per seed."""
    return summary.get("dataset") != "synthetic"


def per_point(final: pd.DataFrame, methods, seeds, summary: dict, columns=None) -> tuple | None:
    """Each of ``methods``' per-point 0/1 test errors (seeds × points) at its final epoch
    (``final``: one row a method and seed; ``columns``: each method's column of them, default
    "test_wrong", a view's "test_wrong:<view>"), for
    :func:`~pusupport.book.verdicts.paired_difference`; None where the seeds draw their own
    test sets or a run did not record them (results trained before they were kept: the
    interval then holds this test set fixed)."""
    columns = columns or ["test_wrong"] * len(methods)
    if not shared_test(summary) or not set(columns) <= set(final):
        return None
    cells = final.set_index(["method", "seed"])
    try:
        packed = [[cells.loc[(m, s), c] for s in seeds] for m, c in zip(methods, columns)]
    except KeyError:
        return None
    if not all(isinstance(c, str) for row in packed for c in row):
        return None
    return tuple(np.array([unpack_rows(c) for c in row]) for row in packed)


def lower_error(method: str, baseline: str) -> Callable:
    """Paired by seed: ``method`` − ``baseline`` on the final test error (judged) and on the
    mean test error of the last :data:`LAST_K` evaluated epochs (reported beside it). Seeds
    run by only one of the two are named, not silently dropped."""
    def check(summary, history):
        rows = history.dropna(subset=["test_error"])
        last_k = sorted(rows.epoch.unique())[-LAST_K:]
        last = rows[rows.epoch == last_k[-1]]
        final = last.groupby(["method", "seed"]).test_error.mean()
        damped = rows[rows.epoch.isin(last_k)].groupby(["method", "seed"]).test_error.mean()
        ran = {m: set(final[m].index) for m in (method, baseline)}
        seeds = sorted(ran[method] & ran[baseline])
        p = paired_difference(final[method][seeds], final[baseline][seeds],
                              per_point(last, (method, baseline), seeds, summary))
        q = paired_difference(damped[method][seeds], damped[baseline][seeds])
        text = (f"{method} − {baseline}, final test error: {p.describe()}; mean of the last "
                f"{len(last_k)} evaluated epochs: {q.interval()}")
        unpaired = sorted(ran[method] ^ ran[baseline])
        if unpaired:
            text += f"; seeds {unpaired} ran one method only (left out)"
        return Outcome(text, NOT_RUN, p.n, p, float(final[baseline][seeds].mean()))
    return check


def floor_for(summary: dict) -> float:
    """The floor of a page's comparisons: :data:`FLOOR_POINTS` of its test points (its test
    set's resolution). The run-to-run spread of another thread count is not a floor: it is
    of the size of seed noise, which the interval covers (``tests/test_verdict_simulation.py``)."""
    n_test = summary.get("n_test")
    return FLOOR_POINTS / n_test if n_test else 0.0


def _load(folder: Path):
    path = folder / "summary.json"
    summary = json.loads(path.read_text()) if path.exists() else None
    if summary is None or summary.get("status") != "run":
        reason = "page not executed" if summary is None else summary.get("reason", "not run")
        return summary or {}, None, reason
    return summary, read_history(folder / "history.csv"), None


def judge_claims(output_dir, claims, family_sizes: dict | None = None) -> list[tuple[dict, Outcome]]:
    """(summary, outcome) for each of ``claims`` ((claim, results folder) pairs): checks run
    on the results files, comparisons judged within their family (``family_sizes``: the
    number of claims in each family, default: counted in ``claims``)."""
    results = []
    for c, name in claims:
        summary, history, reason = _load(Path(output_dir) / name)
        if history is None:
            results.append((summary, Outcome(f"— ({reason})", NOT_RUN)))
            continue
        outcome = c.check(summary, history)
        if outcome.seeds is None and "seed" in history:
            outcome = replace(outcome, seeds=int(history.seed.nunique()))
        results.append((summary, outcome))
    sizes = family_sizes or {}
    for i, ((c, _), (summary, outcome)) in enumerate(zip(claims, results)):
        if outcome.paired is None:
            continue
        margin = c.margin.value(outcome.baseline, summary.get("n_test"))
        family = sizes.get(c.family, sum(d.family == c.family for d, _ in claims)) if c.family else 1
        j = judge_within(outcome.paired, margin, floor_for(summary), family)
        results[i] = (summary, replace(outcome, verdict=j.verdict, judged=j))
    return results


def _p(j: Judged | None) -> str:
    if j is None or not j.paired.n >= 2:
        return "—"
    return f"t {j.p_t:.3f}, exact {j.p_exact:.3f}" + (f" ({j.adjustment})" if j.adjustment else "")


def covers(summary: dict, judged: Judged | None = None) -> str:
    """What a comparison's interval covers: the synthetic page draws a test set per seed;
    on a test split the seeds share, its sampling where the runs kept their per-point errors."""
    if not shared_test(summary):
        return "training and a test set drawn per seed"
    if judged is not None and judged.paired.test_var == judged.paired.test_var:
        return "training randomness and the test set's sampling"
    return "training randomness, on this test split held fixed"


def _family(name: str | None, size: int) -> str:
    """The claims a comparison is judged with, and the fewest seeds that can decide there."""
    where = f"{name}, {size} claims" if name else "alone"
    return f"{where}: a verdict needs ≥ {min_seeds(size)} seeds"


def reproduction_table(output_dir, claims, family_sizes: dict | None = None) -> pd.DataFrame:
    """One row per claim of ``claims`` ((claim, results folder) pairs): profile, seeds, and
    for a comparison its paired mean, the interval it was judged on, the (adjusted)
    p-values, what it rules out, Δ; the verdict and what was measured."""
    rows = []
    for (c, _), (summary, o) in zip(claims, judge_claims(output_dir, claims, family_sizes)):
        j = o.judged
        compared = j is not None and j.paired.n >= 2 and j.high > j.low
        rows.append({"claim": c.claim, "profile": summary.get("profile", "—"),
                     "seeds": "—" if o.seeds is None else o.seeds,
                     "paired difference": "—" if j is None else f"{j.paired.mean:+.4f}",
                     "95 % interval": f"[{j.low:+.4f}, {j.high:+.4f}]" + (
                         " simultaneous" if j.adjustment else "") if compared else "—",
                     "p (adjusted)": _p(j), "ruled out": j.ruled_out() if compared else "—",
                     "Δ": "—" if j is None else f"{j.margin:.4f}",
                     "interval covers": "—" if j is None else covers(summary, j),
                     "family": "—" if j is None else _family(c.family, j.family),
                     "floor": "—" if j is None else f"{j.floor:.4f}",
                     "verdict": o.verdict if j is None else j.text(), "measured": o.measured})
    return pd.DataFrame(rows)


#: The columns the summary page shows (the CSV keeps them all).
SHOWN = ["claim", "seeds", "paired difference", "95 % interval", "interval covers", "family",
         "p (adjusted)", "ruled out", "Δ", "verdict"]


#: The column of verdicts on the results committed at the paper's settings, where added
#: (:func:`pusupport.book.committed.with_paper_settings`).
AT_PAPER = "at the paper's settings"


def shown(table: pd.DataFrame) -> pd.DataFrame:
    """The summary's full table as displayed: :data:`SHOWN` of :func:`reproduction_table`'s
    columns (the verdicts at the paper's settings lead the page, in :func:`answers`)."""
    return table[SHOWN]


def answers(table: pd.DataFrame) -> pd.DataFrame:
    """The summary's first table, one row a claim: the claim, its verdict at the paper's
    settings (:data:`AT_PAPER`, where added), then this build's — the verdict, the paired
    difference and the interval it was judged on, the seeds and profile."""
    rows = []
    for r in table.to_dict("records"):
        judged = f"; {r['paired difference']} {r['95 % interval']}" if r["95 % interval"] != "—" else ""
        n = r["seeds"]
        where = r["profile"] if n == "—" else f"{n} seed{'' if n == 1 else 's'}, {r['profile']}"
        rows.append({"claim": r["claim"], AT_PAPER: r.get(AT_PAPER, "—"),
                     "this build": f"{r['verdict']}{judged} ({where})"})
    return pd.DataFrame(rows)


def rule_changes() -> pd.DataFrame:
    """The verdict rule's versions (:data:`~pusupport.book.verdicts.RULE_CHANGES`), dated,
    today's last."""
    return pd.DataFrame(RULE_CHANGES, columns=["rule", "from", "what changed"])


def measured_text(table: pd.DataFrame) -> str:
    """Markdown: what each claim's check measured, and what its interval covers."""
    return "\n".join(f"- **{r['claim']}** ({r['profile']} profile"
                     + (f"; interval: {r['interval covers']}, floor {r['floor']}" if r["floor"] != "—" else "")
                     + f"): {r['measured']}" for r in table.to_dict("records"))


def verdict_text(output_dir, claims, family_sizes: dict | None = None) -> str:
    """Markdown: each of ``claims`` ((claim, results folder) pairs), what was measured and
    the verdict — a page's row(s) of the reproduction summary."""
    if not claims:
        return ""
    table = reproduction_table(output_dir, claims, family_sizes)
    return "\n\n".join(f"**Claim:** {r['claim']}  \n**Measured ({r['profile']} profile, "
                        f"{r['seeds']} seed{'' if r['seeds'] == 1 else 's'}):** {r['measured']}  \n"
                        + (f"**Judged:** {r['paired difference']} {r['95 % interval']} "
                           f"({r['interval covers']}), p {r['p (adjusted)']}, Δ = {r['Δ']}, "
                           f"floor {r['floor']} ({FLOOR_POINTS} test points); "
                           f"{r['ruled out']}  \n"
                           if r["ruled out"] != "—" else "")
                        + f"**Verdict:** {r['verdict']}"
                        for r in table.to_dict("records"))
