"""The loss histograms of U (the aaPU paper's Fig. 3): U's losses as negatives at a few
epochs of nnPU and uPU training, and the purity of the largest-loss points."""
from __future__ import annotations

import pandas as pd

from ...core.problem import PUData
from ...core.selection import top_k_purity
from ...core.training import train

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..pages import Page

#: The settings of Fig. 3: (method, loss, histogram range).
HISTOGRAM_SETTINGS = {"nnPU, sigmoid loss": ("nnpu", "sigmoid", (0.0, 1.0)),
                      "uPU, sigmoid loss": ("upu", "sigmoid", (0.0, 1.0)),
                      "nnPU, logistic loss": ("nnpu", "logistic", None)}


def run_loss_snapshots(page: Page, data: PUData):
    """Train each setting and keep U's losses at the snapshot epochs. Returns (panels for
    :func:`~pusupport.book.plots.loss_histograms`, history with the top-k purity per snapshot)."""
    snapshots, top_k = page.settings.page.snapshot_epochs, page.settings.page.top_k
    panels, rows = {}, []
    for title, (method, loss, value_range) in HISTOGRAM_SETTINGS.items():
        result = train(data, page.train_config(method, loss=loss, selection_loss=loss,
                                               record_u_losses=snapshots))
        panels[title] = {"losses": result.u_losses, "range": value_range}
        h = result.history.assign(method=title)
        for epoch, losses in result.u_losses.items():
            n = len(losses)                          # U's first n rows (all but in a dry run)
            h.loc[h.epoch == epoch, "top_k_purity"] = top_k_purity(losses, data.u_truth[:n], top_k,
                                                                   ~data.u_in_p[:n])
        rows.append(h)
    return panels, pd.concat(rows, ignore_index=True)
