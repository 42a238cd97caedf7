"""Surrogate losses ℓ(z) of the margin z = y·g(x) (paper Eqs. 2–3).

Both are written with ``softplus``/``sigmoid`` so they stay finite for any score:
``ℓ_sig(z) = 1/(1+e^{z}) = σ(−z)`` and ``ℓ_log(z) = ln(1+e^{−z}) = softplus(−z)``.
"""
from __future__ import annotations

from typing import Callable

import torch
import torch.nn.functional as F

Loss = Callable[[torch.Tensor], torch.Tensor]


def sigmoid_loss(z: torch.Tensor) -> torch.Tensor:
    """Sigmoid loss ℓ(z) = 1 / (1 + e^{z}) (Eq. 2); bounded in [0, 1]."""
    return torch.sigmoid(-z)


def logistic_loss(z: torch.Tensor) -> torch.Tensor:
    """Logistic loss ℓ(z) = ln(1 + e^{−z}) (Eq. 3), computed as softplus(−z)."""
    return F.softplus(-z)


LOSSES: dict[str, Loss] = {"sigmoid": sigmoid_loss, "logistic": logistic_loss}


def get_loss(name: str) -> Loss:
    """Return the loss called ``name`` ('sigmoid' or 'logistic')."""
    try:
        return LOSSES[name]
    except KeyError:
        raise ValueError(
            f"unknown loss {name!r}: use one of {sorted(LOSSES)}"
        ) from None
