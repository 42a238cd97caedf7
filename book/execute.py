"""Execute every page of the book with papermill, then (optionally) build it.

    python book/execute.py --profile cpu --book-dir book            # make book
    python book/execute.py --profile smoke --book-dir build/smoke    # make test

Each source in notebooks/ (MyST Markdown, paired by Jupytext) is converted to a
notebook in memory and executed by papermill with kernel python3 and the page's
parameters from book/pages.json; the executed notebook lands in
<book-dir>/pages/<page>.ipynb. A --book-dir other than book/ receives a copy of the
book's configuration, so test builds never touch book/.

A page whose data set is missing stops with ``DatasetNotFoundError`` (papermill then
exits non-zero for a person running it). Here that page is rendered as "not run": its
cells up to the failure are kept, followed by a box with the error's message (what was
looked for, how to provide it), and ``summary.json`` records "not run" — unless an
earlier run of the page succeeded, whose results are kept.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import jupytext
import nbformat
import papermill

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
BOOK_FILES = ("_config.yml", "_toc.yml", "_static")


def pages() -> list[dict]:
    return json.loads((BOOK / "pages.json").read_text())


def prepare(book_dir: Path) -> None:
    """Copy the book's configuration into ``book_dir`` (unless it is book/ itself)."""
    if book_dir.resolve() == BOOK.resolve():
        return
    book_dir.mkdir(parents=True, exist_ok=True)
    for name in BOOK_FILES:
        src, dst = BOOK / name, book_dir / name
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            shutil.copy2(src, dst)


#: The exception a page raises when its data set is missing (pusupport.datasets).
DATA_MISSING = "DatasetNotFoundError"


def execute(page: dict, book_dir: Path, profile: str, output_dir: Path, data_dir: str | None,
            device: str) -> float:
    """Run one page with papermill; return its wall time in seconds."""
    nb = jupytext.read(ROOT / "notebooks" / f"{page['notebook']}.md")
    params = {"profile": profile, "device": device, "output_dir": str(output_dir),
              "data_dir": data_dir, **page["parameters"]}
    out = book_dir / "pages" / f"{page['page']}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    try:
        papermill.execute_notebook(nb, str(out), parameters=params, kernel_name="python3",
                                   cwd=str(ROOT), progress_bar=False)
    except papermill.PapermillExecutionError as err:
        if err.ename != DATA_MISSING:
            raise
        mark_not_run(out, err.evalue, output_dir / page["page"], profile)
    finish_page(out, page.get("title"))
    return time.perf_counter() - start


def is_papermill_banner(cell) -> bool:
    """The red "An Exception was encountered" cells papermill adds to a failed notebook."""
    return cell.cell_type == "markdown" and (
        "papermill-error-cell-tag" in cell.metadata.get("tags", [])
        or "papermill-error-cell" in cell.source or cell.source.startswith('<span style="color:red'))


def mark_not_run(path: Path, message: str, results: Path, profile: str) -> None:
    """Cut the executed page at the failed cell, add the "not run" box, record the status."""
    nb = nbformat.read(path, as_version=4)
    nb.cells = [c for c in nb.cells if not is_papermill_banner(c)]
    failed = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code"
                  and any(o.get("output_type") == "error" for o in c.get("outputs", [])))
    box = (":::{admonition} Not run: data not available\n:class: warning\n\nThis page needs a "
           "data set that is not on "
           "this machine and could not be downloaded. Provide it, then re-run the page (or "
           "`make book`):\n\n```text\n" + message.strip() + "\n```\n:::")
    nb.cells = nb.cells[:failed] + [nbformat.v4.new_markdown_cell(box)]
    nbformat.write(nb, path)
    summary = results / "summary.json"
    earlier = json.loads(summary.read_text()) if summary.exists() else {}
    if earlier.get("status") == "run":
        print(f"  {results.name}: data missing; keeping the results of the earlier run", flush=True)
        return
    results.mkdir(parents=True, exist_ok=True)
    summary.write_text(json.dumps({"status": "not run", "reason": "data not available",
                                   "page": results.name, "profile": profile, "message": message,
                                   "methods": {}}, indent=2))


def finish_page(path: Path, title: str | None) -> None:
    """Fold papermill's injected-parameters cell (tag hide-cell) and, for a notebook run
    once per data set, give the page its own title."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        tags = cell.metadata.setdefault("tags", [])
        if "injected-parameters" in tags and "hide-cell" not in tags:
            tags.append("hide-cell")
    if title:
        first = next(c for c in nb.cells if c.cell_type == "markdown")
        first.source = re.sub(r"^# .*$", f"# {title}", first.source, count=1, flags=re.M)
    nbformat.write(nb, path)


def build(book_dir: Path) -> None:
    """Render the book with Jupyter Book 1 on a fresh _build; warnings are errors."""
    shutil.rmtree(book_dir / "_build", ignore_errors=True)
    subprocess.run([str(Path(sys.executable).parent / "jupyter-book"), "build", str(book_dir),
                    "-W", "-n", "--keep-going"], check=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="cpu", choices=["smoke", "cpu", "paper"])
    ap.add_argument("--book-dir", type=Path, default=BOOK)
    ap.add_argument("--output-dir", type=Path, default=ROOT / "results")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--only", nargs="*", help="page names to execute (default: all)")
    ap.add_argument("--no-build", action="store_true", help="execute only; do not render")
    args = ap.parse_args(argv)
    prepare(args.book_dir)
    times = {}
    for page in pages():
        if args.only and page["page"] not in args.only:
            continue
        print(f"executing {page['page']} ({args.profile}) ...", flush=True)
        times[page["page"]] = execute(page, args.book_dir, args.profile, args.output_dir.resolve(),
                                      args.data_dir, args.device)
        print(f"  {page['page']}: {times[page['page']]:.0f} s", flush=True)
    (args.output_dir).mkdir(parents=True, exist_ok=True)
    (args.output_dir / f"page_times_{args.profile}.json").write_text(json.dumps(times, indent=2))
    if not args.no_build:
        build(args.book_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
