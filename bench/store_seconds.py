"""Training seconds a build spent, from its run store (one thread a run in `make book`).

    python bench/store_seconds.py results/runs [other/results/runs …]

Each stored run's clock is its history's ``wall_time`` (a stacked run's seeds share one
clock; a whole stored result, one seed, its own). A forked run's history (aaPU's) starts
with its trunk's rows, clock included (:mod:`pusupport.core.forks`), as does a trunk's state
kept at a fork (``trunk-*.pt``): the clocks form a tree, and each stretch of it is counted
once — a history's seconds are those after the last of its clock readings already counted.
Prints the seconds per page that trained the runs and in all.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import torch

from pusupport.book.records import read_history


def clocks(store: Path) -> list[tuple[str, list[float]]]:
    """(page, clock readings) of every stored run and trunk state in ``store``."""
    out = []
    for meta in sorted(store.glob("*.json")):
        wall = read_history(meta.with_suffix(".csv")).wall_time
        out.append((json.loads(meta.read_text())["page"], wall.drop_duplicates().tolist()))
    for path in sorted(store.glob("trunk-*.pt")):
        kept = torch.load(path, weights_only=False)
        out.append((kept.get("page", "?"), [row["wall_time"] for row in kept["state"]["history"][0]]))
    return out


def own_seconds(store: Path) -> Counter:
    """{page: training seconds} of the runs in ``store``, each shared stretch counted once."""
    counted, out = set(), Counter()
    for page, times in clocks(store):
        shared = [t for t in times if t in counted]
        out[page] += times[-1] - (shared[-1] if shared else 0.0)
        counted.update(times)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stores", nargs="+", type=Path, metavar="RUNS",
                    help="a run store: a build's <output-dir>/runs folder (e.g. results/runs)")
    args = ap.parse_args(argv)
    for folder in args.stores:
        if not any(folder.glob("*.json")):
            ap.error(f"{folder} holds no stored run: name a build's run store, e.g. results/runs")
        pages = own_seconds(folder)
        runs = len(list(folder.glob("*.json")))
        print(f"{folder}: {sum(pages.values()):,.0f} s training in {runs} stored runs")
        for page, seconds in pages.most_common():
            print(f"  {page:20s} {seconds:8,.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
