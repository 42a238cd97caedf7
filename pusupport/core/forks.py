"""Runs that share their first epochs train them once, then fork.

Until its first selection, aaPU's S is empty and its risk is nnPU's (§3.3): on the same
seed and data, an aaPU run trains exactly as the nnPU run of the same settings through
epoch ``select_from`` — the same batches, dropout masks and steps.
:func:`~pusupport.core.training.fit_shared` trains that prefix once, as the nnPU run (the
trunk), and starts each aaPU run (a branch) from a copy of the trunk's state
(:func:`pick`) at its first selection epoch, which it then makes. A method says
which method it trains as (:attr:`~pusupport.core.methods.Method.before_selection`); a
forked run equals its run trained alone (a test, in float64).
"""
from __future__ import annotations

import copy
from dataclasses import asdict

import torch

from .checkpoint import NOT_RESULTS, data_identity
from .config import TrainConfig
from .methods import get_method

#: Settings that shape a run only once S holds points: two runs on one seed's data that
#: differ in nothing else (but where they are saved and shown) share their epochs up to
#: the first selection.
SELECTION_ONLY = ("method", "n_select", "select_from", "allow_repick", "s_weight")


def fork_epoch(cfg: TrainConfig) -> int | None:
    """The last epoch ``cfg``'s run trains as its :attr:`before_selection` method's run:
    its first selection epoch (None: it never forks — no such method, no selection before
    the last epoch, or a dry run, which visits only a few epochs)."""
    if get_method(cfg.method).before_selection is None or cfg.dry_run or not cfg.n_select:
        return None
    return cfg.select_from if cfg.select_from < cfg.epochs else None


def _prefix(cfg: TrainConfig, method: str) -> tuple:
    return method, repr({k: v for k, v in asdict(cfg).items()
                         if k not in (*SELECTION_ONLY, *NOT_RESULTS, "seed")})


def trunks(keys: list, cfgs: list[TrainConfig]) -> list[int | None]:
    """For each run k, the run it forks from, or None: a run on the same data and seeds
    (the same ``keys[k]``) of its method's :attr:`before_selection`, with the same
    settings but :data:`SELECTION_ONLY`."""
    plain = {}
    for k, (key, c) in enumerate(zip(keys, cfgs)):
        if get_method(c.method).before_selection is None:
            plain.setdefault((key, _prefix(c, c.method)), k)
    return [None if fork_epoch(c) is None else
            plain.get((key, _prefix(c, get_method(c.method).before_selection)))
            for key, c in zip(keys, cfgs)]


def _members(t: torch.Tensor, index: list[int], K: int) -> torch.Tensor:
    """Members ``index`` of a stacked tensor whose first dimension holds K equal blocks."""
    out = torch.cat([t.chunk(K)[j] for j in index])
    if t.dim() == 4 and t.is_contiguous(memory_format=torch.channels_last):
        out = out.contiguous(memory_format=torch.channels_last)
    return out


def pick(state: dict, index: list[int], branch: list[bool]) -> dict:
    """A run's state (:func:`~pusupport.core.training.fit` at ``stop``) for members
    ``index`` of it, a copy: member i of the result is member ``index[i]``; ``branch[i]``:
    a new run forked there, which makes that epoch's selection."""
    K = len(state["history"])
    state = copy.deepcopy(state)
    if any(state["method_state"]):
        raise ValueError("runs whose method keeps a state between epochs cannot fork")
    if K > 1 or len(index) > 1:              # a stacked network: every tensor's member blocks
        tensors = state["members"]["tensors"]
        state["members"]["tensors"] = [_members(t, index, K) for t in tensors]
        for param in state["optimizer"]["state"].values():
            for name, value in param.items():
                if name != "step":
                    param[name] = _members(value, index, K)
        state["rng"]["members"]["dropout"] = [state["rng"]["members"]["dropout"][j] for j in index]
    for name in ("selected", "history", "u_losses"):
        state[name] = [copy.deepcopy(state[name][j]) for j in index]
    state["rng"]["batches"] = [state["rng"]["batches"][j] for j in index]
    state["method_state"] = []
    state["branch"] = list(branch)
    return state


def data_keys(datas: list[list]) -> list[tuple]:
    """Each run's data as a key (a checksum per distinct data object: runs sent apart, e.g.
    as Ray tasks, hold equal copies)."""
    seen: dict = {}
    return [tuple(seen.setdefault(id(d), repr(data_identity(d))) for d in run) for run in datas]
