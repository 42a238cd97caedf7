"""Checkpoints of a training run: save every few epochs, resume bit-identically.

A checkpoint holds the model, the optimiser, every random-number state, the
selected set, the history so far and a fingerprint of the configuration and the
data. Writes are atomic; a checkpoint made with another configuration or other
data is refused, never silently resumed.
"""
from __future__ import annotations

import hashlib
from dataclasses import asdict
from pathlib import Path

import torch

from .atomic import replacing
from .identity import NOT_RESULTS, code_version, data_identity
from .runtime import resolve


def fingerprint(cfgs, datas, seeds, stop: int | None = None) -> dict:
    """What must match for a checkpoint to be resumed: the configuration (of each run of a
    stack), the seeds, each seed's data, the training code, the device choices that change
    numbers (and ``stop``, the last epoch of a run's shared first epochs:
    :mod:`~pusupport.core.forks`)."""
    cfgs = cfgs if isinstance(cfgs, list) else [cfgs]
    runs = [{k: v for k, v in asdict(c).items() if k not in (*NOT_RESULTS, "seed")} for c in cfgs]
    return {"config": runs[0] if len(runs) == 1 else {"runs": runs}, "code": code_version(),
            "runtime": resolve(cfgs[0]).numbers(),
            "seeds": list(seeds), "data": [data_identity(d) for d in datas],
            **({} if stop is None else {"stop": stop})}


def path_for(cfgs, seeds, stop: int | None = None) -> Path:
    """``<checkpoint_dir>/<method>-seeds<s1_s2…>.pt``; a stack of several runs:
    ``<method>+<n>runs-<digest of their settings>-seeds….pt`` in the first run's folder;
    ``-to<stop>`` before ``.pt`` for shared first epochs that end at ``stop``."""
    cfgs = cfgs if isinstance(cfgs, list) else [cfgs]
    name = "_".join(map(str, dict.fromkeys(seeds)))
    what = cfgs[0].method
    if len(cfgs) > 1:
        digest = hashlib.sha256(repr([asdict(c) for c in cfgs]).encode()).hexdigest()[:10]
        what = f"{what}+{len(cfgs) - 1}runs-{digest}"
    return Path(cfgs[0].checkpoint_dir) / f"{what}-seeds{name}{'' if stop is None else f'-to{stop}'}.pt"


def save(path: Path, state: dict) -> None:
    """Write ``state`` to ``path`` atomically (temporary file + rename)."""
    with replacing(path) as tmp:
        torch.save(state, tmp)


def load(path: Path, expected: dict) -> dict | None:
    """The checkpoint at ``path`` if there is one; refuses one from another configuration
    and names the path of one it cannot read."""
    if not path.exists():
        return None
    try:
        state = torch.load(path, weights_only=False)
    except Exception as err:       # truncated or not a checkpoint
        raise ValueError(f"checkpoint {path} cannot be read ({type(err).__name__}): it is "
                         "truncated or not a checkpoint. Delete it to start afresh.") from err
    if state["fingerprint"] != expected:
        old, new = state["fingerprint"], expected
        diff = sorted(k for k in {**old["config"], **new["config"]}
                      if old["config"].get(k) != new["config"].get(k))
        what = (f"settings {diff}" if diff else next(
            (name for key, name in (("code", "training code"), ("runtime", "device choices (precision, "
             "dropout streams, memory format)"), ("seeds", "seeds"), ("stop", "fork epoch"))
             if old.get(key) != new.get(key)), "data"))
        raise ValueError(f"checkpoint {path} was made with different {what}"
                         f"{' (its rows, or π)' if what == 'data' else ''}: refusing to resume it. Delete "
                         "it, or pass another checkpoint folder (checkpoint_dir; --checkpoint-dir on "
                         "the command line), to start afresh.")
    return state
