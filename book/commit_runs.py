"""Commit a build's runs with the book, so that a later build — on this machine or another
— reads them instead of training (`make commit-runs`, after `make book`).

    python book/commit_runs.py --store results/runs --profile cpu

Every run of the build's run store that today's training code trained is copied into
``results/reference/<profile>/runs/`` under its portable key (what shapes its numbers, less
the machine: :func:`pusupport.book.store.run_key`), with its record (page, seeds, the
epochs it was evaluated at, and where, how and when it was trained); committed runs of
other training code are removed. ``index.json`` there names, for each page whose runs were
committed, its fingerprint and the training code of the methods it runs: a build projects
only the pages whose settings or code moved since. ``make book FRESH=1`` reads none of them.

    python book/commit_runs.py --check --profile cpu [--pages synthetic real_cifar10]

trains again, into ``build/check/runs`` and reading no committed run, for every page whose
runs are committed the first committed job of each method it runs (one seed where the page
trains seeds one by one, its stacked seeds where it stacks them; a run another page's check
covered is not trained twice),
and holds each run against the committed one (`make check-runs`): equal, number for number,
where both were trained on the same CPU at the same precision and threads; elsewhere the
largest difference of a seed's final test error is held against the data set's committed
run-to-run spread of one seed (``results/reference/<profile>/spread.json``: another thread
count, the same precision) and called within or beyond it.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from pusupport.book.committed import page_at, runs_index
from pusupport.book.cost import flops_text, run_flops
from pusupport.book.reference import REFERENCE, relative, spread_path
from pusupport.book.registry import book_pages
from pusupport.book.store import RunStore, check_runs, commit_runs, run_key, train_runs
from pusupport.data import DatasetNotFoundError

ROOT = Path(__file__).resolve().parent.parent


def first_of_each_method(jobs) -> list:
    """The first of ``jobs`` that trains each method (what :func:`train_again` trains where
    every run is committed)."""
    chosen, methods = [], set()
    for job in jobs:
        if not {cfg.method for cfg in job.configs} <= methods:
            chosen.append(job)
            methods |= {cfg.method for cfg in job.configs}
    return chosen


def flops(plan, jobs) -> float:
    """The cost model's FLOPs of ``jobs`` of ``plan`` (0 where a run's sizes are unknown)."""
    return sum(run_flops(r) for r in plan.priced(jobs) if r.data is not None)


def train_again(profile: str, pages: list[str], store: Path, folder: Path, data_dir) -> None:
    """Train again into ``store``, for each page of ``pages``, the first committed job of each
    method it runs (see the module's doc), saying what was trained, or why nothing, and
    the time left at the pace so far (by the cost model's FLOPs)."""
    def resolved(name):                      # the page's plan, None where it trains nothing
        page = page_at(name, profile, data_dir=None if data_dir is None else str(data_dir))
        return page.resolved() if page.experiment.plan is not None else None

    def planned(name) -> float:
        try:
            plan = resolved(name)
        except DatasetNotFoundError:
            return 0.0
        return flops(plan, first_of_each_method(plan.jobs)) if plan else 0.0
    left = {name: planned(name) for name in pages}
    print(f"training again the first committed job of each method of {len(pages)} pages: at most "
          f"{flops_text(sum(left.values()))} by the cost model (the time left follows from the pace)",
          flush=True)
    checked, done, spent = set(), 0.0, 0.0
    for i, name in enumerate(pages, 1):
        built, chosen, methods, said = {}, [], set(), f"[{i}/{len(pages)}] {name}:"
        try:
            plan = resolved(name)
            for job in plan.jobs if plan else ():
                if {cfg.method for cfg in job.configs} <= methods:
                    continue
                datas = job.datas(built)
                keys = {run_key(cfg, job.seeds, d, job.stacked, portable=True)
                        for cfg, d in zip(job.configs, datas)}
                if not keys & checked and all((folder / f"{k}.json").exists() for k in keys):
                    chosen.append((job, datas))
                    methods, checked = methods | {cfg.method for cfg in job.configs}, checked | keys
        except DatasetNotFoundError as err:
            print(said, f"not checked, its data are not here ({str(err).splitlines()[0]})", flush=True)
            continue
        if plan is None or not chosen:
            print(said, "trains no run of its own" if plan is None else
                  "no job of its own is committed (nothing to train again)", flush=True)
        left[name] = sum(flops(plan, [job]) for job, _ in chosen)
        for job, datas in chosen:
            start = time.perf_counter()
            train_runs(job, datas, RunStore(store, name))
            spent, done = spent + time.perf_counter() - start, done + flops(plan, [job])
            left[name] -= flops(plan, [job])
            pace = (f", about {sum(left.values()) * spent / done / 60:.0f} min left at the pace so far"
                    if done else "")
            print(said, f"{', '.join(job.labels)} on seeds {list(job.seeds)} trained again "
                  f"({time.perf_counter() - start:.0f} s{pace})", flush=True)


def seed_spreads(profile: str, root: Path) -> dict:
    """{data set: the largest change of one seed's result with the thread count} committed
    at ``profile`` (``make spread``), or nothing."""
    path = spread_path(profile, root)
    return {d: r["per_seed"] for d, r in json.loads(path.read_text())["datasets"].items()} if path.exists() else {}


def check(store: Path, folder: Path, spreads: dict, datasets: dict) -> int:
    """Print how the store's runs compare with the committed ones; 1 where a run trained on
    the same machine differs, else 0. ``spreads``: {data set: one seed's committed spread};
    ``datasets``: {page: its data set}."""
    rows = check_runs(store, folder)
    if not rows:
        print(f"none of the runs of {store} is committed in {relative(str(folder))}")
        return 0
    same = [r for r in rows if r["same_machine"]]
    broken = [r for r in same if not r["equal"]]
    print(f"{len(rows)} runs held against the committed ones: {len(same)} trained on the same "
          f"machine, {len(same) - len(broken)} of them equal number for number")
    for r in broken:
        print(f"  DIFFERS: {r['page']} {r['method']} seeds {r['seeds']} (final test error up to "
              f"{r['final_error_difference']:.4f} apart)")
    for r in (r for r in rows if not r["same_machine"]):
        made, bound = r["committed"], spreads.get(datasets.get(r["page"]))
        where = f"{made['gpu'] or made['cpu']}, {'bf16' if made['numbers']['bf16'] else 'float32'}"
        judged = ("no committed spread for its data set" if bound is None else
                  f"{'within' if r['final_error_difference'] <= bound else 'BEYOND'} one seed's "
                  f"committed spread {bound:.4f}")
        print(f"  another machine ({where}): {r['page']} {r['method']} seeds {r['seeds']}: final "
              f"test error up to {r['final_error_difference']:.4f} apart, {judged}")
    return 1 if broken else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", type=Path, default=None,
                    help="a build's run store (default: results/runs, where `make book` trains; "
                         "with --check: build/check/runs, where the runs trained again go)")
    ap.add_argument("--profile", default="cpu", choices=["smoke", "cpu", "paper"],
                    help="the profile the build ran at")
    ap.add_argument("--record", default=None, metavar="NAME",
                    help="commit into results/reference/<profile>/NAME/runs instead: a page's record "
                         "with a parameter changed, which that page reads (no build's index lists it)")
    ap.add_argument("--check", action="store_true",
                    help="train the first committed job of each method of every page again into --store "
                         "and hold its runs against the committed ones (`make check-runs`)")
    ap.add_argument("--pages", nargs="+", metavar="PAGE", help="with --check: these pages only")
    ap.add_argument("--data-dir", type=Path, default=None, help="with --check: the data sets' folder")
    ap.add_argument("--reference", type=Path, default=REFERENCE, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    folder = args.reference / args.profile / (f"{args.record}/runs" if args.record else "runs")
    args.store = args.store or ROOT / ("build/check/runs" if args.check else "results/runs")
    if args.check:
        if not any(folder.glob("*.json")):
            ap.error(f"{relative(str(folder))} holds no committed run: nothing to check")
        if any(args.store.glob("*.json")):
            ap.error(f"{args.store} holds runs already: give --store an empty folder, so that "
                     "every run checked is trained now")
        book = [e["page"] for e in book_pages()]
        if set(args.pages or ()) - set(book):
            ap.error(f"--pages: no page {sorted(set(args.pages) - set(book))} in the book; its pages: {book}")
        names = args.pages or book
        train_again(args.profile, names, args.store, folder, args.data_dir)
        datasets = {name: page_at(name, args.profile).dataset for name in names}
        return check(args.store, folder, seed_spreads(args.profile, args.reference), datasets)
    if not any(args.store.glob("*.json")):
        ap.error(f"{args.store} holds no stored run: run `make book` first, or name its run store")
    counts = commit_runs(args.store, folder)
    pages = {json.loads(p.read_text())["page"] for p in folder.glob("*.json") if p.name != "index.json"}
    if not args.record:
        (folder / "index.json").write_text(json.dumps(runs_index(args.profile, pages), indent=1) + "\n")
    size = sum(p.stat().st_size for p in folder.iterdir())
    print(f"{counts['added']} runs added, {counts['removed']} stale ones removed: {counts['committed']} "
          f"runs of {len(pages)} pages in {relative(str(folder))} ({size / 2**20:.1f} MiB) — add it to git")
    return 0


if __name__ == "__main__":
    sys.exit(main())
