"""MixUp inside a method's risk (VPU, Dist-PU): random draws that stacked and single runs
share — member k draws from a generator keyed by its seed and its step count, both kept in
the method's state, so they are checkpointed and a resumed run draws the same — and the
mixing itself."""
from __future__ import annotations

import numpy as np
import torch


def draw_state(seeds, device) -> dict:
    """``{"seed", "step"}`` (K,) int64 tensors for :attr:`Method.init_state`."""
    return {"seed": torch.tensor(seeds, dtype=torch.int64, device=device),
            "step": torch.zeros(len(seeds), dtype=torch.int64, device=device)}


def member_rng(state: dict, k: int) -> np.random.Generator:
    """Member k's generator for this step (call :func:`next_step` once per step)."""
    return np.random.default_rng([int(state["seed"][k]), int(state["step"][k])])


def next_step(state: dict) -> None:
    state["step"] += 1


def mix(x: torch.Tensor, partner: torch.Tensor, mu: torch.Tensor) -> torch.Tensor:
    """μ·x + (1 − μ)·partner for each member: ``x``, ``partner`` (K, n, …), ``mu`` (K,)."""
    m = mu.to(x.dtype).reshape((len(mu),) + (1,) * (x.dim() - 1))
    return m * x + (1 - m) * partner
