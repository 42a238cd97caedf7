"""Checkpoints of a training run: save every few epochs, resume bit-identically.

A checkpoint holds the model, the optimiser, every random-number state, the
selected set, the history so far and a fingerprint of the configuration and the
data. Writes are atomic; a checkpoint made with another configuration or other
data is refused, never silently resumed.
"""
from __future__ import annotations

import hashlib
import subprocess
from dataclasses import asdict
from pathlib import Path

import torch

from .atomic import replacing

#: Settings that change where a run goes or how it is shown, never its numbers: the one
#: list of them (the run store, checkpoints and a page's settings fingerprint leave them out).
NOT_RESULTS = ("progress", "checkpoint_dir", "checkpoint_every", "device")
#: The package's code that trains: these folders' modules, less those that only store, show
#: or place a run (their choices are recorded beside it: precision and layout).
TRAINING_CODE = ("core", "data")
NOT_TRAINING = ("atomic.py", "checkpoint.py", "progress.py", "runtime.py")
PACKAGE = Path(__file__).parents[1]


def _training_sources(ref: str | None) -> list[tuple[str, bytes]]:
    if ref is None:
        return [(p.relative_to(PACKAGE).as_posix(), p.read_bytes())
                for folder in TRAINING_CODE for p in (PACKAGE / folder).rglob("*.py")]
    git = ["git", "-C", str(PACKAGE.parent)]
    listed = subprocess.run([*git, "ls-tree", "-r", "--name-only", ref, "--",
                             *(f"{PACKAGE.name}/{f}" for f in TRAINING_CODE)],
                            capture_output=True, text=True, check=True).stdout.split()
    return [(name.split("/", 1)[1], subprocess.run([*git, "show", f"{ref}:{name}"],
                                                   capture_output=True, check=True).stdout)
            for name in listed if name.endswith(".py")]


def code_version(ref: str | None = None) -> str:
    """A hash of the code that trains (:data:`TRAINING_CODE` less :data:`NOT_TRAINING`), of
    this checkout or of the git commit ``ref``: a stored run or checkpoint from other
    training code is not reused; one from an edit to a figure or a page is."""
    digest = hashlib.sha256()
    for name, text in sorted(_training_sources(ref)):
        if Path(name).name not in NOT_TRAINING:
            digest.update(name.encode() + b"\0" + text)
    return digest.hexdigest()[:16]


def checksum(*tensors) -> str:
    """A short sha256 of tensors' dtypes, shapes and bytes (sparse rows: all their parts)."""
    digest = hashlib.sha256()
    for t in tensors:
        parts = (t.crow, t.col, t.val) if hasattr(t, "crow") else (t,)
        for part in parts:
            digest.update(str((part.dtype, tuple(part.shape))).encode())
            digest.update(part.detach().contiguous().cpu().numpy().tobytes())
    return digest.hexdigest()[:16]


def data_identity(data) -> dict:
    """What identifies one seed's PU data: its name, π and a checksum of every tensor (the
    validation split's where one is held out)."""
    held = [] if data.x_val_p is None else [data.x_val_p, data.x_val_u]
    return {"name": data.name, "prior": float(data.prior),
            "tensors": checksum(data.x_p, data.x_u, data.u_truth, data.u_in_p, data.x_test,
                                 data.y_test, *held)}


def fingerprint(cfgs, datas, seeds, stop: int | None = None) -> dict:
    """What must match for a checkpoint to be resumed: the configuration (of each run of a
    stack), the seeds, each seed's data, the training code (and ``stop``, the last epoch of
    a run's shared first epochs: :mod:`~pusupport.core.forks`)."""
    runs = [{k: v for k, v in asdict(c).items() if k not in (*NOT_RESULTS, "seed")}
            for c in (cfgs if isinstance(cfgs, list) else [cfgs])]
    return {"config": runs[0] if len(runs) == 1 else {"runs": runs}, "code": code_version(),
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
        what = (f"settings {diff}" if diff else "training code" if old.get("code") != new.get("code")
                else "data")
        raise ValueError(f"checkpoint {path} was made with different {what}: refusing to resume "
                         "it. Delete it, or pass another checkpoint_dir, to start afresh.")
    return state
