"""Oracle aaPU — a counterfactual of the paper's, not a method one can use: aaPU whose S is
grown from U's true positives only (each epoch the n_select largest-loss ones), with
aaPU's risk and schedule. It bounds what perfect selection could give aaPU; it reads U's
hidden labels, so it never stands beside the methods a practitioner can run.
"""
from __future__ import annotations

from functools import partial

from ..methods import Method, get_method, grow_selection, register


def true_positives(selected):
    """U's true positives, the oracle's only candidates."""
    if selected.true_labels is None:
        raise ValueError("oracle aaPU needs U's true labels (u_truth): it is a "
                         "counterfactual for data whose U labels are known")
    return selected.true_labels > 0


#: aaPU's hook with the candidates restricted to U's true positives.
grow_from_true_positives = partial(grow_selection, among=true_positives)


register(Method("aapu_oracle", "aaPU with an oracle S", "aaPU whose S holds only true positives of U "
                "(a counterfactual: reads U's labels)", color="#ff9896",
                risk=get_method("aapu").risk, selects=True, end_epoch=grow_from_true_positives,
                usable=False, before_selection="nnpu",
                source="this book: the bound of perfect selection, at aaPU's settings"))
