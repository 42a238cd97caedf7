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

#: Settings that change how a run is shown or stored, never its results.
RUNTIME_FIELDS = ("progress", "checkpoint_dir", "checkpoint_every", "device", "seed")


def code_version() -> str:
    """A hash of pusupport's source: a checkpoint from other code is not resumed."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parents[1].rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _data_fingerprint(data) -> dict:
    x_p = data.x_p if torch.is_tensor(data.x_p) else data.x_p.val
    return {"name": data.name, "n_p": len(data.x_p), "n_u": len(data.x_u),
            "prior": data.prior, "x_p_sum": float(x_p.double().sum())}


def fingerprint(cfgs, datas, seeds) -> dict:
    """What must match for a checkpoint to be resumed: the configuration (of each run of a
    stack), the seeds, each seed's data, the code."""
    runs = [{k: v for k, v in asdict(c).items() if k not in RUNTIME_FIELDS}
            for c in (cfgs if isinstance(cfgs, list) else [cfgs])]
    return {"config": runs[0] if len(runs) == 1 else {"runs": runs}, "code": code_version(),
            "seeds": list(seeds), "data": [_data_fingerprint(d) for d in datas]}


def path_for(cfgs, seeds) -> Path:
    """``<checkpoint_dir>/<method>-seeds<s1_s2…>.pt``; a stack of several runs:
    ``<method>+<n>runs-<digest of their settings>-seeds….pt`` in the first run's folder."""
    cfgs = cfgs if isinstance(cfgs, list) else [cfgs]
    name = "_".join(map(str, dict.fromkeys(seeds)))
    what = cfgs[0].method
    if len(cfgs) > 1:
        digest = hashlib.sha256(repr([asdict(c) for c in cfgs]).encode()).hexdigest()[:10]
        what = f"{what}+{len(cfgs) - 1}runs-{digest}"
    return Path(cfgs[0].checkpoint_dir) / f"{what}-seeds{name}.pt"


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
        what = (f"settings {diff}" if diff else "pusupport code" if old.get("code") != new.get("code")
                else "data")
        raise ValueError(f"checkpoint {path} was made with different {what}: refusing to resume "
                         "it. Delete it, or pass another checkpoint_dir, to start afresh.")
    return state
