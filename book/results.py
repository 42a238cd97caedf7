"""Train a page at a profile on some seeds and commit them, with provenance, as one part
of its committed results (`make results`).

    python book/results.py --pages real_cifar10 --profile paper [--seeds 2 3] [--share 2]
    python book/results.py --pages real_cifar10 --profile paper --import-part FOLDER

The page's plan (its methods) is trained on ``--seeds`` (default: every seed the page
plans) as the page trains it, into ``build/results/<profile>``; at ``paper`` every run
checkpoints there, so a killed command, run again, resumes (losing at most
``checkpoint_every`` epochs). Nothing is committed until every run has reached its last
epoch: then the histories go to ``results/reference/<profile>/<page>/parts/seeds-…/`` with
``provenance.json`` (commit, settings and their fingerprint, the data's checksum,
training-code version, machine, torch, precision, layout, date, wall time, command), and the folder's
``history.csv`` and ``summary.json`` become the union of its parts
(:func:`pusupport.book.committed.add_part`, which refuses a part made with other settings
or other training code). Commit that folder; the book shows it, "n of N seeds", beside its
live run.

``--share N`` trains the jobs in N processes at once on this machine's one device (on a
GPU: two CIFAR-10 runs sharing an H200 gave 1.25–1.39× one run's throughput): N − 1 helper
processes train the plan's jobs from its end, this one from its start; they meet through
the run store, which hands each run to the first process that claims it. A seed's aaPU and
nnPU are one job (aaPU forks from nnPU's run), so N processes need N seeds.

``--import-part FOLDER`` commits runs trained elsewhere: FOLDER holds one ``*.csv``
history per run (the page's history format) and a ``provenance.json`` naming the
``commit`` that trained them and their ``data_source``; the training-code version is
computed from that commit.
Needs only the package and its core dependencies (no notebook tools, no Ray), so it runs
on a GPU machine's own Python and torch (≥ 2.11).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd
import torch

from pusupport.book import suite
from pusupport.book.committed import add_part, joinable, page_at, records
from pusupport.book.records import read_history
from pusupport.book.reference import REFERENCE, code_commit, command_line, provenance, relative
from pusupport.book.registry import book_pages
from pusupport.book.sources import data_source
from pusupport.book.runs import train_jobs
from pusupport.book.store import RunStore
from pusupport.core.identity import code_version
from pusupport.core.runtime import resolve

ROOT = Path(__file__).resolve().parent.parent
#: The pages whose committed results the book shows: their history is their plan's runs.
COMMITTABLE = ("synthetic", "real_data")


def _page(name: str, args, seeds=None):
    if args.share > 1 and args.device != "cuda":        # the processes share the CPU's cores
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // args.share))
    variant = name.partition("-")[2]           # a variant's checkpoints and runs apart from its page's
    return page_at(name, args.profile, seeds=seeds, device=args.device,
                   output_dir=str(args.output_dir / args.profile / (f"variant-{variant}" if variant else "")),
                   **({"data_dir": args.data_dir} if args.data_dir else {}))


def _help(page, helper: int, helpers: int) -> None:
    """A helper process: train every ``helpers``-th of the plan's runs from its end into the
    run store (the main process trains from the start and reads these)."""
    train_jobs(page.resolved().jobs[::-1][helper::helpers], RunStore(page.output_dir / "runs", page.name))


def _helpers(name: str, args) -> list:
    """``args.share`` − 1 helper processes for page ``name`` (:func:`_help`)."""
    same = ["--pages", name, "--profile", args.profile, "--device", args.device, "--share", str(args.share),
            "--output-dir", str(args.output_dir), *(["--data-dir", args.data_dir] if args.data_dir else []),
            *(["--seeds", *map(str, args.seeds)] if args.seeds else [])]
    n = args.share - 1
    return [subprocess.Popen([sys.executable, __file__, *same, "--helper", f"{i}/{n}"]) for i in range(n)]


def _made(page, args, line: str, wall: float, started: str, training_code: str) -> dict:
    runtime = resolve(replace(page.settings.train, device=args.device))
    layout = runtime.layout() + (f", {args.share} processes sharing the device" if args.share > 1 else "")
    return provenance(line, wall, runtime.precision(), started, layout=layout,
                      training_code=training_code, suite=suite.at(None),
                      data_source=data_source(page.dataset, page.settings.data, page.data_dir))


def _import(folder: Path, name: str, args) -> Path:
    """Commit the runs under ``folder`` (one history CSV per run, ``provenance.json``) as a part."""
    made = json.loads((folder / "provenance.json").read_text())
    if "data_source" not in made:
        raise ValueError(f"{folder / 'provenance.json'} does not say which copy of the data trained "
                         "these runs: add \"data_source\" (pusupport.book.sources.data_source "
                         "of the page's data on that copy)")
    history = pd.concat([read_history(p) for p in sorted(folder.glob("*.csv"))], ignore_index=True)
    made["training_code"] = code_version(made["commit"])
    made.setdefault("imported_from", relative(str(folder)))
    return add_part(history, name, args.profile, made, args.reference)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    pages = records(e["page"] for e in book_pages() if e["notebook"] in COMMITTABLE)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", nargs="+", required=True, choices=pages, metavar="PAGE",
                    help=f"the pages to run: {', '.join(pages)}")
    ap.add_argument("--profile", default="paper", choices=["cpu", "paper", "smoke"])
    ap.add_argument("--seeds", type=int, nargs="+", default=None,
                    help="the seeds of this part (default: every seed the page plans)")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--share", type=int, default=1, help="processes training at once (one device)")
    ap.add_argument("--output-dir", type=Path, default=ROOT / "build" / "results")
    ap.add_argument("--import-part", type=Path, default=None, metavar="FOLDER")
    ap.add_argument("--reference", type=Path, default=REFERENCE, help=argparse.SUPPRESS)
    ap.add_argument("--helper", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.helper:
        i, n = map(int, args.helper.split("/"))
        _help(_page(args.pages[0], args, args.seeds), i, n)
        return 0
    line = command_line("book/results.py", argv)
    for name in args.pages:
        if args.import_part:
            print(f"{name}: committed to {relative(str(_import(args.import_part, name, args)))}")
            continue
        start, started, training_code = time.perf_counter(), code_commit(), code_version()
        if started == "unknown":
            print("not started: this copy has no .git to say which commit it is, and a part must "
                  "name the commit that trained it: set PUSUPPORT_COMMIT=<the commit you copied> "
                  "(git rev-parse HEAD where you made the copy)", file=sys.stderr)
            return 2
        page = _page(name, args, args.seeds)
        try:                                               # refused before, not after, the training
            joinable(name, args.profile, page.seeds, {"commit": started, "training_code": training_code,
                     "suite": suite.at(None),
                     "data_source": data_source(page.dataset, page.settings.data, page.data_dir)},
                     args.reference)
        except ValueError as refused:
            print(f"not started: {refused}", file=sys.stderr)
            return 2
        print(page.describe(), flush=True)
        helpers = _helpers(name, args) if args.share > 1 else []
        try:
            history = page.run()
        except KeyboardInterrupt:
            print(f"\n{name}: stopped; nothing committed. Run the same command again: it resumes "
                  "from its checkpoints", file=sys.stderr)
            return 130
        finally:
            for helper in helpers:
                helper.wait()
        made = _made(page, args, line, time.perf_counter() - start, started, training_code)
        part = add_part(history, name, args.profile, made, args.reference)
        print(f"{name}: seeds {page.seeds} committed to {relative(str(part))} — add "
              f"{relative(str(part.parent.parent))} to git")
    return 0


if __name__ == "__main__":
    sys.exit(main())
