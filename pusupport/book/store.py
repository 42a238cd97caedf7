"""The book's run store: a run is trained once per output folder.

A run — one method's settings on some seeds' data — is known by its key: every setting
that shapes its numbers, the seeds, a checksum of each seed's data, the code, and how it
runs (device, threads, stacked or one by one). A page that needs a run already in the
store (trained by another page of the build, or by an earlier build into the same
folder) reads its history instead of training it again, provided the stored run was
evaluated at every epoch the page evaluates; its test metrics at other epochs are
blanked, so the page gets the history it would have written itself. Pages running at the
same time (``--workers``) share the store: a run is claimed with a lock on its key, and
a page that needs a run another page is training waits for it and reads it.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd
import torch

from ..core.checkpoint import code_version
from ..core.runtime import resolve
from .records import atomic_write_text

#: Settings that do not change a run's numbers: where and how it is shown or saved,
#: the seed (the key lists the seeds), and how often it is evaluated (checked apart).
NOT_IN_KEY = ("progress", "checkpoint_dir", "checkpoint_every", "device", "seed", "eval_every")
#: History columns that exist only at evaluated epochs.
EVALUATED = ("test_error", "test_auc", "test_ap", "train_error")


def _checksum(*tensors) -> str:
    digest = hashlib.sha256()
    for t in tensors:
        parts = (t.crow, t.col, t.val) if hasattr(t, "crow") else (t,)
        for part in parts:
            digest.update(str((part.dtype, tuple(part.shape))).encode())
            digest.update(part.detach().contiguous().cpu().numpy().tobytes())
    return digest.hexdigest()[:16]


def data_checksum(data) -> dict:
    """What identifies one seed's PU data: its name, π and a checksum of every tensor."""
    return {"name": data.name, "prior": float(data.prior),
            "tensors": _checksum(data.x_p, data.x_u, data.u_truth, data.u_in_p, data.x_test,
                                 data.y_test)}


def run_key(cfg, seeds, datas, stacked: bool) -> str:
    """The key of training ``cfg`` on ``datas`` (one per seed of ``seeds``)."""
    settings = {k: v for k, v in asdict(cfg).items() if k not in NOT_IN_KEY}
    what = {"settings": settings, "seeds": list(seeds), "data": [data_checksum(d) for d in datas],
            "code": code_version(), "device": resolve(cfg).device.type,
            "threads": torch.get_num_threads(), "stacked": stacked}
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()[:20]


def evaluated_epochs(cfg) -> list[int]:
    return [e for e in cfg.visited_epochs() if cfg.evaluates_at(e)]


@dataclass(frozen=True)
class RunStore:
    """The runs under ``folder``; ``page``: the page asking (recorded as the trainer)."""

    folder: Path
    page: str

    def histories(self, cfg, seeds, datas, stacked: bool, train) -> tuple[list, str | None]:
        """(each seed's history, the page that trained it, None if trained now): read from
        the store when it holds this run evaluated at every epoch ``cfg`` evaluates, else
        ``train()``ed now (a list of histories) and stored."""
        key = run_key(cfg, seeds, datas, stacked)
        with self._claimed(key, cfg.method):
            stored = self._read(key, cfg)
            if stored is not None:
                return stored
            histories = train()
            self._write(key, cfg, seeds, histories)
        return histories, None

    @contextmanager
    def _claimed(self, key: str, method: str):
        """Hold the run's lock (released by the system when a process dies, so never
        stale); while another page holds it, say so and wait."""
        folder = Path(self.folder)
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / f".{key}.lock", "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                print(f"{self.page}: waiting for another page training the same {method} run "
                      "(it is read when done)", flush=True)
                fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    def _read(self, key: str, cfg):
        meta_path = Path(self.folder) / f"{key}.json"
        if not meta_path.exists():
            return None
        meta = json.loads(meta_path.read_text())
        needed = set(evaluated_epochs(cfg))
        if not needed <= set(meta["evaluated"]):
            return None
        history = pd.read_csv(Path(self.folder) / f"{key}.csv")
        history["method"] = cfg.method
        blank = ~history.epoch.isin(needed)
        for column in EVALUATED:
            if column in history:
                history.loc[blank, column] = float("nan")
        return [history[history.seed == s].reset_index(drop=True) for s in meta["seeds"]], meta["page"]

    def _write(self, key: str, cfg, seeds, histories) -> None:
        """Write the run atomically (history, then its record), unless a run evaluated at
        least as often is stored already."""
        folder = Path(self.folder)
        meta_path = folder / f"{key}.json"
        evaluated = evaluated_epochs(cfg)
        if meta_path.exists() and set(evaluated) <= set(json.loads(meta_path.read_text())["evaluated"]):
            return
        atomic_write_text(folder / f"{key}.csv", pd.concat(histories, ignore_index=True).to_csv(index=False))
        atomic_write_text(meta_path, json.dumps({"page": self.page, "method": cfg.method,
                                                 "seeds": list(seeds), "evaluated": evaluated}))


def train_histories(config, seeds: list, datas: list,
                    store: RunStore | None = None) -> tuple[list, str | None]:
    """One run: ``config`` on ``datas`` (one per seed of ``seeds``; stacked when several).
    Returns (each seed's history, the page that trained it — None when trained now),
    read from ``store`` when it holds the run."""
    from ..core.training import train, train_seeds

    def fit():
        if len(seeds) == 1:
            return [train(datas[0], config, seed=seeds[0]).history]
        return [r.history for r in train_seeds(dict(zip(seeds, datas)).__getitem__, seeds, config)]
    if store is None:
        return fit(), None
    return store.histories(config, seeds, datas, len(seeds) > 1, fit)

