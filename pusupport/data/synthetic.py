"""The synthetic problem of the paper's §4.1."""
from __future__ import annotations

import math

import torch

from ..core.problem import PUData

#: π of the §4.1 generating process: P(x₂ > sin x₁) = 0.5 − (1 − cos 10)/30.
SYNTHETIC_PRIOR = 0.5 - (1 - math.cos(10.0)) / 30


def _sample_synthetic(n: int, gen: torch.Generator):
    x1 = torch.rand(n, generator=gen) * 10
    x2 = torch.rand(n, generator=gen) * 3 - 1.5
    y = torch.where(x2 > torch.sin(x1), 1, -1)
    x2 = x2 + 0.2 * y
    return torch.stack([x1, x2], dim=1), y


def synthetic(seed: int = 0, n_labeled: int = 100, n_unlabeled: int = 1000,
              n_test: int = 10_000, prior: float | None = None) -> PUData:
    """The two-moons-like problem of §4.1.

    x₁ ~ U(0, 10), x₂ ~ U(−1.5, 1.5); positive iff x₂ > sin(x₁); then x₂ is moved
    by +0.2 (P) or −0.2 (N). ``n_labeled`` P are drawn from the positive class, U
    and the test set from the mixture. π defaults to the generating process's
    0.4387 (the paper quotes 0.4412, its own test set's sample fraction).
    """
    gen = torch.Generator().manual_seed(seed)
    x_p = torch.empty(0, 2)
    while len(x_p) < n_labeled:
        x, y = _sample_synthetic(4 * n_labeled, gen)
        x_p = torch.cat([x_p, x[y > 0]])
    x_u, y_u = _sample_synthetic(n_unlabeled, gen)
    x_test, y_test = _sample_synthetic(n_test, gen)
    return PUData("synthetic", x_p[:n_labeled], x_u, y_u,
                  torch.zeros(n_unlabeled, dtype=torch.bool), x_test, y_test,
                  SYNTHETIC_PRIOR if prior is None else prior)
