"""Oracle aaPU — a counterfactual of the paper's, not a method one can use: aaPU whose S is
grown from U's true positives only (each epoch the n_select largest-loss ones), with
aaPU's risk and schedule. It bounds what perfect selection could give aaPU; it reads U's
hidden labels, so it never stands beside the methods a practitioner can run.
"""
from __future__ import annotations

from ..methods import EpochEnd, Method, get_method, register


def grow_from_true_positives(end: EpochEnd) -> None:
    """aaPU's hook with the candidates restricted to U's true positives."""
    cfg = end.config
    if not cfg.selects_at(end.epoch):
        return
    losses = end.u_losses()
    for k, selected in enumerate(end.selected):
        if selected.true_labels is None:
            raise ValueError("oracle aaPU needs U's true labels (u_truth): it is a "
                             "counterfactual for data whose U labels are known")
        selected.update(losses[k], cfg.n_select, end.epoch, among=selected.true_labels > 0)


register(Method("aapu_oracle", "aaPU, oracle S", "aaPU whose S holds only true positives of U "
                "(a counterfactual: reads U's labels)", color="#ff9896",
                risk=get_method("aapu").risk, selects=True, end_epoch=grow_from_true_positives,
                usable=False))
