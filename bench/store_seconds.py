"""Training seconds a build spent, from its run store (one thread a run in `make book`).

    python bench/store_seconds.py results/runs [other/results/runs …]

Each stored run's clock is its history's ``wall_time`` at its last epoch (a stacked run's
seeds share one clock; a whole stored result, one seed, its own). A forked run's history
(aaPU's) starts with its trunk's rows, clock included (:mod:`pusupport.core.forks`): its
own seconds are counted from the last of those. Prints the seconds per page that trained the
runs and in all.
"""
from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import torch

from pusupport.book.records import read_history
from pusupport.core.methods import get_method


def own_seconds(store: Path) -> Counter:
    """{page: training seconds} of the runs in ``store``."""
    clocks = {}
    for meta in store.glob("*.json"):
        wall = read_history(meta.with_suffix(".csv")).wall_time
        clocks[meta] = json.loads(meta.read_text()), wall.drop_duplicates().tolist()
    seen = Counter(t for _, times in clocks.values() for t in times)
    out = Counter()
    for info, times in clocks.values():
        forks = get_method(info["method"]).before_selection is not None
        shared = [t for t in times if forks and seen[t] > 1]       # rows copied from its trunk
        out[info["page"]] += times[-1] - (shared[-1] if shared else 0.0)
    for path in store.glob("result-*.pt"):               # whole results a page read
        saved = torch.load(path, weights_only=False)
        out[saved["page"]] += saved["result"].history.wall_time.iloc[-1]
    return out


if __name__ == "__main__":
    for folder in map(Path, sys.argv[1:]):
        pages = own_seconds(folder)
        runs = len(list(folder.glob("*.json"))) + len(list(folder.glob("result-*.pt")))
        print(f"{folder}: {sum(pages.values()):,.0f} s training in {runs} stored runs")
        for page, seconds in pages.most_common():
            print(f"  {page:20s} {seconds:8,.0f} s")
