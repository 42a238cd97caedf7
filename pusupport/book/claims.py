"""How the book judges a claim against a page's results files. Each claim belongs to its
experiment (:mod:`pusupport.book.experiments`); :mod:`pusupport.book.registry` collects them.

A claim that a method beats a baseline is judged on the per-seed paired difference
(:mod:`pusupport.book.verdicts`): reproduced when its 95 % interval lies on the paper's
side of zero, contradicted when on the other, inconclusive at this scale otherwise.
Other claims keep their own checks: reproduced when observed, inconclusive if not.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd

from .verdicts import INCONCLUSIVE, NOT_RUN, REPRODUCED, paired_difference, verdict

#: Epochs averaged for the damped comparison (the mean test error of the last k epochs).
LAST_K = 3


@dataclass(frozen=True)
class Outcome:
    """What a check measured, its verdict, and for paired claims the seeds and interval."""

    measured: str
    verdict: str
    seeds: int | None = None
    difference: float | None = None
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Claim:
    """A claim, how to judge it (``check(summary, history)`` returns an :class:`Outcome`),
    and the data set whose page tests it (None: the experiment's only page)."""

    claim: str
    check: Callable[[dict, pd.DataFrame], Outcome]
    dataset: str | None = None


def observed(text: str, ok: bool) -> Outcome:
    return Outcome(text, REPRODUCED if ok else INCONCLUSIVE)


def lower_error(method: str, baseline: str) -> Callable:
    """Paired by seed: ``method`` − ``baseline`` on the final test error (the verdict) and on
    the mean test error of the last :data:`LAST_K` epochs (reported beside it)."""
    def check(summary, history):
        rows = history.dropna(subset=["test_error"])
        last_k = sorted(rows.epoch.unique())[-LAST_K:]
        final = rows[rows.epoch == last_k[-1]].groupby(["method", "seed"]).test_error.mean()
        damped = rows[rows.epoch.isin(last_k)].groupby(["method", "seed"]).test_error.mean()
        seeds = sorted(set(final[method].index) & set(final[baseline].index))
        p = paired_difference(final[method][seeds], final[baseline][seeds])
        q = paired_difference(damped[method][seeds], damped[baseline][seeds])
        text = (f"{method} − {baseline}, final test error: {p.describe()}; mean of the last "
                f"{len(last_k)} evaluated epochs: {q.interval()}")
        return Outcome(text, verdict(p), p.n, p.mean, p.low, p.high)
    return check


def _interval(o: Outcome) -> str:
    if o.low is None:
        return "—"
    return "single seed: no interval" if o.seeds == 1 else f"[{o.low:+.4f}, {o.high:+.4f}]"


def reproduction_table(output_dir, claims) -> pd.DataFrame:
    """One row per claim of ``claims`` ((claim, results folder) pairs): profile, seeds,
    paired difference and its 95 % interval (for comparisons), the verdict, and what was
    measured."""
    rows = []
    for c, name in claims:
        folder = Path(output_dir) / name
        summary_path = folder / "summary.json"
        summary = json.loads(summary_path.read_text()) if summary_path.exists() else None
        if summary is None or summary.get("status") != "run":
            reason = "page not executed" if summary is None else summary.get("reason", "not run")
            outcome, profile = Outcome(f"— ({reason})", NOT_RUN), (summary or {}).get("profile", "—")
        else:
            history = pd.read_csv(folder / "history.csv")
            outcome, profile = c.check(summary, history), summary["profile"]
            if outcome.seeds is None and "seed" in history:
                outcome = Outcome(**{**outcome.__dict__, "seeds": int(history.seed.nunique())})
        rows.append({"claim": c.claim, "profile": profile,
                     "seeds": "—" if outcome.seeds is None else outcome.seeds,
                     "paired difference": "—" if outcome.difference is None else f"{outcome.difference:+.4f}",
                     "95 % interval": _interval(outcome), "verdict": outcome.verdict,
                     "measured": outcome.measured})
    return pd.DataFrame(rows)


def verdict_text(output_dir, claims) -> str:
    """Markdown: each of ``claims`` ((claim, results folder) pairs), what was measured and
    the verdict — a page's row(s) of the reproduction summary."""
    if not claims:
        return ""
    table = reproduction_table(output_dir, claims)
    return "\n\n".join(f"**Claim:** {r['claim']}  \n**Measured ({r['profile']} profile, "
                        f"{r['seeds']} seed{'' if r['seeds'] == 1 else 's'}):** {r['measured']}  \n**Verdict:** {r['verdict']}"
                        for r in table.to_dict("records"))
