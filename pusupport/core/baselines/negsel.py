"""Negative selection — a counterfactual of the paper's (§1, §3): the classical
sample-selection approach, turned round. From ``select_from`` on, each epoch the
``n_select`` smallest-loss U points (the most confidently negative) join a set N for good,
and N counts again as negatives (:func:`~pusupport.core.risks.negative_selection_risk`).
Everything else is aaPU's: the selection machinery, the schedule, the logistic nnPU risk.
"""
from __future__ import annotations

from functools import partial

from ..methods import Method, grow_selection, register
from ..risks import negative_selection_risk

#: aaPU's hook with the smallest losses instead of the largest.
grow_negatives = partial(grow_selection, smallest=True)


register(Method("negsel", "Negative selection", "nnPU plus a growing set of the smallest-loss U "
                "points counted again as negatives (the counterpart the paper argues against)",
                color="#bcbd22",
                risk=lambda b: negative_selection_risk(b.g_p, b.g_u, b.g_s, b.prior, b.config.loss,
                                                       b.config.beta, b.config.gamma, b.s_mask),
                selects=True, end_epoch=grow_negatives, usable=False,
                source="this book: the counterfactual the paper argues against, at aaPU's "
                       "n_select and select_from"))
