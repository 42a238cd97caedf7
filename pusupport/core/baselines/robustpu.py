"""Robust-PU (Zhu, Wang et al., KDD 2023, "Robust positive-unlabeled learning via noise
negative sample self-correction"): warm up with nnPU, then train on U taken as negative,
each point weighted by how easy it is — the sample-selection counterpart of aaPU, which
moves hard U points to P instead of weighing them down.

After each epoch from ``select_from − 1`` on, every U point gets the Welsch weight
w = exp(−ℓ/λ²) of its logistic loss as a negative, ℓ = ln(1 + e^{g}), and λ grows linearly
from 0.1 to 2.0 over 10 epochs (the official code's argument defaults, not its README's
tuned runs; its hardness, scheduler and self-paced weights). The loss is then the weighted logistic (binary cross-entropy) loss of
P as +1 and U as −1, averaged over the batch's rows. Adaptations, said where the page runs
it: the warm-up is this loop's first ``select_from − 1`` epochs (officially 400 separate
pre-training epochs), with nnPU's sigmoid loss as the official pre-training; a labelled
point's weight comes from its score in the current batch (officially from the epoch's
start); no early stopping on a labelled validation set — the final epoch is reported; P : U
is the data's (the official experiments use 1 : 2; unweighted, many more U than P can pull the
threshold toward calling every point negative).
"""
from __future__ import annotations

import torch

from ..losses import logistic_loss
from ..methods import Batch, EpochEnd, Method, register
from ..risks import Risk, nnpu_risk

START, STOP, GROW_EPOCHS = 0.1, 2.0, 10


def welsch(loss: torch.Tensor, lam) -> torch.Tensor:
    """The Welsch self-paced weight exp(−ℓ/λ²): 1 for an easy point, → 0 for a hard one."""
    return torch.exp(-loss / lam ** 2)


def lam_at(episode: int) -> float:
    """λ after ``episode`` weighted epochs: linear from 0.1 to 2.0 over 10, then 2.0."""
    return min(START + (STOP - START) / GROW_EPOCHS * episode, STOP)


def robust_risk(b: Batch) -> Risk:
    if not bool(b.state["weighting"][0]):           # the warm-up: nnPU
        return nnpu_risk(b.g_p, b.g_u, b.prior, "sigmoid", b.config.beta, b.config.gamma)
    lam = b.state["lam"][:, None]
    w_p = welsch(logistic_loss(b.g_p.detach()), lam)
    w_u = b.state["w_u"].gather(1, b.index_u)
    n = b.g_p.shape[-1] + b.g_u.shape[-1]
    positive = (w_p * logistic_loss(b.g_p)).sum(-1) / n
    negative = (w_u * logistic_loss(-b.g_u)).sum(-1) / n
    total = positive + negative
    return Risk(total.detach(), total, positive.detach(), negative.detach(),
                torch.zeros_like(total, dtype=torch.bool))


def reweigh(end: EpochEnd) -> None:
    """From the end of epoch ``select_from − 1``: U's weights and λ for the next epoch."""
    if end.epoch < end.config.select_from - 1:
        return
    lam = lam_at(int(end.state["episode"][0]))
    losses = end.u_losses().clamp(min=0.0)          # a dry run leaves rows unscored (−inf)
    end.state["w_u"].copy_(welsch(losses.to(end.state["w_u"].dtype), lam))
    end.state["lam"].fill_(lam)
    end.state["episode"] += 1
    end.state["weighting"].fill_(1)


def _state(n_u, seeds, device):
    K = len(seeds)
    return {"w_u": torch.ones(K, n_u, device=device), "lam": torch.full((K,), START, device=device),
            "episode": torch.zeros(K, dtype=torch.int64, device=device),
            "weighting": torch.zeros(K, dtype=torch.int64, device=device)}


register(Method("robustpu", "Robust-PU", "nnPU warm-up, then U as negatives under Welsch "
                "weights, λ raised each epoch (Zhu et al., 2023)", color="#bcbd22",
                risk=robust_risk, init_state=_state, end_epoch=reweigh))
