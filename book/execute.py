"""Execute every page of the book with papermill, then (optionally) build it.

    python book/execute.py --profile cpu --book-dir book            # make book
    python book/execute.py --profile smoke --book-dir build/smoke    # make test

Each source in notebooks/ (MyST Markdown, paired by Jupytext) is converted to a
notebook in memory and executed by papermill with kernel python3 and the page's
parameters (the pages, in book/_toc.yml's order, and their parameters come from the
experiments: :func:`pusupport.book.registry.book_pages`); the executed notebook lands in
<book-dir>/pages/<page>.ipynb. A --book-dir other than book/ receives a copy of the
book's configuration, so test builds never touch book/.

A page whose data set is missing stops with ``DatasetNotFoundError`` (papermill then
exits non-zero for a person running it). Here that page is rendered as "not run": its
cells up to the failure are kept, followed by a box with the error's message (what was
looked for, how to provide it), and ``summary.json`` records "not run" — unless an
earlier run of the page succeeded, whose results are kept.

With ``--workers N`` (N > 1), or ``RAY_ADDRESS`` set, the pages run as Ray tasks
(``pip install -e '.[cluster]'``), and so do the runs inside each page
(:mod:`pusupport.book.cluster`); a page that reads other pages' runs or results starts once
they have ended (:func:`schedule`: the pages others wait on first, then the longest; a page
that trains before those that read the committed runs).
A page that fails is tried once more; if it fails again, it is named, the other pages
finish, and the exit status is 1 (the book is not built). Results land where the serial
run puts them. The default is serial and imports no Ray.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import jupytext
import nbformat
import papermill
import yaml

from pusupport.book.committed import pages_committed
from pusupport.book.records import shown_path
from pusupport.book.reference import REFERENCE
from pusupport.book.registry import book_pages
from pusupport.book.store import FRESH, checking, committable, committed_runs, training_seconds
from pusupport.book.timing import Heartbeat, Progress, minutes, probe, projected, projection, slower
from pusupport.core.runtime import cpu_bf16_instructions
from pusupport.data.files import DatasetNotFoundError

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
BOOK_FILES = ("_config.yml", "_toc.yml", "_static")


def schedule(selected: list[dict], earlier: dict, read=()) -> list[dict]:
    """The pages in the order they start: each after the pages it reads (its "after" among
    ``selected``), the others by the longest chain of page times (``earlier``; a page never
    timed counts as the longest, one that ``read``s the committed runs as taking no time)
    from the page to the end of the build: a page that others wait for starts before a
    longer one that nobody waits for, and a page that trains before those that read."""
    names = {p["page"] for p in selected}
    after = {p["page"]: [a for a in p.get("after", ()) if a in names] for p in selected}
    waiting = {n: [m for m in names if n in after[m]] for n in names}
    rank: dict = {}

    def chain(n):
        if n not in rank:
            own = 0.0 if n in read else earlier.get(n, float("inf"))
            rank[n] = own + max((chain(m) for m in waiting[n]), default=0.0)
        return rank[n]

    left, order = sorted(selected, key=lambda p: -chain(p["page"])), []
    while left:
        ready = next(p for p in left if all(a in {q["page"] for q in order} for a in after[p["page"]]))
        order.append(ready)
        left.remove(ready)
    return order


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


#: The kernel's own log (e.g. ipykernel's warning that it talks over local TCP) off the
#: console; a cell's errors still reach the page and papermill.
QUIET_KERNEL = ["--IPKernelApp.log_level=CRITICAL"]


def execute(page: dict, book_dir: Path, profile: str, output_dir: Path, data_dir: str | None,
            device: str, dry_run: int = 0, runner: dict | None = None) -> float:
    """Run one page with papermill; return its wall time in seconds. ``runner``: the Ray
    cluster its runs go to (:mod:`pusupport.book.cluster`), None to run them in the page."""
    nb = jupytext.read(ROOT / "notebooks" / f"{page['notebook']}.md")
    params = {"profile": profile, "device": device, "output_dir": str(output_dir),
              "data_dir": data_dir, "dry_run": dry_run, "runner": runner, **page["parameters"]}
    out = book_dir / "pages" / f"{page['page']}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    try:
        papermill.execute_notebook(nb, str(out), parameters=params, kernel_name="python3",
                                   cwd=str(ROOT), progress_bar=False, extra_arguments=QUIET_KERNEL)
    except papermill.PapermillExecutionError as err:
        if err.ename != DatasetNotFoundError.__name__:     # raised in the kernel: known by name
            raise
        mark_not_run(out, err.evalue, output_dir / (page["page"] + ("_dry_run" if dry_run else "")),
                     profile)
    finish_page(out, page.get("title"), params)
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
           "`make book`):\n\n```text\n" + in_words(message).strip() + "\n```\n:::")
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


def in_words(message: str) -> str:
    """An error for a reader: no exception names, no paths of the build machine."""
    message = re.sub(r"\(\w+Error: <urlopen error [^>]*>\)", "(no network connection)", message)
    message = re.sub(r"\((\w+Error): ([^()]*)\)", r"(\2)", message)
    return message.replace(f"{ROOT}/", "")


def shown_parameters(params: dict) -> dict:
    """The parameters as a reader would type them to re-run the page: folders relative to
    the checkout, the build's cluster left out."""
    shown = {}
    for name, value in params.items():
        if name == "runner":
            continue
        if name in ("output_dir", "data_dir") and value is not None:
            folder = Path(value).resolve()
            value = os.path.relpath(folder, ROOT) if folder.is_relative_to(ROOT) else str(value)
        shown[name] = value
    return shown


def _literal(value) -> str:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else repr(value)


def _with_value(line: str, shown: dict) -> str:
    """``name = value  # comment`` with the value shown for ``name``, the comment kept in
    its column."""
    m = re.match(r"^(\w+)(\s*=\s*)(.*?)(\s+#.*)?$", line)
    if not m or m[1] not in shown:
        return line
    code = m[1] + m[2] + _literal(shown[m[1]])
    if not m[4]:
        return code
    column = len(line) - len(m[4].lstrip())
    return code + " " * max(1, column - len(code)) + m[4].lstrip()


def finish_page(path: Path, title: str | None, params: dict | None = None) -> None:
    """Write the values the page ran with into its parameters cell, as a reader would type
    them (:func:`shown_parameters`), and leave papermill's injected-parameters cell (the
    build's own paths, which nbval re-runs) out of the rendered page (tag remove-cell); for
    a notebook run once per data set, give the page its own title."""
    nb = nbformat.read(path, as_version=4)
    shown = shown_parameters(params or {})
    for cell in nb.cells:
        tags = cell.metadata.setdefault("tags", [])
        if "injected-parameters" in tags and "remove-cell" not in tags:
            tags.append("remove-cell")
        if "parameters" in tags:
            cell.source = "\n".join(_with_value(line, shown) for line in cell.source.splitlines())
    if title:
        first = next(c for c in nb.cells if c.cell_type == "markdown")
        first.source = re.sub(r"^# .*$", f"# {title}", first.source, count=1, flags=re.M)
    nbformat.write(nb, path)


def build(book_dir: Path) -> None:
    """Render the book with Jupyter Book 1 on a fresh _build; warnings are errors."""
    shutil.rmtree(book_dir / "_build", ignore_errors=True)
    subprocess.run([str(Path(sys.executable).parent / "jupyter-book"), "build", str(book_dir),
                    "-W", "-n", "--keep-going"], check=True)


def run_serial(selected: list[dict], kwargs: dict, progress: Progress) -> dict:
    """Execute the pages one after the other, a progress line after each (and at least once
    a minute while one runs); return {page: seconds}."""
    times = {}
    names = [p["page"] for p in selected]
    with Heartbeat(progress.beat):
        for i, page in enumerate(selected):
            progress.running = [page["page"]]
            print(f"executing {page['page']} ({kwargs['profile']}) ...", flush=True)
            times[page["page"]] = execute(page, **kwargs)
            print(progress(page["page"], times[page["page"]], names[i + 1:]), flush=True)
    return times


def run_ray(selected: list[dict], kwargs: dict, workers: int, earlier: dict,
            factor: float = 1.0, read=(), reads: dict | None = None) -> tuple[dict, dict]:
    """Execute the pages as Ray tasks in :func:`schedule`'s order, each once the pages it
    reads have ended, a progress line after each page and at least once a minute (its time
    left counting the pages that ``read`` the committed runs by their read times ``reads``); return
    ({page: seconds}, {failed page: error})."""
    from pusupport.book import cluster
    task = cluster.start(workers, kwargs["device"])
    print(f"Ray: every task gets {task}", flush=True)
    order = schedule(selected, earlier, read)
    progress = Progress(len(order), 0, [], earlier, workers, factor, reading=read, read_times=reads)
    progress.left = [p["page"] for p in order]
    progress.running = progress.left[:workers]
    with Heartbeat(progress.beat):
        return cluster.run_pages(execute, order, kwargs, task, progress)


#: Page times of a measured build at a profile (`cpu`: `make book` on the development machine;
#: `smoke`: the smoke build of `make test` on a 2-core CPU), committed so that a fresh clone's
#: first build orders its pages longest first and estimates the time left.
REFERENCE_TIMES = ROOT / "results" / "reference" / "{profile}" / "page_times.json"


def reference_speed(timed: Path, profile: str) -> tuple[float, str]:
    """(how many times slower this machine is than the one that timed the earlier pages, and
    where the times come from): 1 for this output folder's own last build; for the committed
    reference build (:func:`reference_build`), this CPU probed against the probe it records."""
    if timed.exists():
        return 1.0, "this output folder's last build"
    measured = reference_build(profile).get("measured", {})
    if "probe" not in measured:
        return 1.0, "the committed reference build, not scaled to this machine"
    here = probe()
    factor = slower(here, measured["probe"])
    return factor, (f"the committed reference build ({measured['machine']}) × {factor:.2f}: this "
                    f"CPU's one-thread matmul at the precision pages run in here ({here['runs']}, "
                    f"{here[here['runs']]:.0f} GFLOP/s) against that machine's — a rough guide")


def earlier_times(timed: Path, profile: str) -> dict:
    """{page: seconds} of this output folder's last build, else of the committed reference
    build at ``profile``, else nothing."""
    if timed.exists():
        return json.loads(timed.read_text())
    return reference_build(profile).get("pages", {})


def reference_build(profile: str) -> dict:
    """The committed reference build at ``profile`` (``measured``: its provenance and probe;
    ``pages``: its page times): the one measured on a CPU with this CPU's bf16 instructions
    (``by_cpu``, keyed "amx_bf16", "avx512_bf16" or "float32") where there is one, else the
    main one. A matmul probe does not carry page times across them: on a 2-core Xeon with
    amx_bf16 it said 0.38 of the AMD EPYC's times, and the pages took 0.66–1.1."""
    reference = Path(str(REFERENCE_TIMES).format(profile=profile))
    if not reference.exists():
        return {}
    times = json.loads(reference.read_text())
    return times.get("by_cpu", {}).get(cpu_bf16_instructions() or "float32", times)


def say_layouts(device: str) -> None:
    """The build's one line on where its layouts come from, where this machine borrows
    another's measurements (its pages say nothing of it: their numbers do not depend on it)."""
    import warnings
    from pusupport.core.config import TrainConfig
    from pusupport.core.runtime import LayoutNote, resolve
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", LayoutNote)
        resolve(TrainConfig(device=device, progress=False))
    for w in said:
        if issubclass(w.category, LayoutNote):
            print(f"note: {w.message} — the build's speed, never its numbers", flush=True)


def read_times(profile: str) -> dict:
    """{page: seconds} that each page took to read its committed runs in the committed
    reference build that only read (``"reading"``), else nothing."""
    reference = Path(str(REFERENCE_TIMES).format(profile=profile))
    return json.loads(reference.read_text()).get("reading", {}) if reference.exists() else {}


def timed_as(page: str, given: dict) -> str:
    """The name a page's time is kept under: the page, with the ``--set`` parameters it ran
    with (the own-data page on a folder of images takes another time than on the example)."""
    return page if not given else f"{page} --set " + " ".join(
        f"{k}={json.dumps(v, default=str)}" for k, v in sorted(given.items()))


def as_run(kept: dict, names: list[str], given: dict) -> dict:
    """{page: seconds} of the earlier times ``kept`` for this build: the pages ``names`` at
    the ``--set`` parameters ``given`` (none if never timed so), every other page as kept."""
    chosen = {p: kept[key] for p in names if (key := timed_as(p, given)) in kept}
    return {**{p: t for p, t in kept.items() if p not in names}, **chosen}


#: The parameters every page shares with the build, each set by its own option.
SHARED = {"profile": "--profile", "device": "--device", "output_dir": "--output-dir",
          "data_dir": "--data-dir", "dry_run": "--dry-run", "runner": "--workers"}


def trained_note(n: int, profile: str, output_dir: Path, given: dict) -> str:
    """What a build that trained ``n`` runs says of them: a check build's are held against the
    committed ones, never committed; the book's own runs (its profile has committed runs, no
    page parameter was given) can be committed; others are kept where they are."""
    if checking():
        return (f"{n} runs trained again by this check build, to be held against the committed ones "
                "(`make check-runs` does so next), never committed")
    if (REFERENCE / profile / "runs").is_dir() and not given:
        return (f"{n} runs trained by this build: `make commit-runs PROFILE={profile}` commits them with "
                "the book, so that the next build on any machine reads them")
    return (f"{n} runs trained by this build, kept in {shown_path(output_dir / 'runs')}: a build here "
            "with the same settings reads them")


def training_profile(spent: dict, workers: int) -> str:
    """Where a build's training went: each page's runs' seconds on one worker
    (:func:`~pusupport.book.store.training_seconds`), longest first, and their sum."""
    total = sum(spent.values())
    pages = ", ".join(f"{page} {seconds / 60:.1f}" for page, seconds in spent.items())
    return (f"training, in minutes of one worker: {pages}; {total / 60:.1f} in all, about "
            f"{total / 60 / max(1, workers):.1f} min on {workers} worker{'s' * (workers > 1)}")


def page_parameters(given: list[str], only, error) -> dict:
    """{name: value} of ``--set NAME=VALUE`` options, each value read as YAML (as papermill's
    ``-y``); the page's first cell refuses a name it does not have. ``error``: how to refuse
    a malformed option (it names the fix)."""
    if given and not only:
        error("--set changes a page's own parameters: name the page with --only PAGE")
    out = {}
    for item in given:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            error(f"--set {item!r}: write NAME=VALUE, e.g. --set 'seeds=[0, 1, 2]'")
        if name in SHARED:
            error(f"--set {name}=…: use {SHARED[name]} for that")
        try:
            out[name] = yaml.safe_load(text)
        except yaml.YAMLError as err:
            error(f"--set {item!r}: the value is not YAML ({str(err).splitlines()[0]}); quote lists, "
                  "e.g. --set 'seeds=[0, 1, 2]'")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="cpu", choices=["smoke", "cpu", "paper"])
    ap.add_argument("--book-dir", type=Path, default=BOOK)
    ap.add_argument("--output-dir", type=Path, default=ROOT / "results")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--only", nargs="*", help="page names to execute (default: all)")
    ap.add_argument("--pages-file", type=Path, default=None,
                    help="a JSON list of pages ({page, notebook, parameters}) to execute instead of "
                         "the book's")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", dest="given",
                    help="one of the --only pages' own parameters (its first cell lists them), the "
                         "value read as YAML, e.g. --set 'seeds=[0, 1, 2]' --set n_select=5; repeatable")
    ap.add_argument("--no-build", action="store_true", help="execute only; do not render")
    ap.add_argument("--dry-run", type=int, default=0, choices=range(4), metavar="N",
                    help="1–3: prove each page's settings (e.g. --profile paper) in minutes: the "
                         "first seed, N epochs visited with one step each (results in *_dry_run)")
    ap.add_argument("--fresh", action="store_true",
                    help="train every run: read none of the book's committed runs (make book FRESH=1)")
    ap.add_argument("--workers", type=int, default=1,
                    help="pages (and their runs) at a time, as Ray tasks when > 1 (a local Ray "
                         "instance, or the cluster at $RAY_ADDRESS, which sets the number)")
    args = ap.parse_args(argv)
    if args.workers < 1:
        ap.error("--workers must be 1 (serial) or more (Ray)")
    prepare(args.book_dir)
    listed = json.loads(args.pages_file.read_text()) if args.pages_file else book_pages()
    given = page_parameters(args.given, args.only, ap.error)
    selected = [{**p, "parameters": {**p["parameters"], **given}}
                for p in listed if not args.only or p["page"] in args.only]
    kwargs = {"book_dir": args.book_dir.resolve(), "profile": args.profile,
              "output_dir": args.output_dir.resolve(), "data_dir": args.data_dir,
              "device": args.device, "dry_run": args.dry_run}
    failed = {}
    timed = args.output_dir / f"page_times_{args.profile}.json"
    kept = earlier_times(timed, args.profile)
    factor, source = reference_speed(timed, args.profile)
    say_layouts(args.device)
    names = [p["page"] for p in selected]
    earlier = as_run(kept, names, given)
    if args.fresh:
        os.environ[FRESH] = "1"                      # the pages' kernels inherit it
    read = pages_committed(args.profile) & set(names) if not (args.dry_run or checking()) else set()
    training = [p for p in names if p not in read]
    reads = {p: t for p, t in read_times(args.profile).items() if p in read}
    print((projected(earlier, training, args.workers, factor, source) if training else "projected: no page trains")
          + (" (the pages that train)" if training and read else "")
          + (f"; {len(read)} " + ("pages read their" if len(read) > 1 else "page reads its")
             + " runs from the book's committed runs" if read else "")
          + (f", about {minutes(projection(reads, list(reads), args.workers))} by the times they "
             "took to read them in the committed reference build" if reads else "")
          + ("; at most: a check trains only the first run of each method that a page reads from "
             "the committed runs" if checking() else "")
          + ("; then the HTML build" if not args.no_build and any(p in earlier for p in names) else ""),
          flush=True)
    started = time.time()
    if args.workers > 1 or os.environ.get("RAY_ADDRESS"):
        times, failed = run_ray(selected, kwargs, args.workers, earlier, factor, read, reads)
    else:
        selected = schedule(selected, earlier, read)
        progress = Progress(len(selected), 0, [], earlier, 1, factor, reading=read, read_times=reads)
        progress.left = [p["page"] for p in selected]
        times = run_serial(selected, kwargs, progress)
    (args.output_dir).mkdir(parents=True, exist_ok=True)
    own = json.loads(timed.read_text()) if timed.exists() else {}   # never the reference's times
    timed.write_text(json.dumps({**own, **{timed_as(p, given): t for p, t in times.items()}},
                                indent=2))                  # pages not run keep theirs
    if failed:
        for name, err in failed.items():
            print(f"\npage {name} FAILED twice:\n{err}", file=sys.stderr)
        print(f"\nfailed pages: {', '.join(failed)} (the book was not built; each executed page, "
              f"with its error, is in {args.book_dir / 'pages'})", file=sys.stderr)
        return 1
    committed = committed_runs(args.profile)
    recent = [p for p in (args.output_dir / "runs").glob("*.json") if p.stat().st_mtime >= started]
    # not the prior page's 24 MB estimator
    trained = [p for p in recent if committable(p, committed) is not None]
    if trained and not args.dry_run:
        print(trained_note(len(trained), args.profile, args.output_dir, given), flush=True)
    spent = training_seconds(recent)
    if spent and not args.dry_run:
        print(training_profile(spent, args.workers), flush=True)
    if not args.no_build:
        build(args.book_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
