"""Checkpoints of a training run: save every few epochs, resume bit-identically.

A checkpoint holds the model, the optimiser, every random-number state, the
selected set, the history so far and a fingerprint of the configuration and the
data. Writes are atomic; a checkpoint made with another configuration or other
data is refused, never silently resumed.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import asdict
from pathlib import Path

import torch

#: Settings that change how a run is shown or stored, never its results.
RUNTIME_FIELDS = ("progress", "checkpoint_dir", "checkpoint_every", "device")


def code_version() -> str:
    """A hash of pusupport's source: a checkpoint from other code is not resumed."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def fingerprint(cfg, data) -> dict:
    """What must match for a checkpoint to be resumed: the configuration, the data, the code."""
    config = {k: v for k, v in asdict(cfg).items() if k not in RUNTIME_FIELDS}
    x_p = data.x_p if torch.is_tensor(data.x_p) else data.x_p.val
    return {"config": config, "code": code_version(),
            "data": {"name": data.name, "n_p": len(data.x_p), "n_u": len(data.x_u),
                     "prior": data.prior, "x_p_sum": float(x_p.double().sum())}}


def path_for(cfg) -> Path:
    return Path(cfg.checkpoint_dir) / f"{cfg.method}-seed{cfg.seed}.pt"


def save(path: Path, state: dict) -> None:
    """Write ``state`` to ``path`` atomically (temporary file + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    os.close(fd)
    try:
        torch.save(state, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def load(path: Path, expected: dict) -> dict | None:
    """The checkpoint at ``path`` if there is one; refuses one from another configuration."""
    if not path.exists():
        return None
    state = torch.load(path, weights_only=False)
    if state["fingerprint"] != expected:
        old, new = state["fingerprint"], expected
        diff = sorted(k for k in {**old["config"], **new["config"]}
                      if old["config"].get(k) != new["config"].get(k))
        what = (f"settings {diff}" if diff else "pusupport code" if old.get("code") != new.get("code")
                else "data")
        raise ValueError(f"checkpoint {path} was made with different {what}: refusing to resume "
                         "it. Delete it, or pass another checkpoint_dir, to start afresh.")
    return state


def rng_state(gen: torch.Generator) -> dict:
    state = {"torch": torch.get_rng_state(), "batches": gen.get_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng(state: dict, gen: torch.Generator) -> None:
    torch.set_rng_state(state["torch"])
    gen.set_state(state["batches"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
