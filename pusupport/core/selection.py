"""aaPU's sample selection (paper Algorithm 1, lines 7–9).

After an epoch, every unlabelled point is scored as a negative, ℓ(−g(x)); the
``n_select`` largest-loss points among U \\ X_p join the selected set S for good.
"""
from __future__ import annotations

import torch

from .losses import get_loss
from .models import predict


def negative_losses(scores: torch.Tensor, loss: str = "logistic") -> torch.Tensor:
    """ℓ(−g(x)) of scores g(x): how badly each point fits as a negative (line 7)."""
    if torch.isnan(scores).any():
        raise FloatingPointError(
            "the model produced NaN scores on U: training diverged — lower the "
            "learning rate or check the inputs for NaN")
    return get_loss(loss)(-scores)


def unlabeled_losses(model: torch.nn.Module, x_u, loss: str = "logistic",
                     batch_size: int = 4096, amp: bool = False) -> torch.Tensor:
    """ℓ(−g(x)) for every row of ``x_u``, computed in eval mode without gradients.

    The model's train/eval mode is restored afterwards.
    """
    return negative_losses(predict(model, x_u, batch_size, amp), loss)


def top_losses(losses: torch.Tensor, n_select: int, eligible: torch.Tensor) -> torch.Tensor:
    """Indices of the ``n_select`` largest losses among ``eligible`` points.

    Ties are broken deterministically: the lower index wins.
    """
    if n_select < 0:
        raise ValueError(f"n_select must be >= 0, got {n_select}")
    masked = torch.where(eligible, losses, torch.full_like(losses, -float("inf")))
    order = torch.sort(masked, descending=True, stable=True).indices
    n = min(n_select, int(eligible.sum()))
    return order[:n]


class SelectedSet:
    """The growing set S ⊂ U: extra positives in aaPU (extra negatives in negative selection).

    ``labeled``: mask over U of points that are labelled P (line 8 excludes them).
    ``allow_repick``: the paper's literal rule (True) picks the top ``n_select``
    among all of U \\ X_p, so a point already in S may be picked again and S grows
    by at most ``n_select``; False never re-picks S, so S grows by exactly
    ``n_select`` while U lasts.
    ``true_labels``: hidden labels of U (+1/−1), for diagnostics only.
    """

    def __init__(self, n_unlabeled: int, labeled: torch.Tensor | None = None,
                 true_labels: torch.Tensor | None = None, allow_repick: bool = True):
        device = labeled.device if labeled is not None else None
        self.labeled = (labeled if labeled is not None
                        else torch.zeros(n_unlabeled, dtype=torch.bool, device=device))
        self.mask = torch.zeros(n_unlabeled, dtype=torch.bool, device=self.labeled.device)
        self.true_labels = true_labels
        self.allow_repick = allow_repick
        self.picks: list[dict] = []

    @property
    def indices(self) -> torch.Tensor:
        """Indices into U of the points in S, in increasing order."""
        return self.mask.nonzero().reshape(-1)

    def __len__(self) -> int:
        return int(self.mask.sum())

    @property
    def purity(self) -> float:
        """True-positive fraction of S (NaN when S is empty or labels are unknown)."""
        if self.true_labels is None or len(self) == 0:
            return float("nan")
        return float((self.true_labels[self.mask] > 0).float().mean())

    def update(self, losses: torch.Tensor, n_select: int, epoch: int,
               among: torch.Tensor | None = None, smallest: bool = False) -> torch.Tensor:
        """S ← S ∪ top-``n_select``(losses) (only ``among`` U's points, a mask, if given;
        the ``smallest`` losses instead of the largest: negative selection); returns the
        indices picked this epoch. Unscored rows (loss −inf) are never picked."""
        eligible = ~self.labeled if self.allow_repick else ~(self.labeled | self.mask)
        if among is not None:
            eligible = eligible & among
        eligible = eligible & torch.isfinite(losses)
        picked = top_losses(-losses if smallest else losses, n_select, eligible)
        new = ~self.mask[picked]
        self.mask[picked] = True
        truth = (self.true_labels[picked].tolist() if self.true_labels is not None
                 else [None] * len(picked))
        for rank, (i, is_new, y, l) in enumerate(zip(picked.tolist(), new.tolist(), truth,
                                                     losses[picked].tolist())):
            self.picks.append({"epoch": epoch, "rank": rank, "index": i, "new": is_new,
                               "loss": l, "true_label": y})
        return picked

    def state_dict(self) -> dict:
        return {"mask": self.mask.clone(), "picks": list(self.picks)}

    def load_state_dict(self, state: dict) -> None:
        self.mask = state["mask"].to(self.mask.device)
        self.picks = list(state["picks"])


def top_k_purity(losses: torch.Tensor, true_labels: torch.Tensor, k: int,
                 eligible: torch.Tensor | None = None) -> float:
    """True-positive fraction of the ``k`` largest-loss points (diagnostics only)."""
    eligible = torch.ones_like(losses, dtype=torch.bool) if eligible is None else eligible
    top = top_losses(losses, k, eligible)
    return float((true_labels[top.cpu()] > 0).float().mean()) if len(top) else float("nan")
