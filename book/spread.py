"""Measure the run-to-run spread of each data set's aaPU-vs-nnPU comparison (`make spread`).

A seed fixes data and initialisation, not the outcome: the same runs summed in another
order (another thread count) end elsewhere. This runs each data set's comparison page
again, in this process with ``--threads`` threads, and compares its paired aaPU − nnPU
difference of final test error with the book's own results (``--reference``, written by
`make book`, whose Ray tasks use one thread each). The spread of a data set is the larger
shift of the two ends of its 95 % interval. Written, with provenance, to
``results/reference/<profile>/spread.json``; the summary shows it beside the seeds' own
spread (it is not a floor of the verdicts: the interval covers noise of this size).

    python book/spread.py --reference results --threads 2
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

from pusupport.book.claims import lower_error
from pusupport.book.pages import resolve_page
from pusupport.book.records import read_history
from pusupport.book.reference import code_commit, command_line, provenance, spread_path
from pusupport.core.atomic import atomic_write_text
from pusupport.core.runtime import resolve
from pusupport.data.files import DatasetNotFoundError

#: Each data set and the page whose aaPU-vs-nnPU comparison measures its spread.
PAGES = {"synthetic": ("synthetic", "synthetic"), "cifar10": ("real_data", "real_cifar10"),
         "cifar100": ("real_data", "real_cifar100"), "20news": ("real_data", "real_20news"),
         "fashion_mnist": ("real_data", "real_fashion_mnist")}
COMPARE = lower_error("aapu", "nnpu")


def _page(notebook: str, dataset: str, profile: str, data_dir, output_dir):
    params = {"profile": profile, "device": "cpu", "seeds": None, "data_dir": data_dir,
              "output_dir": output_dir, "dry_run": 0, "checkpoints": None, "runner": None,
              "epochs": None, "lr": None, "n_select": None, "select_from": None}
    if notebook == "real_data":
        params.update(dataset=dataset, n_unlabeled=None)
    return resolve_page(notebook, **params)


def measure(dataset: str, notebook: str, folder: str, args) -> dict | None:
    reference = Path(args.reference) / folder
    summary = json.loads((reference / "summary.json").read_text()) if (reference / "summary.json").exists() else None
    page = _page(notebook, dataset, args.profile, args.data_dir, args.output_dir)
    if summary is None or summary.get("status") != "run":
        print(f"{dataset}: no results of '{folder}' under {args.reference}: run `make book` first; skipped")
        return None
    if summary.get("fingerprint") != page.fingerprint():
        sys.exit(f"{dataset}: {reference} was made with other settings than the code's: rebuild "
                 "the book (`make book`) before measuring the spread")
    try:
        make_data = page.data()
    except DatasetNotFoundError as err:
        print(f"{dataset}: {str(err).splitlines()[0]}; skipped")
        return None
    start = time.perf_counter()
    history = page.run(make_data=make_data)
    page.save(history)
    ours = COMPARE({}, history).paired
    theirs = COMPARE(summary, read_history(reference / "history.csv")).paired
    print(f"{dataset}: book {theirs.interval()}, re-run {ours.interval()} "
          f"({time.perf_counter() - start:.0f} s)")
    shifts = [abs(a - b) for a, b in zip(ours.differences, theirs.differences)]
    return {"page": folder, "fingerprint": page.fingerprint(), "seeds": ours.n,
            "spread": round(max(abs(ours.low - theirs.low), abs(ours.high - theirs.high)), 6),
            "per_seed": round(max(shifts), 6), "mean_shift": round(abs(ours.mean - theirs.mean), 6),
            "threads": [args.reference_threads, args.threads],
            "book": [theirs.low, theirs.mean, theirs.high], "rerun": [ours.low, ours.mean, ours.high]}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", default="results", help="the book's results (make book)")
    parser.add_argument("--output-dir", default="build/spread/results")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--reference-threads", type=int, default=1)
    parser.add_argument("--datasets", nargs="*", default=list(PAGES), choices=list(PAGES))
    args = parser.parse_args(argv)
    if args.threads == args.reference_threads:
        parser.error("--threads must differ from --reference-threads: the point is another order of sums")
    torch.set_num_threads(args.threads)
    path = spread_path(args.profile)
    out = json.loads(path.read_text())["datasets"] if path.exists() else {}    # keep the others
    runtime = resolve(_page("synthetic", "synthetic", args.profile, None, args.output_dir).settings.train)
    command = command_line("book/spread.py", argv or sys.argv[1:])
    for dataset in args.datasets:
        notebook, folder = PAGES[dataset]
        start, started = time.perf_counter(), code_commit()
        record = measure(dataset, notebook, folder, args)
        if record:
            out[dataset] = {**record, "provenance": provenance(command, time.perf_counter() - start,
                                                                runtime.describe(), started)}
            atomic_write_text(path, json.dumps({"profile": args.profile, "datasets": out}, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
