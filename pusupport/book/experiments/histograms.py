"""The loss histograms of U (the aaPU paper's Fig. 3): U's losses as negatives at a few
epochs of nnPU and uPU training, and the purity of the largest-loss points."""
from __future__ import annotations

import math

import pandas as pd

from ...core.problem import PUData
from ...core.selection import top_k_purity
from ..claims import Claim, observed
from ..experiment import OPT_INT, TRAINING, Experiment, RunSpec
from ..paper import CPU_CIFAR_SHORT

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..page import Page

#: The runs of Fig. 3, one seed each: title → (method, loss, histogram range).
SIGMOID_NNPU, SIGMOID_UPU, LOGISTIC_NNPU = "nnPU, sigmoid loss", "uPU, sigmoid loss", "nnPU, logistic loss"
SETTINGS = {SIGMOID_NNPU: ("nnpu", "sigmoid", (0.0, 1.0)), SIGMOID_UPU: ("upu", "sigmoid", (0.0, 1.0)),
            LOGISTIC_NNPU: ("nnpu", "logistic", None)}


def plan(s) -> list[RunSpec]:
    return [RunSpec(title, method, {"train": dict(loss=loss, selection_loss=loss,
                                                  record_u_losses=s.page.snapshot_epochs)},
                    seeds=1, stacks=False, values={"range": value_range}, keeps=("u_losses",))
            for title, (method, loss, value_range) in SETTINGS.items()]


def run_loss_snapshots(page: Page, data: PUData):
    """Train each run of the plan and keep U's losses at the snapshot epochs. Returns
    (panels for :func:`~pusupport.book.plots.loss_histograms`, history with the top-k
    purity per snapshot)."""
    top_k = page.settings.page.top_k
    panels, rows = {}, []
    results = page.results(page.plan(), lambda seed: data)
    for spec in page.plan():
        result = results[spec.label, page.seeds[0]]
        panels[spec.label] = {"losses": result.u_losses, "range": spec.values["range"]}
        h = result.history.assign(method=spec.label)
        for epoch, losses in result.u_losses.items():
            n = len(losses)                          # U's first n rows (all but in a dry run)
            h.loc[h.epoch == epoch, "top_k_purity"] = top_k_purity(losses, data.u_truth[:n], top_k,
                                                                   ~data.u_in_p[:n])
        rows.append(h)
    return panels, pd.concat(rows, ignore_index=True)


def purity(summary, history):
    """Reproduced when nnPU (logistic)'s top-k purity at its last snapshot is above one half
    by more than two binomial standard errors (k points), contradicted when below it by as
    much; π is printed beside it (a random pick's purity)."""
    rows = history[history.method == LOGISTIC_NNPU].dropna(subset=["top_k_purity"])
    last = rows.loc[rows.epoch.idxmax()]
    k, share = summary["top_k"], float(last.top_k_purity)
    se = math.sqrt(max(share * (1 - share), 0.25 / k) / k)      # never 0 at a purity of 0 or 1
    text = (f"nnPU (logistic), epoch {int(last.epoch)}: top-{k} purity {share:.1%} ± {2 * se:.1%} "
            f"(2 SE) vs one half; π = {summary['prior']:.3f}")
    return observed(text, share - 2 * se > 0.5, share + 2 * se < 0.5)


EXPERIMENT = Experiment(
    "histograms", dataset="cifar10",
    changes={
        "paper": {"page": dict(snapshot_epochs=[10, 50, 200], top_k=150, n_seeds=1)},
        "cpu": {**CPU_CIFAR_SHORT, "page": dict(snapshot_epochs=[2, 5, 10], top_k=300, n_seeds=1)},
        "smoke": {"page": dict(snapshot_epochs=[1, 2, 3], top_k=20, n_seeds=1)}},
    parameters={**TRAINING, "top_k": OPT_INT}, plan=plan,
    claims=(Claim("Large-loss U points (scored as negatives) are mostly positive (Fig. 3)", purity),))
