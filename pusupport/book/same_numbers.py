"""Older training code shown to train today's numbers: the committed runs it trained stay read.

Any change to the code that trains moves every run's key
(:func:`~pusupport.core.identity.code_version`), so a refactor would leave every committed
run stale. ``make same-numbers`` (:func:`prove`) runs the reference suite
(:mod:`~pusupport.book.suite`) at each commit that trained a committed run and in this
checkout. Where every suite run that a method's runs reach — nnPU's and aaPU's, on every
model and path (forks, stacked seeds, sparse rows, the clamp, a held-out split), and the
method's own — gives the same numbers at both, it records that method's old code version
as today's in the runs' folder (:data:`FILE`), with the commit and the runs compared; a
build then reads those runs under their old keys (:func:`older`), each keeping where, when
and by which commit it was trained. The rule is the one committed parts combine by
(:func:`~pusupport.book.committed.joinable`). The suite runs float64 on the CPU: bf16 and
CUDA arithmetic stay checked by ``make check-runs``, which trains the first run of each
method again.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ..core.atomic import atomic_write_text
from ..core.identity import code_version
from . import suite

#: The record of the proofs, beside the runs they keep.
FILE = "same_numbers.json"
#: Files of a committed runs folder that are not runs.
NOT_RUNS = ("index.json", FILE)


def run_records(folder: Path) -> list[Path]:
    """The records (``<key>.json``) of the runs in ``folder``."""
    return sorted(p for p in Path(folder).glob("*.json") if p.name not in NOT_RUNS)


def older(method: str, folder: Path | None) -> list[str]:
    """The code versions of ``method`` that ``folder``'s proofs show to train the same
    numbers as today's."""
    path = Path(folder) / FILE if folder is not None else None
    if path is None or not path.exists():
        return []
    today = code_version(methods=[method])
    return [p["code"] for p in json.loads(path.read_text())["proofs"]
            if p["method"] == method and p["same_as"] == today]


def _carried(earlier: list[dict], proofs: list[dict]) -> list[dict]:
    """The code versions an earlier proof showed to train the same numbers as a version
    proven today — that proof's today (what an index of then records) and the others it
    kept: the same as today's too (each proof of today's ``proofs`` ``via`` it)."""
    out = []
    for method, then in sorted({(p["method"], p["same_as"]) for p in earlier}):
        equal = {then} | {p["code"] for p in earlier if p["method"] == method and p["same_as"] == then}
        proven = next((q for q in proofs if q["method"] == method and q["code"] in equal), None)
        if proven is not None:
            known = {q["code"] for q in proofs if q["method"] == method} | {proven["same_as"]}
            out += [{**proven, "code": code, "via": proven["code"]} for code in sorted(equal - known)]
    return out


def reached(method: str) -> list[str]:
    """The suite runs (:data:`~pusupport.book.suite.RUNS`) whose numbers a run of ``method``
    can depend on: nnPU's and aaPU's on every model and path, and those of the methods it
    trains as or is scored beside."""
    from ..core.methods import METHODS
    own = {method, METHODS[method].before_selection, METHODS[method].view_of} - {None}
    return [name for name, (_, methods, *_) in suite.RUNS.items()
            if set(methods) <= {"nnpu", "aapu"} or own & set(methods)]


def prove(folder: Path, suite_at=suite.at) -> list[dict]:
    """Write ``folder``'s proofs (:data:`FILE`, none where no run is of older code): for
    each method and older code version of its committed runs, the suite runs it reaches
    (:func:`reached`) compared at the commit that trained them — whose own identity must
    give that version — and here (``suite_at(commit)``; None: this checkout). Returns one
    row per (method, older code): ``proven``, or why not (those runs stay stale)."""
    moved = {}
    for path in run_records(folder):
        meta = json.loads(path.read_text())
        if meta["trained"]["code"] != code_version(methods=[meta["method"]]):
            moved.setdefault((meta["method"], meta["trained"]["code"]), meta["trained"]["commit"])
    proofs, rows = [], []
    for (method, old), commit in sorted(moved.items()):
        row = {"method": method, "code": old, "commit": commit, "proven": False}
        rows.append(row)
        commit = commit.split("+")[0]            # "+uncommitted changes" outside its training code is no matter
        try:
            then, now = suite_at(commit), suite_at(None)
        except (RuntimeError, subprocess.CalledProcessError) as err:
            row["why"] = f"the reference suite could not run at {commit[:12]} ({str(err)[:120]}): fetch that commit"
            continue
        codes = then.get(suite.CODE)
        there = codes.get(method) if isinstance(codes, dict) else codes
        if there != old:
            row["why"] = (f"its training code is not its commit's ({there}): it was trained from "
                          "uncommitted changes to the training code")
            continue
        runs = reached(method)
        found = suite.first_difference(then, now, runs=runs)
        if found:
            row["why"] = f"the reference suite's run {found[0]!r}: {found[1]}"
            continue
        row["proven"] = True
        proofs.append({"method": method, "code": old, "same_as": code_version(methods=[method]),
                       "commit": row["commit"], "suite_runs_equal": runs})
    path = Path(folder) / FILE
    proofs += _carried(json.loads(path.read_text())["proofs"] if path.exists() else [], proofs)
    if proofs:
        atomic_write_text(path, json.dumps({"proofs": proofs}, indent=1) + "\n")
    else:
        path.unlink(missing_ok=True)
    return rows
