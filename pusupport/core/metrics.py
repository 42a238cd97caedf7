"""Test metrics computed where the scores are (no copy to the host per epoch)."""
from __future__ import annotations

import torch


def zero_one_error(scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Fraction of points where sign(g) (g > 0 ⇒ +1) disagrees with the ±1 label, over the last dim."""
    return wrong_rows(scores, labels).double().mean(-1)


def wrong_rows(scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Which points :func:`zero_one_error` counts as errors (bool, the shape of ``scores``)."""
    return (scores > 0) != (labels > 0)


def pack_rows(wrong: torch.Tensor) -> str:
    """One member's per-point errors (1-D bool) as "N:hex", 4 points a hex digit, first point
    the highest bit: a test set's errors in one history cell (7,532 points: 1,888 characters)."""
    bits = torch.nn.functional.pad(wrong.to("cpu", torch.uint8), (0, -len(wrong) % 4)).view(-1, 4)
    digits = (bits * torch.tensor([8, 4, 2, 1], dtype=torch.uint8)).sum(1).tolist()
    return f"{len(wrong)}:" + "".join("%x" % v for v in digits)


def unpack_rows(packed: str) -> list[bool]:
    """The per-point errors :func:`pack_rows` packed."""
    n, digits = packed.split(":")
    return [bool(int(c, 16) >> (3 - i) & 1) for c in digits for i in range(4)][:int(n)]


def roc_auc(scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """ROC AUC of 1-D ``scores`` for ±1 ``labels`` (Mann–Whitney U, ties counted ½).

    Equals scikit-learn's ``roc_auc_score``; NaN when only one class is present.
    """
    positive = labels > 0
    n_pos = positive.sum().double()
    n_neg = len(labels) - n_pos
    _, inverse, counts = torch.unique(scores, return_inverse=True, return_counts=True)
    upper = counts.cumsum(0).double()
    mean_rank = upper - (counts.double() - 1) / 2            # 1-based average rank of each value
    rank_sum = mean_rank[inverse][positive].sum()
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def average_precision(scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Average precision of 1-D ``scores`` for ±1 ``labels``: Σ (R_k − R_{k−1})·P_k over
    the distinct score thresholds, highest first (tied scores enter together).

    Equals scikit-learn's ``average_precision_score``; NaN when no point is positive.
    """
    order = torch.argsort(scores, descending=True, stable=True)
    ordered, positive = scores[order], (labels[order] > 0).double()
    true_pos, false_pos = positive.cumsum(0), (1 - positive).cumsum(0)
    last = torch.ones_like(ordered, dtype=torch.bool)          # the end of each tie group
    last[:-1] = ordered[1:] != ordered[:-1]
    true_pos, false_pos = true_pos[last], false_pos[last]
    recall = true_pos / true_pos[-1]
    gained = torch.diff(recall, prepend=recall.new_zeros(1))
    return (gained * true_pos / (true_pos + false_pos)).sum()
