"""The book's run store: a run is trained once per output folder.

A run — one method's settings on some seeds' data — is known by its key: every setting
that shapes its numbers, the seeds, a checksum of each seed's data, the version of the code
that trains it (its method's: :func:`~pusupport.core.identity.code_version`), and how it
runs (device, threads, stacked or one by one). A page that needs a run already in the
store (trained by another page of the build, or by an earlier build into the same
folder) reads its history instead of training it again, provided the stored run was
evaluated at every epoch the page evaluates; its test metrics at other epochs are
blanked, so the page gets the history it would have written itself. Pages running at the
same time (``--workers``) share the store: a run is claimed with a lock on its key, and
a page that needs a run another page is training waits for it and reads it. One format:
a run is ``<key>.csv`` (its history, float32 columns in float32's digits:
:func:`~pusupport.book.records.history_csv`), ``<key>.json`` (its record), and ``<key>.pt`` with
what its page keeps beside the history (model, S, U's losses, threshold), where it keeps
any; a trunk's state at a fork epoch is ``trunk-<key>.pt``.
"""
from __future__ import annotations

import fcntl
import gzip
import hashlib
import json
import os
import time
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import pandas as pd
import torch

from ..core.atomic import atomic_write_text, replacing
from ..core.identity import NOT_RESULTS, code_version, data_identity
from ..core.forks import shared_settings
from ..core.methods import VIEW_PREFIX
from ..core.runtime import resolve
from ..core.training import RunResult, fit_shared
from .records import history_csv, read_history
from .reference import REFERENCE, code_commit, cpu_model, fingerprint
from .same_numbers import older, run_records

#: Left out of a run's key: what never changes its numbers, the seed (the key lists the
#: seeds) and how often it is evaluated (checked apart).
NOT_IN_KEY = (*NOT_RESULTS, "seed", "eval_every")
#: History columns that exist only at evaluated epochs (and each view's test error).
EVALUATED = ("test_error", "test_auc", "test_ap", "train_error", "val_risk")


def evaluated_only(column: str) -> bool:
    """Whether a history column exists only at evaluated epochs (blanked at the others)."""
    return column in EVALUATED or column.startswith(VIEW_PREFIX)


def run_key(cfg, seeds, datas, stacked: bool, settings: dict | None = None,
            portable: bool = False, code: str | None = None) -> str:
    """The key of training ``cfg`` on ``datas`` (one per seed of ``seeds``): its settings
    (or ``settings``), seeds, data, training code (or the version ``code``), the device
    choices that change numbers, threads and layout. ``portable``: without what only this
    machine decides (threads, precision, the CPU's instructions: :func:`trained_on` records
    them), the key under which another machine may read the run, saying where it was
    trained."""
    if settings is None:
        settings = {k: v for k, v in asdict(cfg).items() if k not in NOT_IN_KEY}
    runtime = resolve(cfg).numbers()
    what = {"settings": settings, "seeds": list(seeds), "data": [data_identity(d) for d in datas],
            "code": code or code_version(methods=[settings["method"]]), "stacked": stacked, **(
                {"device": runtime["device"]} if portable else
                {"runtime": runtime, "threads": torch.get_num_threads()})}
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()[:20]


def trained_on(cfg) -> dict:
    """Where and how a run is trained now: the commit, machine, CPU or GPU, precision,
    threads and date (a stored run's provenance)."""
    runtime = resolve(cfg)
    return {"commit": code_commit(), "code": code_version(methods=[cfg.method]), "cpu": cpu_model(),
            "gpu": torch.cuda.get_device_name(runtime.device) if runtime.device.type == "cuda" else None,
            "precision": runtime.precision(), "numbers": runtime.numbers(),
            "threads": torch.get_num_threads(), "torch": torch.__version__,
            "date": time.strftime("%Y-%m-%d %H:%M %Z")}


def trunk_key(cfg, seeds, datas, stacked: bool, epoch: int) -> str:
    """The key of a trunk's state at fork epoch ``epoch``: its first epochs' settings
    (:func:`~pusupport.core.forks.shared_settings`, less how often they were evaluated:
    checked apart), data and the rest of :func:`run_key`."""
    settings = {**{k: v for k, v in shared_settings(cfg).items() if k != "eval_every"}, "at": epoch}
    return "trunk-" + run_key(cfg, seeds, datas, stacked, settings)


#: Set by ``make book FRESH=1``: every run trained here, none read from the committed runs.
FRESH = "PUSUPPORT_FRESH"
#: Set by ``make check-runs``: each page trains again the first run of each method that it
#: would read from the committed runs (one seed where seeds train one by one), reads the
#: rest, and keeps what it trained in its store, to be held against the committed runs
#: (:func:`check_runs`).
CHECK = "PUSUPPORT_CHECK"


def checking() -> bool:
    """Whether this is a check build (``$PUSUPPORT_CHECK``, :data:`CHECK`)."""
    return bool(os.environ.get(CHECK))


def committed_runs(profile: str) -> Path | None:
    """The runs committed with the book at ``profile`` (:func:`commit_runs`), None where
    there are none or ``$PUSUPPORT_FRESH`` is set."""
    folder = REFERENCE / profile / "runs"
    return None if os.environ.get(FRESH) or not folder.is_dir() else folder


def evaluated_epochs(cfg) -> list[int]:
    return [e for e in cfg.visited_epochs() if cfg.evaluates_at(e)]


@dataclass(frozen=True)
class RunStore:
    """The runs under ``folder``; ``trainer``: who asks (a page of the book, recorded as
    the run's trainer); ``committed``: a folder of runs committed with the book
    (:func:`commit_runs`), read by their portable key where ``folder`` lacks a run;
    ``again``: train again the first of them of each method (``make check-runs``)."""

    folder: Path
    trainer: str
    committed: Path | None = None
    again: bool = False

    def runs(self, runs: list[tuple], stacked: bool, train) -> list[tuple[list, str | None]]:
        """Each run's (results, one per seed, the page that trained it, None if trained now)
        of ``runs`` [(config, seeds, datas, keeps)]: read from the store when it holds the
        run evaluated at every epoch the config evaluates, with what it ``keeps``; the
        others ``train(indices)``ed now, together (a list of
        :class:`~pusupport.core.training.RunResult` per index), and stored. A run another
        page holds is waited for, then read (or trained, if that page failed)."""
        keys = [run_key(cfg, seeds, datas, stacked) for cfg, seeds, datas, _ in runs]
        out, waiting = {}, []
        with ExitStack() as held:
            todo = []
            for i, key in enumerate(keys):
                if not held.enter_context(self._claimed(key, runs[i][0].method, wait=False)):
                    waiting.append(i)
                elif (stored := self._read(key, *runs[i])) is not None or (
                        (stored := self._committed(stacked, *runs[i])) is not None
                        and not self._again(runs[i][0].method)):
                    out[i] = stored
                else:
                    todo.append(i)
            for i, results, seconds in _timed(train, todo):
                self._write(keys[i], *runs[i], results, stacked, seconds)
                out[i] = results, None
        for i in waiting:
            with self._claimed(keys[i], runs[i][0].method, wait=True):
                stored = self._read(keys[i], *runs[i]) or self._committed(stacked, *runs[i])
                if stored is None:
                    [(_, results, seconds)] = _timed(train, [i])
                    self._write(keys[i], *runs[i], results, stacked, seconds)
                    stored = results, None
                out[i] = stored
        return [out[i] for i in range(len(runs))]

    def get(self, cfg, seeds, datas, stacked: bool, epoch: int) -> dict | None:
        """A trunk's state at ``epoch`` (:class:`~pusupport.core.forks.TrunkStates`), if kept
        and evaluated at every epoch ``cfg`` evaluates up to it (its test metrics at other
        epochs blanked, as :meth:`runs` does)."""
        path = Path(self.folder) / f"{trunk_key(cfg, seeds, datas, stacked, epoch)}.pt"
        if not path.exists():
            return None
        kept = torch.load(path, weights_only=False)
        needed = {e for e in evaluated_epochs(cfg) if e <= epoch}
        if not needed <= set(kept["evaluated"]):
            return None
        for rows in kept["state"]["history"]:
            for row in (r for r in rows if r["epoch"] not in needed):
                row.update({k: float("nan") for k in row if evaluated_only(k)})
        return kept["state"]

    def put(self, cfg, seeds, datas, stacked: bool, epoch: int, state: dict) -> None:
        """Keep a trunk's state at ``epoch`` for the branches of later jobs and builds."""
        with replacing(Path(self.folder) / f"{trunk_key(cfg, seeds, datas, stacked, epoch)}.pt") as tmp:
            torch.save({"page": self.trainer, "evaluated": evaluated_epochs(cfg), "state": state}, tmp)

    @contextmanager
    def _claimed(self, key: str, method: str, wait: bool):
        """Hold the run's lock (released by the system when a process dies, so never
        stale); yields False, without waiting, while another page holds it (``wait``:
        say so and wait for it)."""
        folder = Path(self.folder)
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / f".{key}.lock", "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if not wait:
                    yield False
                    return
                print(f"{self.trainer}: waiting for another page training the same {method} run "
                      "(it is read when done)", flush=True)
                fcntl.flock(lock, fcntl.LOCK_EX)
            yield True

    def _again(self, method: str) -> bool:
        """Whether to train again a committed run of ``method`` (with ``again``: the first
        this page asks for; a mark in the store remembers it across its calls)."""
        mark = Path(self.folder) / f".again-{self.trainer}-{method}"
        if not self.again or mark.exists():
            return False
        mark.touch()
        return True

    def _portable(self, cfg, seeds, datas, stacked: bool) -> list[str]:
        """The run's portable keys: under today's training code, then under each older
        version the committed folder's proofs show to train the same numbers
        (:mod:`~pusupport.book.same_numbers`)."""
        return [run_key(cfg, seeds, datas, stacked, portable=True, code=code)
                for code in (None, *older(cfg.method, self.committed))]

    def _committed(self, stacked: bool, cfg, seeds, datas, keeps) -> tuple[list, str] | None:
        """The run from the committed folder, by its portable key, said to be committed and
        where it was trained."""
        if self.committed is None:
            return None
        key, read = next(((key, found) for key in self._portable(cfg, seeds, datas, stacked) if (
            found := self._read(key, cfg, seeds, datas, keeps, Path(self.committed), ".csv.gz"))), (None, None))
        if read is None:
            return None
        made = json.loads((Path(self.committed) / f"{key}.json").read_text())["trained"]
        where = made["cpu"] if made["gpu"] is None else made["gpu"]
        precision = "bf16" if made["numbers"]["bf16"] else "float32"
        return read[0], f"{read[1]}, committed: {where}, {precision}, {made['date'][:10]}, " \
                        f"commit {made['commit'][:7]}"

    def holds(self, job, datas: list) -> bool:
        """Whether every run of ``job`` (on ``datas``, as :func:`train_runs` gets them) can be
        read, here or committed: then none of them trains."""
        return all(self._meta(run_key(cfg, seeds, d, job.stacked), cfg, keeps) is not None
                   or (self.committed is not None and any(
                       self._meta(key, cfg, keeps, Path(self.committed)) is not None
                       for key in self._portable(cfg, seeds, d, job.stacked)))
                   for cfg, seeds, d, keeps in _runs(job, datas))

    def _note(self, key: str, keeps) -> None:
        """Note in the store that this page used the run of portable key ``key`` and read
        ``keeps`` of it beside the history (:func:`used_runs`)."""
        what = {"page": self.trainer, "run": key, "keeps": sorted(keeps)}
        path = Path(self.folder) / USES / f"{fingerprint(what)}.json"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, json.dumps(what))

    def _meta(self, key: str, cfg, keeps, folder: Path | None = None) -> dict | None:
        """The record of run ``key`` in ``folder`` (default: the store's) if it was evaluated
        at every epoch ``cfg`` evaluates and keeps what ``keeps`` names."""
        meta_path = Path(self.folder if folder is None else folder) / f"{key}.json"
        if not meta_path.exists():
            return None
        meta = json.loads(meta_path.read_text())
        needed = set(evaluated_epochs(cfg))
        if not needed <= set(meta["evaluated"]) or not set(keeps) <= set(meta.get("kept", ())):
            return None
        return meta

    def _read(self, key: str, cfg, seeds, datas, keeps, folder: Path | None = None,
              suffix: str = ".csv") -> tuple[list, str] | None:
        """The run ``key`` from ``folder`` (default: the store's) if it was evaluated at every
        epoch ``cfg`` evaluates and keeps what ``keeps`` names; and who trained it."""
        folder = Path(self.folder if folder is None else folder)
        if (meta := self._meta(key, cfg, keeps, folder)) is None:
            return None
        self._note(meta.get("portable", key), keeps)       # a committed record is under its portable key
        needed = set(evaluated_epochs(cfg))
        history = read_history(folder / f"{key}{suffix}", meta.get("float32", ()))
        history["method"] = cfg.method
        blank = ~history.epoch.isin(needed)
        for column in history.columns:
            if evaluated_only(column):
                history.loc[blank, column] = float("nan")
        kept = torch.load(folder / f"{key}.pt", weights_only=False) if keeps else [{}] * len(seeds)
        return [RunResult(history[history.seed == s].reset_index(drop=True), extra.get("model"),
                          extra.get("selected"), replace(cfg, seed=s), extra.get("u_losses", {}),
                          extra.get("threshold"))
                for s, extra in zip(meta["seeds"], kept)], f"the {meta['page']} page"

    def _write(self, key: str, cfg, seeds, datas, keeps, results, stacked: bool,
               seconds: float | None = None) -> None:
        """Write the run atomically (history and kept results, then its record, with its
        share of the ``seconds`` its job trained: :func:`training_seconds`), unless a run
        evaluated at least as often, keeping as much, is stored already."""
        folder = Path(self.folder)
        meta_path = folder / f"{key}.json"
        evaluated = evaluated_epochs(cfg)
        portable = self._portable(cfg, seeds, datas, stacked)
        self._note(portable[0], keeps)
        if meta_path.exists():
            meta = json.loads(meta_path.read_text())
            if set(evaluated) <= set(meta["evaluated"]) and set(keeps) <= set(meta.get("kept", ())):
                return
        text, float32 = history_csv(pd.concat([r.history for r in results], ignore_index=True))
        atomic_write_text(folder / f"{key}.csv", text)
        if keeps:
            with replacing(folder / f"{key}.pt") as tmp:
                torch.save([{k: getattr(r, k) for k in keeps} for r in results], tmp)
        atomic_write_text(meta_path, json.dumps({
            "page": self.trainer, "method": cfg.method, "seeds": list(seeds), "evaluated": evaluated,
            "kept": list(keeps), "float32": float32, "portable": portable[0], "same_numbers_as": portable[1:],
            "trained": {**trained_on(cfg), "seconds": None if seconds is None else round(seconds, 1)}}))


def _timed(train, todo: list[int]) -> list[tuple[int, list, float]]:
    """(index, results, its share of the seconds) of the runs ``todo`` trained together by
    ``train`` (one job: a trunk, its branches and their stacked seeds)."""
    if not todo:
        return []
    start = time.perf_counter()
    results = train(todo)
    share = (time.perf_counter() - start) / len(todo)
    return [(i, r, share) for i, r in zip(todo, results)]


def training_seconds(records) -> dict[str, float]:
    """{page: seconds} its runs' jobs trained, one worker each, from the run records
    ``records`` (paths of a store's ``<key>.json``; runs trained before the records held
    their time are left out): where a build's training time went."""
    out: dict = {}
    for path in records:
        meta = json.loads(Path(path).read_text())
        if (seconds := meta["trained"].get("seconds")) is not None:
            out[meta["page"]] = out.get(meta["page"], 0.0) + seconds
    return dict(sorted(out.items(), key=lambda item: -item[1]))


def train_runs(job, datas: list, store: RunStore | None = None) -> list[tuple[list, str | None]]:
    """A job's runs (:class:`~pusupport.book.plan.Job`): run i is ``job.configs[i]`` on
    ``datas[i]`` (one PUData per seed of ``job.seeds``), trained as the job lays them out,
    an aaPU run forked from its nnPU run (:func:`~pusupport.core.training.fit_shared`), whose
    state at the fork the store keeps for the branches of later jobs. Returns each run's
    (results, one :class:`~pusupport.core.training.RunResult` per seed, the page that
    trained it — None when trained now): a run ``store`` holds is read, its results
    holding the history and what the run keeps; one another page is training is waited
    for and read."""
    def fit(runs: list[int]) -> list[list]:
        return fit_shared([datas[i] for i in runs], list(job.seeds), [job.configs[i] for i in runs],
                          job.stacked, job.together, store)
    everything = list(range(len(job.configs)))
    if store is None:
        return [(r, None) for r in fit(everything)]
    return store.runs(_runs(job, datas), job.stacked, fit)


def _runs(job, datas: list) -> list[tuple]:
    """A job's runs as the store takes them: (config, seeds, data, what it keeps)."""
    return [(r.cfg, job.seeds, d, r.keeps) for r, d in zip(job.runs, datas)]


#: The largest kept file committed with a run (bytes): a run that keeps more is not committed
#: (:func:`committable`), and its page trains it.
MAX_KEPT = 2 * 2**20


#: The store's subfolder of notes: which page used which run, reading what beside its history.
USES = "uses"


def used_runs(store: Path) -> dict[str, dict[str, list]]:
    """{page: {portable key: what it read of the run beside the history}} of every run a
    build's pages trained or read (:meth:`RunStore._note`)."""
    uses: dict = {}
    for path in sorted((Path(store) / USES).glob("*.json")):
        note = json.loads(path.read_text())
        runs = uses.setdefault(note["page"], {})
        runs[note["run"]] = sorted({*runs.get(note["run"], []), *note["keeps"]})
    return uses


def prune_runs(committed: Path, index: dict) -> dict | None:
    """Remove from ``committed`` the runs of the indexed pages that none of those pages uses
    (each page's ``runs`` in ``index``: what it trained or read in the build that indexed
    it, :func:`used_runs`) — runs of settings no page has any more — and the kept results
    (model, S, …) that no page reads. None, removing nothing, while an indexed page's uses
    are unrecorded; runs of pages outside the index are left."""
    pages = index["pages"]
    if any("runs" not in entry for entry in pages.values()):
        return None
    needed: dict = {}
    for entry in pages.values():
        for key, keeps in entry["runs"].items():
            needed.setdefault(key, set()).update(keeps)
    removed = stripped = 0
    for meta_path in run_records(committed):
        meta = json.loads(meta_path.read_text())
        if meta["page"] not in pages:
            continue
        if meta_path.stem not in needed:
            for path in Path(committed).glob(f"{meta_path.stem}.*"):
                path.unlink()
            removed += 1
        elif meta["kept"] and not needed[meta_path.stem]:
            meta_path.with_suffix(".pt").unlink()
            atomic_write_text(meta_path, json.dumps({**meta, "kept": []}, indent=1))
            stripped += 1
    return {"removed": removed, "stripped": stripped}


def committable(meta_path: Path, committed: Path | None) -> dict | None:
    """The record to commit of a stored run (``meta_path``); None where ``committed`` holds
    it already, evaluated as often and keeping as much, or where what it keeps is beyond
    :data:`MAX_KEPT`: its page reads that, so a build would train it again (the prior page's
    20 News estimator, whose model is 24 MB)."""
    meta = json.loads(Path(meta_path).read_text())
    if meta["kept"] and Path(meta_path).with_suffix(".pt").stat().st_size > MAX_KEPT:
        return None
    target = Path(committed) / f"{meta['portable']}.json" if committed is not None else None
    if target is not None and target.exists():
        there = json.loads(target.read_text())
        if set(meta["evaluated"]) <= set(there["evaluated"]) and set(meta["kept"]) <= set(there["kept"]):
            return None
    return meta


def commit_runs(store: Path, committed: Path) -> dict:
    """Copy the runs of a build's run ``store`` trained by today's training code into
    ``committed`` under their portable keys (:func:`run_key`): the history as
    ``<key>.csv.gz``, its record (who trained it, where, when: :func:`trained_on`), and what
    it keeps up to :data:`MAX_KEPT` bytes. Committed runs of other training code are
    stale and removed, unless shown to train the same numbers
    (:mod:`~pusupport.book.same_numbers`); a run committed again replaces its copy under
    such older code. Returns how many runs were added, kept and removed."""
    committed = Path(committed)
    committed.mkdir(parents=True, exist_ok=True)

    def today(meta) -> bool:                 # trained by today's code for its method, or the same numbers'
        code = meta.get("trained", {}).get("code")
        return code == code_version(methods=[meta["method"]]) or code in older(meta["method"], committed)

    def remove(key: str) -> None:
        for path in committed.glob(f"{key}.*"):
            path.unlink()
    removed = 0
    for meta_path in run_records(committed):
        if not today(json.loads(meta_path.read_text())):
            remove(meta_path.stem)
            removed += 1
    added = 0
    for meta_path in run_records(store):
        meta = json.loads(meta_path.read_text())
        if not today(meta):
            continue
        if (meta := committable(meta_path, committed)) is None:
            continue
        key, kept, target = meta["portable"], meta_path.with_suffix(".pt"), committed / f"{meta['portable']}.json"
        csv = meta_path.with_suffix(".csv").read_bytes()
        with replacing(committed / f"{key}.csv.gz") as tmp:
            Path(tmp).write_bytes(gzip.compress(csv, mtime=0))
        if meta["kept"]:
            with replacing(committed / f"{key}.pt") as tmp:
                Path(tmp).write_bytes(kept.read_bytes())
        for key in meta.get("same_numbers_as", []):
            remove(key)
        atomic_write_text(target, json.dumps({k: v for k, v in meta.items()
                                              if k not in ("portable", "same_numbers_as")}, indent=1))
        added += 1
    total = len(run_records(committed))
    return {"added": added, "committed": total, "removed": removed}


def check_runs(store: Path, committed: Path) -> list[dict]:
    """Each run of ``store`` (runs trained again) that ``committed`` also holds, its history
    held against the committed one at the epochs the store's run was evaluated at:
    ``equal`` (every number but the wall time), else the largest difference of its final
    test error across seeds; ``same_machine``: trained on the same CPU or GPU, at the same
    precision and threads (where equal is expected; elsewhere the run-to-run spread is)."""
    out = []
    for meta_path in run_records(store):
        meta = json.loads(meta_path.read_text())
        there = next((path for key in [meta.get("portable"), *meta.get("same_numbers_as", [])]
                      if (path := Path(committed) / f"{key}.json").exists()), None)
        if there is None:
            continue
        record = json.loads(there.read_text())
        made = record["trained"]
        ours = read_history(meta_path.with_suffix(".csv"), meta.get("float32", ())).drop(columns="wall_time")
        theirs = read_history(there.with_suffix(".csv.gz"), record.get("float32", ())).drop(columns="wall_time")
        blank = ~theirs.epoch.isin(meta["evaluated"])     # a run another page evaluated more often
        theirs.loc[blank, [c for c in theirs.columns if evaluated_only(c)]] = float("nan")
        last = [h[h.epoch == h.epoch.max()].set_index("seed").test_error for h in (ours, theirs)]
        out.append({"page": meta["page"], "method": meta["method"], "seeds": meta["seeds"],
                    "equal": ours.equals(theirs[ours.columns]) if set(ours) == set(theirs) else False,
                    "final_error_difference": float((last[0] - last[1]).abs().max()),
                    "same_machine": all(meta["trained"][k] == made[k] for k in ("cpu", "gpu", "numbers", "threads")),
                    "committed": made})
    return out
