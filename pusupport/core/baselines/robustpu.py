"""Robust-PU (Zhu, Wang et al., KDD 2023, "Robust positive-unlabeled learning via noise
negative sample self-correction"): warm up with nnPU, then train on U taken as negative,
each point weighted by how easy it is — the sample-selection counterpart of aaPU, which
moves hard U points to P instead of weighing them down.

After each epoch from ``select_from − 1`` on, every U point gets the Welsch weight
w = exp(−ℓ/λ²) of its logistic loss as a negative, ℓ = ln(1 + e^{g}), and λ grows linearly
from 0.1 to 2.0 over 10 epochs (the official code's argument defaults; its hardness,
scheduler and self-paced weights). The loss is then the weighted logistic (binary
cross-entropy) loss of P as +1 and U as −1, each class's term weighted as in a batch of the
authors' P : U (:class:`Settings`), and the run ends after the authors' largest number of
weighted epochs (``recipe``). Adaptations, said where the page runs it: the warm-up is this
loop's first ``select_from − 1`` epochs (officially 400 separate pre-training epochs), with
nnPU's sigmoid loss as the official pre-training; a labelled point's weight comes from its
score in the current batch (officially from the epoch's start); no early stopping on a
labelled validation set.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from ..losses import logistic_loss
from ..methods import Batch, EpochEnd, Method, register
from ..risks import Risk, nnpu_risk


@dataclass(frozen=True)
class Settings:
    """Robust-PU's own settings (woriazzc/Robust-PU main.py): λ from ``start`` to ``stop``
    over ``grow_epochs`` weighted epochs (L595–608); P : U as ``class_ratio`` (their
    experiments' 2,000 : 4,000, L476–477; None: the data's own); at most ``episodes``
    weighted epochs (their ≤ 100, L567)."""

    start: float = 0.1
    stop: float = 2.0
    grow_epochs: int = 10
    class_ratio: tuple | None = (1, 2)
    episodes: int = 100

    def __post_init__(self):
        if not (0 < self.start <= self.stop and isinstance(self.grow_epochs, int) and self.grow_epochs >= 1):
            raise ValueError(f"Robust-PU needs 0 < start <= stop and grow_epochs >= 1, got start="
                             f"{self.start}, stop={self.stop}, grow_epochs={self.grow_epochs}")
        ratio = self.class_ratio
        if ratio is not None and not (len(ratio) == 2 and all(r > 0 for r in ratio)):
            raise ValueError(f"class_ratio={ratio!r}: give P : U as two positive numbers, e.g. "
                             "(1, 2), or None for the data's own proportion")
        if not (isinstance(self.episodes, int) and self.episodes >= 1):
            raise ValueError(f"episodes={self.episodes!r}: give a whole number of weighted epochs >= 1")


def welsch(loss: torch.Tensor, lam) -> torch.Tensor:
    """The Welsch self-paced weight exp(−ℓ/λ²): 1 for an easy point, → 0 for a hard one."""
    return torch.exp(-loss / lam ** 2)


def lam_at(episode: int, own: Settings = Settings()) -> float:
    """λ after ``episode`` weighted epochs: linear from ``start`` to ``stop`` over
    ``grow_epochs``, then ``stop``."""
    return min(own.start + (own.stop - own.start) / own.grow_epochs * episode, own.stop)


def class_weights(n_p: int, n_u: int, ratio) -> tuple[float, float]:
    """The weight of one P and one U row in a batch of ``n_p`` and ``n_u`` rows whose mean
    loss weighs the classes as a batch of P : U = ``ratio`` would (None: every row 1/n)."""
    if ratio is None:
        return 1 / (n_p + n_u), 1 / (n_p + n_u)
    a, b = ratio
    return (a / (a + b) / n_p if n_p else 0.0), (b / (a + b) / n_u if n_u else 0.0)


def recipe(cfg):
    """The authors' recipe in a run's shared settings: the warm-up, then at most ``episodes``
    weighted epochs."""
    return replace(cfg, epochs=min(cfg.epochs, cfg.select_from - 1 + cfg.own.episodes))


def robust_risk(b: Batch) -> Risk:
    if not bool(b.state["weighting"][0]):           # the warm-up: nnPU
        return nnpu_risk(b.g_p, b.g_u, b.prior, "sigmoid", b.config.beta, b.config.gamma)
    lam = b.state["lam"][:, None]
    w_p = welsch(logistic_loss(b.g_p.detach()), lam)
    w_u = b.state["w_u"].gather(1, b.index_u)
    per_p, per_u = class_weights(b.g_p.shape[-1], b.g_u.shape[-1], b.config.own.class_ratio)
    positive = (w_p * logistic_loss(b.g_p)).sum(-1) * per_p
    negative = (w_u * logistic_loss(-b.g_u)).sum(-1) * per_u
    total = positive + negative
    return Risk(total.detach(), total, positive.detach(), negative.detach(),
                torch.zeros_like(total, dtype=torch.bool))


def reweigh(end: EpochEnd) -> None:
    """From the end of epoch ``select_from − 1``: U's weights and λ for the next epoch."""
    if end.epoch < end.config.select_from - 1:
        return
    lam = lam_at(int(end.state["episode"][0]), end.config.own)
    losses = end.u_losses().clamp(min=0.0)          # a dry run leaves rows unscored (−inf)
    end.state["w_u"].copy_(welsch(losses.to(end.state["w_u"].dtype), lam))
    end.state["lam"].fill_(lam)
    end.state["episode"] += 1
    end.state["weighting"].fill_(1)


def _state(n_u, seeds, device):
    K = len(seeds)
    # λ is set from the run's own settings by reweigh before any weighted epoch
    return {"w_u": torch.ones(K, n_u, device=device), "lam": torch.full((K,), Settings.start, device=device),
            "episode": torch.zeros(K, dtype=torch.int64, device=device),
            "weighting": torch.zeros(K, dtype=torch.int64, device=device)}


register(Method("robustpu", "Robust-PU", "nnPU warm-up, then U as negatives under Welsch "
                "weights, λ raised each epoch (Zhu et al., 2023)", color="#bcbd22",
                risk=robust_risk, init_state=_state, end_epoch=reweigh, settings=Settings,
                recipe=recipe,
                source="woriazzc/Robust-PU main.py L595–608 (schedule, Welsch); 400 pre-training "
                       "epochs L554–558; ≤ 100 episodes with patience 5 on 500 labelled validation "
                       "points L567, L585, L478; P : U 2,000 : 4,000, L476–477 (1dd17b6)",
                departures=(
                    ("the warm-up is the page's first select_from − 1 epochs (officially 400)",
                     "each method starts from the comparison page's schedule"),
                    ("P : U 1 : 2 by weighing each class's term, not by drawing 2,000 P and 4,000 U",
                     "every method sees the same data; the weights give a batch's mean loss the "
                     "authors' class balance in expectation"),
                    ("a fixed 100 weighted epochs, no early stopping", "their stop reads a labelled "
                     "validation set, which no method here may read; 100 is their largest number"),
                    ("a labelled point's weight from its score in the current batch",
                     "officially from the epoch's start: one forward pass saved"),
                    ("the page's Adam through the weighted phase, one optimiser a run (the authors "
                     "start a fresh Adam at 1e-4 without weight decay each episode)",
                     "one optimiser for every method of a comparison page; not yet the authors' recipe"),
                    ("the warm-up's last epoch, not its best checkpoint on labelled validation points",
                     "no labelled validation point may be read here"),
                    ("on the real data sets U holds every training point, the labelled positives "
                     "included (the authors' P and U are disjoint)", "the paper's protocol, the same "
                     "for every method"))))
