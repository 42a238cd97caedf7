"""The paper's claims that the book tests, checked against the pages' results files."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd

from .records import compare


@dataclass(frozen=True)
class Claim:
    """A claim, the results folder that tests it, and how to judge it.

    ``check(summary, history)`` returns (what was measured, reproduced?).
    """

    claim: str
    folder: str
    check: Callable[[dict, pd.DataFrame], tuple[str, bool]]


def lower_error(method: str, baseline: str) -> Callable:
    """Reproduced when ``method``'s final test error beats ``baseline``'s (see records.compare)."""
    def check(summary, history):
        c = compare(summary, method, baseline)
        return c["text"], c["verdict"] == "better"
    return check


def _negative_risk(summary, history):
    low = history.groupby("method").risk_negative.min()
    text = f"lowest R̂_n per epoch — uPU: {low['upu']:.3f}, nnPU: {low['nnpu']:.3f}"
    return text, low["upu"] < 0 and low["nnpu"] > low["upu"] / 2


def _memorisation(summary, history):
    worst = history[history.noise == history.noise.max()]
    mean = worst.groupby("epoch")[["train_accuracy", "val_accuracy"]].mean()
    best, final = mean.val_accuracy.max(), mean.val_accuracy.iloc[-1]
    text = (f"{worst.noise.max():.0%} noise: validation accuracy peaks at {best:.3f} "
            f"(epoch {mean.val_accuracy.idxmax()}), ends at {final:.3f}; "
            f"training accuracy on noisy labels ends at {mean.train_accuracy.iloc[-1]:.3f}")
    return text, best - final > 0.01


def _purity(summary, history):
    rows = history[history.method == "nnPU, logistic loss"].dropna(subset=["top_k_purity"])
    last = rows.loc[rows.epoch.idxmax()]
    text = (f"nnPU (logistic), epoch {int(last.epoch)}: top-k purity {last.top_k_purity:.1%} "
            f"vs π = {summary['prior']:.3f}")
    return text, last.top_k_purity > summary["prior"]


def _prior_sensitivity(summary, history):
    last = history[history.epoch == history.epoch.max()]
    err = last.groupby(["method", "prior_label"]).test_error.mean().unstack()
    scaled = [c for c in err.columns if c.startswith("×")]
    cost = {m: float((err.loc[m, scaled] - err.loc[m, "×1"]).max()) for m in err.index}
    text = (f"worst extra test error with π off by up to 20 %: aaPU {cost['aapu']:+.4f}, "
            f"nnPU {cost['nnpu']:+.4f}; with the BBE estimate: aaPU "
            f"{err.loc['aapu', 'BBE estimate']:.4f}, nnPU {err.loc['nnpu', 'BBE estimate']:.4f}")
    return text, cost["aapu"] <= cost["nnpu"] + 0.01


CLAIMS = [
    Claim("uPU's negative risk goes below zero with a flexible model; nnPU's does not (Eqs. 8–9)",
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


def reproduction_table(output_dir, claims=CLAIMS) -> pd.DataFrame:
    """One row per claim: what was measured, at which profile, and the verdict."""
    rows = []
    for c in claims:
        folder = Path(output_dir) / c.folder
        summary_path = folder / "summary.json"
        summary = json.loads(summary_path.read_text()) if summary_path.exists() else None
        if summary is None or summary.get("status") != "run":
            reason = "page not executed" if summary is None else summary.get("reason", "not run")
            rows.append({"claim": c.claim, "measured": f"— ({reason})", "profile":
                         (summary or {}).get("profile", "—"), "verdict": "not run here"})
            continue
        history = pd.read_csv(folder / "history.csv")
        measured, ok = c.check(summary, history)
        rows.append({"claim": c.claim, "measured": measured, "profile": summary["profile"],
                     "verdict": "reproduced" if ok else "not reproduced"})
    return pd.DataFrame(rows)


def verdict_for(output_dir, folder: str) -> str:
    """Markdown: the paper's claim(s) tested by the page writing ``output_dir/folder``,
    what was measured and the verdict — the page's row(s) of the reproduction summary."""
    claims = [c for c in CLAIMS if c.folder == folder]
    if not claims:
        return ""
    table = reproduction_table(output_dir, claims)
    return "\n\n".join(f"**Claim:** {r.claim}  \n**Measured ({r.profile} profile):** {r.measured}  \n"
                       f"**Verdict:** {r.verdict}" for r in table.itertuples())
