"""The paper's claims that the book tests, checked against the pages' results files.

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
    """A claim, the results folder that tests it, and how to judge it:
    ``check(summary, history)`` returns an :class:`Outcome`."""

    claim: str
    folder: str
    check: Callable[[dict, pd.DataFrame], Outcome]


def _observed(text: str, ok: bool) -> Outcome:
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


def _negative_risk(summary, history):
    low = history.groupby("method").risk_negative.min()
    text = f"lowest R̂_n per epoch — uPU: {low['upu']:.3f}, nnPU: {low['nnpu']:.3f}"
    return _observed(text, low["upu"] < 0 and low["nnpu"] > low["upu"] / 2)


def _memorisation(summary, history):
    worst = history[history.noise == history.noise.max()]
    mean = worst.groupby("epoch")[["train_accuracy", "val_accuracy"]].mean()
    best, final = mean.val_accuracy.max(), mean.val_accuracy.iloc[-1]
    text = (f"{worst.noise.max():.0%} noise: validation accuracy peaks at {best:.3f} "
            f"(epoch {mean.val_accuracy.idxmax()}), ends at {final:.3f}; "
            f"training accuracy on noisy labels ends at {mean.train_accuracy.iloc[-1]:.3f}")
    return _observed(text, best - final > 0.01)


def _purity(summary, history):
    rows = history[history.method == "nnPU, logistic loss"].dropna(subset=["top_k_purity"])
    last = rows.loc[rows.epoch.idxmax()]
    text = (f"nnPU (logistic), epoch {int(last.epoch)}: top-k purity {last.top_k_purity:.1%} "
            f"vs π = {summary['prior']:.3f}")
    return _observed(text, last.top_k_purity > summary["prior"])


def _prior_sensitivity(summary, history):
    last = history[history.epoch == history.epoch.max()]
    err = last.groupby(["method", "prior_label"]).test_error.mean().unstack()
    scaled = [c for c in err.columns if c.startswith("×")]
    cost = {m: float((err.loc[m, scaled] - err.loc[m, "×1"]).max()) for m in err.index}
    text = (f"worst extra test error with π off by up to 20 %: aaPU {cost['aapu']:+.4f}, "
            f"nnPU {cost['nnpu']:+.4f}; with the BBE estimate: aaPU "
            f"{err.loc['aapu', 'BBE estimate']:.4f}, nnPU {err.loc['nnpu', 'BBE estimate']:.4f}")
    return _observed(text, cost["aapu"] <= cost["nnpu"] + 0.01)


CLAIMS = [
    Claim("uPU's negative risk goes below zero with a flexible model; nnPU's stays near zero (Eqs. 8–9)",
          "formulation", _negative_risk),
    Claim("More labelled positives help nnPU a lot (CIFAR-10, +7,000 P)", "adding_p",
          lower_error("nnpu+p", "nnpu")),
    Claim("Memorisation: with label noise, validation accuracy peaks early, then falls (Fig. 2)",
          "memorization", _memorisation),
    Claim("Large-loss U points (scored as negatives) are mostly positive (Fig. 3)", "histograms",
          _purity),
    Claim("Using S only in the positive risk beats adding S to P everywhere (§3.3)",
          "biased_selection", lower_error("aapu", "naive")),
    Claim("Synthetic data (§4.1): aaPU has a lower test error than nnPU", "synthetic",
          lower_error("aapu", "nnpu")),
    Claim("CIFAR-10: aaPU has a lower test error than nnPU (Table 2)", "real_cifar10",
          lower_error("aapu", "nnpu")),
    Claim("CIFAR-100: aaPU has a lower test error than nnPU (Table 2)", "real_cifar100",
          lower_error("aapu", "nnpu")),
    Claim("20News: aaPU has a lower test error than nnPU (Table 2)", "real_20news",
          lower_error("aapu", "nnpu")),
    Claim("Fashion-MNIST (beyond the paper): aaPU has a lower test error than nnPU",
          "real_fashion_mnist", lower_error("aapu", "nnpu")),
    Claim("Beyond the paper: a misspecified π (±20 %) costs aaPU no more than nnPU (synthetic)",
          "prior", _prior_sensitivity),
]


def _interval(o: Outcome) -> str:
    if o.low is None:
        return "—"
    return "single seed: no interval" if o.seeds == 1 else f"[{o.low:+.4f}, {o.high:+.4f}]"


def reproduction_table(output_dir, claims=CLAIMS) -> pd.DataFrame:
    """One row per claim: profile, seeds, paired difference and its 95 % interval (for
    comparisons), the verdict, and what was measured."""
    rows = []
    for c in claims:
        folder = Path(output_dir) / c.folder
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


def verdict_for(output_dir, folder: str) -> str:
    """Markdown: the paper's claim(s) tested by the page writing ``output_dir/folder``,
    what was measured and the verdict — the page's row(s) of the reproduction summary."""
    claims = [c for c in CLAIMS if c.folder == folder]
    if not claims:
        return ""
    table = reproduction_table(output_dir, claims)
    return "\n\n".join(f"**Claim:** {r['claim']}  \n**Measured ({r['profile']} profile, "
                        f"{r['seeds']} seed{'' if r['seeds'] == 1 else 's'}):** {r['measured']}  \n**Verdict:** {r['verdict']}"
                        for r in table.to_dict("records"))
