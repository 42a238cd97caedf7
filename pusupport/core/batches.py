"""The loop's mini-batches (paper Algorithm 1, line 3): P, U and S shuffled and cut into the
same number of batches, and a dry run's cut of one."""
from __future__ import annotations

import math

import torch

from .config import DRY_RUN_STEP_ROWS


def n_batches(n_p: int, n_u: int, batch_size: int) -> int:
    """Mini-batches an epoch: ⌈(n_p + n_u)/batch_size⌉, capped at n_p so that every batch
    has a labelled positive (the loop's rule, also the cost model's)."""
    return max(1, min(n_p, math.ceil((n_p + n_u) / batch_size)))


def stratified_batches(n_p: int, n_u: int, s_index: torch.Tensor, batch_size: int,
                       gen: torch.Generator):
    """Shuffle P, U and S and cut each into the same number of mini-batches.

    Every batch then holds P, U and S in the proportions of the whole set
    (Algorithm 1, line 3), :func:`n_batches` of them. Indices are drawn on ``gen``'s device.
    """
    n = n_batches(n_p, n_u, batch_size)
    dev = gen.device
    p = torch.randperm(n_p, generator=gen, device=dev).tensor_split(n)
    u = torch.randperm(n_u, generator=gen, device=dev).tensor_split(n)
    s_index = s_index.to(dev)
    s = s_index[torch.randperm(len(s_index), generator=gen, device=dev)].tensor_split(n)
    return list(zip(p, u, s))


def dry_run_batch(batch: tuple, rows: int = DRY_RUN_STEP_ROWS) -> tuple:
    """A dry run's cut of one step's batch (each member's P, U and S indices): its first
    ``rows`` rows in the batch's proportions, at least one of P and of U. P and U keep
    equal sizes across members (S may differ: it is padded), so stacks stay stackable."""
    p, u = len(batch[0][0]), len(batch[0][1])
    share = min(1.0, rows / (p + u))
    return tuple((bp[:max(1, round(p * share))], bu[:max(1, round(u * share))],
                  bs[:round(len(bs) * share)]) for bp, bu, bs in batch)
