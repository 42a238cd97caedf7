"""Robust-PU (Zhu, Wang et al., KDD 2023, "Robust positive-unlabeled learning via noise
negative sample self-correction"): warm up with nnPU, then train on U taken as negative,
each point weighted by how easy it is — the sample-selection counterpart of aaPU, which
moves hard U points to P instead of weighing them down.

After each epoch from ``select_from − 1`` on, every U point gets the Welsch weight
w = exp(−ℓ/λ²) of its logistic loss as a negative, ℓ = ln(1 + e^{g}), and λ grows linearly
from 0.1 to 2.0 over 10 epochs (the official code's argument defaults; its hardness,
scheduler and self-paced weights). The loss is then the weighted logistic (binary
cross-entropy) loss of P as +1 and U as −1, each class's term weighted as in a batch of the
authors' P : U (:class:`Settings`). Each weighted epoch (an episode) starts a fresh Adam at
the authors' rate without weight decay (``optimiser``); after it, the recipe's early stop
reads a criterion on the held-out PU split (``validation``, :func:`stop`: patience 5, the
best episode restored), within the authors' largest number of episodes (``recipe``).
Adaptations, said where the page runs it: the warm-up is this loop's first
``select_from − 1`` epochs (officially 400 separate pre-training epochs), with nnPU's sigmoid
loss as the official pre-training; a labelled point's weight comes from its score in the
current batch (officially from the epoch's start); the stop reads the non-negative PU
sigmoid risk on unlabelled data where the authors read accuracy on labelled points.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch

from ..losses import logistic_loss
from ..methods import Batch, EpochEnd, Method, register
from ..risks import Risk, nnpu_risk


@dataclass(frozen=True)
class Settings:
    """Robust-PU's own settings (woriazzc/Robust-PU main.py, its argument defaults): λ from
    ``start`` to ``stop`` over ``grow_epochs`` weighted epochs (L595–608); P : U as
    ``class_ratio`` (their experiments' 2,000 : 4,000, L476–477; None: the data's own); at
    most ``episodes`` weighted epochs (their ≤ 100, L567), each on a fresh Adam at ``lr``
    with weight decay ``weight_decay`` (``--lr``, ``--wd``; train_episode)."""

    start: float = 0.1
    stop: float = 2.0
    grow_epochs: int = 10
    class_ratio: tuple | None = (1, 2)
    episodes: int = 100
    lr: float = 1e-4
    weight_decay: float = 0.0

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
        if not (self.lr > 0 and self.weight_decay >= 0):
            raise ValueError(f"lr={self.lr!r}, weight_decay={self.weight_decay!r}: the episodes' Adam "
                             "needs a rate > 0 and a weight decay >= 0")


#: Weighted epochs without a lower criterion after which the recipe stops (``--patience``).
PATIENCE = 5


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
    weighted epochs, each evaluated (the stop reads the split after every one)."""
    return replace(cfg, epochs=min(cfg.epochs, cfg.select_from - 1 + cfg.own.episodes), eval_every=1)


def optimiser(cfg, epoch: int) -> tuple[float, float, bool]:
    """The page's rate through the warm-up; from the first weighted epoch on, a fresh Adam
    each episode at the authors' rate and weight decay (train_episode)."""
    if epoch < cfg.select_from:
        return cfg.lr_at(epoch), cfg.weight_decay, False
    return cfg.own.lr, cfg.own.weight_decay, True


def validation(g_p, g_u, prior, state) -> torch.Tensor:
    """The criterion the stop reads, per member: the non-negative PU sigmoid risk (Eq. 9
    with ℓ_sig) on the held-out PU split — the label-free stand-in for the authors'
    validation accuracy — after each weighted epoch; none in the warm-up, whose model the
    recipe never restores."""
    risk = nnpu_risk(g_p, g_u, prior, "sigmoid").value
    return torch.where(state["weighting"].bool(), risk, torch.full_like(risk, math.nan))


def stop(values) -> int:
    """The authors' early stop (train: "Early stop") on the criterion's values after each
    weighted epoch, in order: a value below every earlier one is the best; :data:`PATIENCE`
    epochs without one end the run, and the best is restored. Its position."""
    best, at = math.inf, 0
    for i, value in enumerate(values):
        if value < best:
            best, at = value, i
        elif i - at >= PATIENCE:
            break
    return at


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
                recipe=recipe, optimiser=optimiser, validation=validation, stop=stop,
                criterion="its authors' early stop (patience 5) on the non-negative PU sigmoid risk",
                source="woriazzc/Robust-PU main.py L595–608 (schedule, Welsch); 400 pre-training "
                       "epochs L554–558; ≤ 100 episodes with patience 5 on 500 labelled validation "
                       "points, the best restored, L567, L585, L478 (train: Early stop); a fresh Adam "
                       "each episode at --lr 1e-4, --wd 0 (train_episode); P : U 2,000 : 4,000, "
                       "L476–477 (1dd17b6)",
                departures=(
                    ("the warm-up is the page's first select_from − 1 epochs (officially 400)",
                     "each method starts from the comparison page's schedule"),
                    ("P : U 1 : 2 by weighing each class's term, not by drawing 2,000 P and 4,000 U",
                     "every method sees the same data; the weights give a batch's mean loss the "
                     "authors' class balance in expectation"),
                    ("the early stop (patience 5, the best restored) reads the non-negative PU "
                     "sigmoid risk on the held-out PU split, not accuracy on 500 labelled points",
                     "no method here may read a label; this is the criterion every other method's "
                     "own choice reads"),
                    ("a labelled point's weight from its score in the current batch",
                     "officially from the epoch's start: one forward pass saved"),
                    ("the code's argument defaults (rate 1e-4, one inner epoch an episode, λ 0.1 → 2 "
                     "over 10), not the one run its README documents (MNIST at π = 0.6: rate 1e-2, "
                     "20 inner epochs, λ 0.11 → 1 over 5, temperature 1.3)", "that run is tuned for "
                     "one data set and prior; the defaults are what the code runs elsewhere"),
                    ("the warm-up's last epoch, not its best checkpoint on labelled validation points",
                     "no labelled validation point may be read here"),
                    ("on the real data sets U holds every training point, the labelled positives "
                     "included (the authors' P and U are disjoint)", "the paper's protocol, the same "
                     "for every method"))))
