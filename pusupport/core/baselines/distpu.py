"""Dist-PU (Zhao, Xu, Jiang, Wen & Huang, CVPR 2022, "Dist-PU: positive-unlabeled learning
from a label distribution perspective"). With s = σ(g), the label-distribution alignment

    L_dist = (1 − mean_P s) + |mean_U s − π| / (2π)

(the official histogram loss with one bin and polar proxies reduces to this), plus
μ_ent · the mean binary entropy of U's scores. A second stage adds MixUp on pseudo-labels:
each training point's pseudo-label is its last score (P's are 1), the batch is mixed with
a permutation of itself (λ ~ Beta(α, α)), and the loss adds c_mix · the mixed binary
cross-entropy, c_me · the entropy of the mixed scores and a U entropy weight that rises as
(1 − cos(t·π/2))·c_ent over the stage. Scores are clipped to ±10 as in the official code.

Its own settings (:class:`Settings`) default to the official code's argument defaults,
its recipe too: the authors train 60 + 60 epochs, here the page's epochs split in the same
proportion; the first stage with Adam at 5e-4 (weight decay 5e-3) annealed to 0 by a cosine
over the stage, the second with a fresh Adam at 5e-5 (weight decay 1e-3) annealed to 0.7 of
it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ..methods import Batch, EpochEnd, Method, register
from ..risks import Risk
from .draws import draw_state, member_rng, mix, next_step


@dataclass(frozen=True)
class Settings:
    """Dist-PU's own settings (Ray-rui/Dist-PU train.py L39–47): the first stage's U-entropy
    weight μ_ent, MixUp's Beta(α, α), the mixed loss's c_mix, the mixed entropy's c_me, the
    second stage's largest U-entropy weight c_ent, and the clip of the scores."""

    mu_entropy: float = 2e-3
    alpha: float = 6.0
    mixup: float = 5.0
    mix_entropy: float = 0.04
    entropy: float = 4e-3
    clip: float = 10.0
    first_share: float = 0.5          # 60 of 60 + 60 epochs (L46–47)
    warm_up_lr: float = 5e-4          # L30, L32; set_up_for_warm_up: a cosine to 0
    warm_up_weight_decay: float = 5e-3
    lr: float = 5e-5                  # L31, L33; set_up_for_dist_pu: a fresh Adam, a cosine to 0.7·lr
    weight_decay: float = 1e-3
    final_lr_share: float = 0.7

    def __post_init__(self):
        if not 0 < self.first_share < 1:
            raise ValueError(f"first_share={self.first_share}: the first stage's share of the "
                             "epochs must lie strictly between 0 and 1 (the authors: 0.5)")
        if not (self.warm_up_lr > 0 and self.lr > 0 and 0 <= self.final_lr_share <= 1):
            raise ValueError("Dist-PU needs warm_up_lr > 0, lr > 0 and 0 <= final_lr_share <= 1")
        if not (self.alpha > 0 and self.clip > 0):
            raise ValueError(f"alpha={self.alpha!r}, clip={self.clip!r}: MixUp's Beta(α, α) needs "
                             "alpha > 0 and the scores' clip must be > 0 (the authors: 6 and 10)")
        if min(self.mu_entropy, self.mixup, self.mix_entropy, self.entropy, self.warm_up_weight_decay,
               self.weight_decay) < 0:
            raise ValueError("Dist-PU's loss weights and weight decays must be >= 0")


def first_stage(cfg) -> int:
    """The epochs of the first stage: the authors' share of the run's, at least 1, and at
    least one left for the second."""
    return min(max(1, round(cfg.epochs * cfg.own.first_share)), cfg.epochs - 1)


def cosine(start: float, end: float, step: int, steps: int) -> float:
    """A cosine annealing from ``start`` to ``end`` over ``steps``, at ``step`` (0-based)."""
    return end + (start - end) * (1 + math.cos(math.pi * step / steps)) / 2


def optimiser(cfg, epoch: int) -> tuple[float, float, bool]:
    """The authors' rates for ``epoch``: the warm-up's, then a fresh Adam's."""
    own, b = cfg.own, first_stage(cfg)
    if epoch <= b:
        return cosine(own.warm_up_lr, 0.0, epoch - 1, b), own.warm_up_weight_decay, False
    return (cosine(own.lr, own.final_lr_share * own.lr, epoch - b - 1, cfg.epochs - b),
            own.weight_decay, epoch == b + 1)


def alignment(s_p: torch.Tensor, s_u: torch.Tensor, prior) -> torch.Tensor:
    """(1 − mean_P s) + |mean_U s − π| / (2π), per member (K,)."""
    prior = torch.as_tensor(prior, dtype=s_u.dtype, device=s_u.device)
    return (1 - s_p.mean(-1)) + (s_u.mean(-1) - prior).abs() / (2 * prior)


def entropy(s: torch.Tensor) -> torch.Tensor:
    """Mean binary entropy −[s log s + (1 − s) log(1 − s)] over the last dim."""
    return -(s * torch.log(s) + (1 - s) * torch.log(1 - s)).mean(-1)


def _score(g, clip: float):
    return torch.sigmoid(g.clamp(-clip, clip))


def distpu_risk(b: Batch) -> Risk:
    own = b.config.own
    s_p, s_u = _score(b.g_p, own.clip), _score(b.g_u, own.clip)
    base = alignment(s_p, s_u, b.prior)
    stage = int(b.state["stage"][0])
    if stage == 0:                                   # the first stage: alignment + U entropy
        total = base + own.mu_entropy * entropy(s_u)
    else:
        total = base + float(b.state["co_entropy"][0]) * entropy(s_u) + _mixup(b, s_u, own)
        b.state["pseudo_u"].scatter_(1, b.index_u, s_u.detach().to(b.state["pseudo_u"].dtype))
    return Risk(total.detach(), total, base.detach(), (total - base).detach(),
                torch.zeros_like(total, dtype=torch.bool))


def _mixup(b: Batch, s_u: torch.Tensor, own: Settings) -> torch.Tensor:
    """c_mix·BCE of the mixed scores against the mixed pseudo-labels + c_me·their entropy."""
    x_p, x_u, _ = b.inputs()
    K, n = x_p.shape[0], x_p.shape[1] + x_u.shape[1]
    x = torch.cat([x_p, x_u], 1)
    target = torch.cat([torch.ones_like(b.g_p), b.state["pseudo_u"].gather(1, b.index_u).to(s_u.dtype)], 1)
    draws = [member_rng(b.state, k) for k in range(K)]
    lam = torch.tensor([r.beta(own.alpha, own.alpha) for r in draws], dtype=s_u.dtype, device=s_u.device)
    perm = torch.stack([torch.as_tensor(r.permutation(n)) for r in draws]).to(x.device)
    next_step(b.state)
    partner = torch.stack([x[k, perm[k]] for k in range(K)])
    mixed = mix(x, partner, lam)
    s_mix = _score(b.forward(mixed), own.clip)
    t_b = target.gather(1, perm.to(target.device))
    bce = lambda t: F.binary_cross_entropy(s_mix, t, reduction="none").mean(-1)   # noqa: E731
    return own.mixup * (lam * bce(target) + (1 - lam) * bce(t_b)) + own.mix_entropy * entropy(s_mix)


def next_epoch(end: EpochEnd) -> None:
    """Before the second stage's first epoch: its pseudo-labels, U's scores
    σ(g) = 1 − e^{−ℓ(−g)} with the logistic ℓ; then, before each of its epochs, the entropy
    weight (1 − cos(t·π/2))·c_ent, t its share of the stage done."""
    cfg, b = end.config, first_stage(end.config)
    following = next((e for e in cfg.visited_epochs() if e > end.epoch), None)
    if following is None or following <= b:
        return
    if int(end.state["stage"][0]) == 0:
        if cfg.selection_loss != "logistic":
            raise ValueError("Dist-PU reads U's scores from the logistic selection loss: "
                             "keep selection_loss='logistic'")
        scores = 1 - torch.exp(-end.u_losses().clamp(min=0.0))
        end.state["pseudo_u"].copy_(scores.to(end.state["pseudo_u"].dtype))
        end.state["stage"].fill_(1)
    t = (following - b - 1) / (cfg.epochs - b)
    end.state["co_entropy"].fill_((1 - math.cos(t * math.pi / 2)) * cfg.own.entropy)


def _state(n_u, seeds, device):
    K = len(seeds)
    return {**draw_state(seeds, device), "pseudo_u": torch.zeros(K, n_u, device=device),
            "stage": torch.zeros(K, dtype=torch.int64, device=device),
            "co_entropy": torch.zeros(K, device=device)}


register(Method("distpu", "Dist-PU", "label-distribution alignment, entropy, then MixUp on "
                "pseudo-labels (Zhao et al., 2022)", color="#17a589", risk=distpu_risk,
                passes=6, mixes_inputs=True, init_state=_state, end_epoch=next_epoch,
                settings=Settings,
                source="Ray-rui/Dist-PU-… train.py L39–47: 60 + 60 epochs, a warm-up Adam at 5e-4 "
                       "(weight decay 5e-3), then a fresh Adam at 5e-5 annealed to 3.5e-5 (1e-3), "
                       "L30–33, L132–144 (cb74be1)",
                optimiser=optimiser, second_stage=lambda cfg: first_stage(cfg) + 1,
                departures=(
                    ("the page's epochs, split as the authors' 60 + 60", "each method trains the "
                     "comparison page's epochs"),
                    ("the authors' rates on every data set and network", "their code's argument "
                     "defaults (tuned for their CNNs at batch 256); they give none per data set"),
                    ("the comparison page's batch size (the authors': 256, train.py L26)",
                     "every method of a comparison page trains on its batches"),
                    ("π from the data set (the authors' code fixes it per data set: 0.4 for CIFAR-10 "
                     "and Fashion-MNIST, losses/factory.py L4–8)", "every method reads the same π"))))
