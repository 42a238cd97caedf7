"""Run pages at a profile and commit their results with provenance (`make results`).

    python book/results.py --pages real_20news --profile paper [--workers 2]

Each page is executed as `make book` executes it (book/execute.py), into
``build/results/<profile>``; at ``paper`` every run checkpoints there, so a killed
command, run again, resumes (losing at most ``checkpoint_every`` epochs). A finished
page's ``history.csv`` and ``summary.json`` are then copied to
``results/reference/<profile>/<page>/`` with ``provenance.json`` (commit, settings
fingerprint, machine, precision, date, wall time of this command, the command). Commit
that folder; the book shows it beside its live run and refuses it once stale.
"""
from __future__ import annotations

import argparse
import importlib.util
import shlex
import sys
import time
from dataclasses import replace
from pathlib import Path

from pusupport.book.committed import commit, page_at
from pusupport.book.reference import code_commit
from pusupport.book.registry import book_pages
from pusupport.core.runtime import resolve

ROOT = Path(__file__).resolve().parent.parent


def _execute():
    spec = importlib.util.spec_from_file_location("book_execute", ROOT / "book" / "execute.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _relative(arg: str) -> str:
    """A path inside this checkout written relative to it (the record names no build machine's folders)."""
    path = Path(arg)
    return str(path.relative_to(ROOT)) if path.is_absolute() and path.is_relative_to(ROOT) else arg


def main(argv=None) -> int:
    pages = [e["page"] for e in book_pages()]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", nargs="+", required=True, choices=pages, metavar="PAGE",
                    help=f"the pages to run: {', '.join(pages)}")
    ap.add_argument("--profile", default="paper", choices=["cpu", "paper"])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--output-dir", type=Path, default=ROOT / "build" / "results")
    args = ap.parse_args(argv)
    out = args.output_dir / args.profile
    line = "python book/results.py " + " ".join(shlex.quote(_relative(a)) for a in (argv or sys.argv[1:]))
    execute = _execute()
    for page in args.pages:
        start, started = time.perf_counter(), code_commit()
        rc = execute.main(["--profile", args.profile, "--only", page, "--no-build",
                           "--book-dir", str(out / "book"), "--output-dir", str(out),
                           "--device", args.device, "--workers", str(args.workers),
                           *(["--data-dir", args.data_dir] if args.data_dir else [])])
        if rc:
            print(f"{page}: failed; nothing committed (run the command again: it resumes)",
                  file=sys.stderr)
            return rc
        settings = page_at(page, args.profile).settings.train
        precision = resolve(replace(settings, device=args.device)).describe()
        target = commit(out / page, page, args.profile, line, time.perf_counter() - start, precision,
                        started=started)
        print(f"{page}: committed to {target.relative_to(ROOT)} — add it to git")
    return 0


if __name__ == "__main__":
    sys.exit(main())
