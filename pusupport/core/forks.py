"""Runs that share their first epochs train them once, then fork.

Until its first selection, aaPU's S is empty and its risk is nnPU's (§3.3): on the same
seed and data, an aaPU run trains exactly as the nnPU run of the same settings through
epoch ``select_from`` — the same batches, dropout masks and steps.
:func:`~pusupport.core.training.fit_shared` trains that prefix once, as the nnPU run (the
trunk), and starts each aaPU run (a branch) from a copy of the trunk's state
(:func:`pick`) at its first selection epoch, which it then makes. A method says
which method it trains as (:attr:`~pusupport.core.methods.Method.before_selection`); a
forked run equals its run trained alone (a test, in float64).

A trunk's state at a fork epoch can also be kept between jobs (:class:`TrunkStates`, the
book's run store): a branch whose trunk trained in an earlier job or build then trains only
its own epochs, and a branch with no trunk in its job trains its first epochs as that
trunk, once, and keeps them for the next.
"""
from __future__ import annotations

import copy
from dataclasses import asdict, replace
from typing import Protocol

import torch

from .identity import NOT_RESULTS, data_identity
from .config import TrainConfig
from .methods import METHODS, get_method

#: Settings that shape a run only once S holds points: two runs on one seed's data that
#: differ in nothing else (but where they are saved and shown) share their epochs up to
#: the first selection.
SELECTION_ONLY = ("method", "n_select", "select_from", "allow_repick", "s_weight")


def _first_selection(cfg: TrainConfig) -> int | None:
    """``cfg``'s first selection epoch if it comes before the last epoch (None: no selection
    before it, or a dry run, which visits only a few epochs)."""
    if cfg.dry_run or not cfg.n_select:
        return None
    return cfg.select_from if 1 <= cfg.select_from < cfg.epochs else None


def fork_epoch(cfg: TrainConfig) -> int | None:
    """The last epoch ``cfg``'s run trains as its :attr:`before_selection` method's run:
    its first selection epoch (None: it never forks — no such method, or no selection before
    the last epoch)."""
    return None if get_method(cfg.method).before_selection is None else _first_selection(cfg)


def trunk_epoch(cfg: TrainConfig) -> int | None:
    """The epoch a run of ``cfg`` is a trunk at: where a method that trains as ``cfg.method``
    until its first selection (aaPU for nnPU) would fork from it at these settings; else None."""
    trunk = any(m.before_selection == cfg.method for m in METHODS.values())
    return _first_selection(cfg) if trunk else None


def shared_settings(cfg: TrainConfig, method: str | None = None) -> dict:
    """The settings of ``cfg``'s first epochs as ``method``'s run (default: its own): all but
    :data:`SELECTION_ONLY`, where, how often and on which seed it is saved and shown."""
    return {"method": method or cfg.method, **{k: v for k, v in asdict(cfg).items()
                                               if k not in (*SELECTION_ONLY, *NOT_RESULTS, "seed")}}


def _prefix(cfg: TrainConfig, method: str) -> str:
    return repr(shared_settings(cfg, method))


class TrunkStates(Protocol):
    """Where trunks' states at fork epochs are kept between jobs: ``cfg`` a trunk's settings
    (:func:`shared_settings` is what identifies its first epochs), ``datas`` one PUData per
    seed of ``seeds``, ``state`` :func:`~pusupport.core.training.fit`'s at ``epoch``."""

    def get(self, cfg: TrainConfig, seeds: list, datas: list, stacked: bool, epoch: int) -> dict | None: ...

    def put(self, cfg: TrainConfig, seeds: list, datas: list, stacked: bool, epoch: int,
            state: dict) -> None: ...


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


def with_trunks(keys: list, cfgs: list[TrainConfig]) -> tuple[list, list, list]:
    """``cfgs`` and a trunk for each branch without one among them (the branch's settings as
    its :attr:`before_selection` method's run: trained to its fork epochs only, kept and not
    returned). Returns (the configs, each one's trunk or None, each one's run whose data it
    trains on)."""
    parent = trunks(keys, cfgs)
    out, data_of, added = list(cfgs), list(range(len(cfgs))), {}
    for i, c in enumerate(cfgs):
        if parent[i] is None and fork_epoch(c) is not None:
            before = get_method(c.method).before_selection
            key = (keys[i], _prefix(c, before))
            if key not in added:
                added[key] = len(out)
                out.append(replace(c, method=before))
                data_of.append(i)
                parent.append(None)
            parent[i] = added[key]
    return out, parent, data_of


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
