"""Commit a build's runs with the book, so that a later build — on this machine or another
— reads them instead of training (`make commit-runs`, after `make book`).

    python book/commit_runs.py --store results/runs --profile cpu

Every run of the build's run store that today's training code trained is copied into
``results/reference/<profile>/runs/`` under its portable key (what shapes its numbers, less
the machine: :func:`pusupport.book.store.run_key`), with its record (page, seeds, the
epochs it was evaluated at, and where, how and when it was trained); committed runs of
other training code are removed. ``index.json`` there names, for each page that used a run
in the build (trained or read it) or was indexed and still is today's, its fingerprint and the
training code of the methods it runs: a build projects only the pages whose settings or code moved since,
and the runs each page used (trained or read) in the build that indexed it: committed runs of
an indexed page that no indexed page uses any more (their settings gone) are removed, and a
kept model no page reads. ``make book FRESH=1`` reads none of them.

    python book/commit_runs.py --check --store build/check/results/runs --profile cpu

holds the runs of a check build against the committed ones instead (`make check-runs`: the
book built with ``$PUSUPPORT_CHECK`` set, where each page trains again the first run of each
method it would read from the committed runs, one seed where seeds train one by one, and
reads the rest): each equal, number for number, where both were trained on the same CPU at
the same precision and threads; elsewhere the largest difference of a seed's final test
error is held against the data set's committed run-to-run spread of one seed
(``results/reference/<profile>/spread.json``: another thread count, the same precision) and
called within or beyond it.

    python book/commit_runs.py --same-numbers

after a change to the training code that should not change a number (a refactor; `make
same-numbers`): in every committed runs folder, each method's runs trained by older code are
kept — read as today's — where the reference suite's runs that method reaches give the same
numbers at the commit that trained them and here (:mod:`pusupport.book.same_numbers`); the
others are named, stale, and retrained by the next build.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pusupport.book.committed import page_at, pages_committed, runs_index
from pusupport.book.reference import REFERENCE, relative, spread_path
from pusupport.book.same_numbers import prove, run_records
from pusupport.book.store import check_runs, commit_runs, prune_runs, used_runs

ROOT = Path(__file__).resolve().parent.parent


def seed_spreads(profile: str, root: Path) -> dict:
    """{data set: the largest change of one seed's result with the thread count} committed
    at ``profile`` (``make spread``), or nothing."""
    path = spread_path(profile, root)
    return {d: r["per_seed"] for d, r in json.loads(path.read_text())["datasets"].items()} if path.exists() else {}


def dataset_of(page: str, profile: str) -> str | None:
    """The data set of the page (or a page's part, e.g. "standing-synthetic") that trained a run."""
    try:
        return page_at(page, profile).dataset
    except ValueError:                       # a part of a page: its data set follows the dash
        return page.partition("-")[2] or None


def check(store: Path, folder: Path, spreads: dict, dataset) -> int:
    """Print how the store's runs compare with the committed ones; 1 where a run trained on
    the same machine differs, else 0. ``spreads``: {data set: one seed's committed spread};
    ``dataset(page)``: the data set of the page that trained a run."""
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
        made, bound = r["committed"], spreads.get(dataset(r["page"]))
        where = f"{made['gpu'] or made['cpu']}, {'bf16' if made['numbers']['bf16'] else 'float32'}"
        judged = ("no committed spread for its data set" if bound is None else
                  f"{'within' if r['final_error_difference'] <= bound else 'BEYOND'} one seed's "
                  f"committed spread {bound:.4f}")
        print(f"  against a run from another machine ({where}): {r['page']} {r['method']} seeds "
              f"{r['seeds']}: final test error up to {r['final_error_difference']:.4f} apart, {judged}")
    return 1 if broken else 0


def same_numbers(reference: Path) -> int:
    """Prove older code's committed runs in every runs folder under ``reference`` (:func:`prove`)."""
    for folder in sorted({*reference.glob("*/runs"), *reference.glob("*/*/runs")}):
        rows = prove(folder)
        kept = [r for r in rows if r["proven"]]
        print(f"{relative(str(folder))}: {len(run_records(folder))} runs; {len(kept)} older code "
              f"version{'s' if len(kept) != 1 else ''} of a method shown to train today's numbers")
        for r in rows:
            print(f"  {r['method']} at {r['code']} (commit {r['commit'][:12]}): " + (
                "same numbers, its runs are read as today's" if r["proven"] else
                f"stale, retrained by the next build — {r['why']}"))
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", type=Path, default=ROOT / "results" / "runs",
                    help="a build's run store (default: results/runs, where `make book` trains)")
    ap.add_argument("--profile", default="cpu", choices=["smoke", "cpu", "paper"],
                    help="the profile the build ran at")
    ap.add_argument("--record", default=None, metavar="NAME",
                    help="commit into results/reference/<profile>/NAME/runs instead: a page's record "
                         "with a parameter changed, which that page reads (no build's index lists it)")
    ap.add_argument("--check", action="store_true",
                    help="hold the store's runs (a check build's: `make check-runs`) against the "
                         "committed ones")
    ap.add_argument("--same-numbers", action="store_true",
                    help="keep the committed runs of older training code whose reference suite "
                         "gives today's numbers (after a refactor)")
    ap.add_argument("--reference", type=Path, default=REFERENCE, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.same_numbers:
        return same_numbers(args.reference)
    if not run_records(args.store) and not used_runs(args.store):
        ap.error(f"{args.store} holds no stored run: run `make book` first, or name its run store")
    folder = args.reference / args.profile / (f"{args.record}/runs" if args.record else "runs")
    if args.check:
        return check(args.store, folder, seed_spreads(args.profile, args.reference),
                     lambda page: dataset_of(page, args.profile))
    uses = used_runs(args.store)
    indexed = pages_committed(args.profile, args.reference) | set(uses)
    counts = commit_runs(args.store, folder)
    if not args.record:
        before = json.loads((folder / "index.json").read_text())["pages"] if (folder / "index.json").exists() else {}
        index = runs_index(args.profile, indexed)
        for name, entry in index["pages"].items():   # what each page used: in this build, else before
            if (runs := uses.get(name, before.get(name, {}).get("runs"))) is not None:
                entry["runs"] = runs
        (folder / "index.json").write_text(json.dumps(index, indent=1) + "\n")
        pruned = prune_runs(folder, index)
        print("no run pruned: the pages " + ", ".join(sorted(n for n, e in index["pages"].items() if "runs" not in e))
              + " have not recorded the runs they use (a whole `make book` records them)" if pruned is None else
              f"{pruned['removed']} runs no page uses removed, {pruned['stripped']} kept models no page reads")
    pages = {json.loads(p.read_text())["page"] for p in run_records(folder)}
    size = sum(p.stat().st_size for p in folder.iterdir())
    print(f"{counts['added']} runs added, {counts['removed']} stale ones removed: {len(run_records(folder))} "
          f"runs of {len(pages)} pages in {relative(str(folder))} ({size / 2**20:.1f} MiB) — add it to git")
    return 0


if __name__ == "__main__":
    sys.exit(main())
