"""The book: page list, and checks on the smoke-profile build that `make test` makes.

Tests marked ``book`` read the build in $SMOKE_BOOK (default build/smoke). Without
it they skip, saying why; with CI=true they fail instead of skipping.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import nbformat
import pytest
import yaml

from pusupport.book.registry import all_experiments, book_pages, get

ROOT = Path(__file__).resolve().parent.parent
SMOKE = Path(os.environ.get("SMOKE_BOOK", ROOT / "build" / "smoke"))
HTML = SMOKE / "_build" / "html"
IN_CI = os.environ.get("CI", "").lower() == "true"
PAGES = book_pages()


def require(condition: bool, reason: str):
    if not condition:
        if IN_CI:
            pytest.fail(f"{reason} (CI=true: this check must run)")
        pytest.skip(reason)


def toc_files(node):
    files = [node["file"]] if "file" in node else []
    for key in ("chapters", "sections", "parts"):
        for child in node.get(key, []):
            files += toc_files(child)
    return files


def test_toc_lists_exactly_the_pages_the_experiments_make():
    toc = yaml.safe_load((ROOT / "book" / "_toc.yml").read_text())
    listed = [toc["root"]] + toc_files(toc)
    assert listed == [f"pages/{p['page']}" for p in PAGES]
    made = {page for e in all_experiments().values() for page in e.book_pages()}
    assert made == {p["page"] for p in PAGES}, "an experiment's page is missing from _toc.yml"
    for p in PAGES:
        assert (ROOT / "notebooks" / f"{p['notebook']}.md").exists()


def test_every_notebook_has_a_parameters_cell_first():
    import jupytext
    for src in (ROOT / "notebooks").glob("*.md"):
        code = [c for c in jupytext.read(src).cells if c.cell_type == "code"]
        assert code and "parameters" in code[0].metadata.get("tags", []), src.name


book = pytest.mark.book


@book
@pytest.mark.parametrize("page", [p["page"] for p in PAGES])
def test_page_executed_without_errors(page):
    path = SMOKE / "pages" / f"{page}.ipynb"
    require(path.exists(), f"no executed page at {path}: run `make test`")
    nb = nbformat.read(path, as_version=4)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected and "profile = \"smoke\"" in injected[0].source
    assert "remove-cell" in injected[0].metadata["tags"]             # not in the rendered page
    shown = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    assert re.search(r'^profile = "smoke"', shown.source, re.M)     # the values it ran with


#: Pages that write no results of their own (their experiment has no plan: introduction,
#: summary, glossary), and pages whose data set is not on this machine (CIFAR-100 has no
#: offline copy): every other page must have run.
NO_RESULTS = {p["page"] for p in PAGES if get(p["notebook"]).plan is None}
NOT_RUN_HERE = {"real_cifar100"}


@book
@pytest.mark.parametrize("page", [p["page"] for p in PAGES if p["page"] not in NO_RESULTS])
def test_page_ran_where_its_data_are_present(page):
    summary = SMOKE / "results" / page / "summary.json"
    require(summary.exists(), f"no {summary}: run `make test`")
    status = json.loads(summary.read_text())["status"]
    if page in NOT_RUN_HERE:
        assert status == "not run"
        html = HTML / "pages" / f"{page}.html"
        require(html.exists(), f"no rendered page at {html}: run `make test`")
        text = html.read_text()
        assert "Not run: data not available" in text and "Looked for:" in text
    else:
        assert status == "run", f"{page} did not run although its data are on this machine"


@book
@pytest.mark.parametrize("page", [p["page"] for p in PAGES])
def test_page_rendered_with_its_figures(page):
    html = HTML / "pages" / f"{page}.html"
    require(html.exists(), f"no rendered page at {html}: run `make test`")
    text = html.read_text()
    for src in re.findall(r'<img[^>]+src="([^"]+)"', text):
        if not src.startswith("data:"):
            assert (html.parent / src).resolve().exists(), src
    assert "cdn.jsdelivr.net/npm/mathjax" not in text and "mathjax/tex-chtml.js" in text
    assert "tag_injected-parameters" not in text                 # the build's paths stay out


#: What no rendered page may show a reader: the build machine's folders, tracebacks,
#: exception names or warnings with source paths, and Python reprs.
RESIDUE = {
    "a folder of the build machine": "|".join(re.escape(str(p)) for p in (ROOT, Path.home()))
                                     + r"|/tmp/",
    "a traceback": r"Traceback \(most recent call last\)",
    "an exception name": r"\b(URLError|FileNotFoundError|KeyError|ValueError):",
    "a warning with its source": r"\w+Warning: ",
    "a dict repr": r"\{'\w+': ",
    "an object repr": r"<[\w.]+ object at 0x[0-9a-f]+>",
}


def visible_text(html: Path) -> str:
    text = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", html.read_text(), flags=re.S)
    return __import__("html").unescape(re.sub(r"<[^>]+>", " ", text))


#: The rendered books the residue check reads: the smoke build of `make test`, and the
#: `cpu` build of `make book` (which runs this check on it; CI never builds it).
BUILT = {"smoke": HTML, "cpu": ROOT / "book" / "_build" / "html"}


@book
@pytest.mark.parametrize("built", BUILT)
@pytest.mark.parametrize("page", [p["page"] for p in PAGES])
def test_a_rendered_page_shows_no_build_residue(page, built):
    html = BUILT[built] / "pages" / f"{page}.html"
    if built == "cpu" and not html.exists():
        pytest.skip("no `cpu` book here: `make book` builds it and runs this check")
    require(html.exists(), f"no rendered page at {html}: run `make test`")
    text = visible_text(html)
    for what, pattern in RESIDUE.items():
        found = re.search(pattern, text)
        assert not found, f"{page} shows {what}: …{text[max(0, found.start() - 80):found.end() + 80]}…"
    dataset = next(p for p in PAGES if p["page"] == page)["parameters"].get("dataset")
    if dataset:                                  # the visible parameters name its own data set
        assert re.search(rf'dataset\s*=\s*"{dataset}"', text), f"{page}: dataset is not {dataset}"


#: The widest figure a page may save: the content column at 1280 px shows about 7.5 in
#: at 100 %; a figure much wider is shrunk until its labels cannot be read.
MAX_FIGURE_INCHES = 9.6


@book
def test_every_saved_figure_fits_the_page_column():
    from PIL import Image
    figures = sorted((SMOKE / "results").glob("*/*.png"))
    require(bool(figures), "no smoke book build: run `make test`")
    wide = {}
    for png in figures:
        with Image.open(png) as image:
            inches = image.size[0] / image.info.get("dpi", (150, 150))[0]
        if inches > MAX_FIGURE_INCHES:
            wide[str(png.relative_to(SMOKE / "results"))] = round(inches, 1)
    assert not wide, f"figures wider than {MAX_FIGURE_INCHES} in: {wide}"


@book
def test_page_figures_have_captions():
    text = (HTML / "pages" / "synthetic.html").read_text() if HTML.exists() else ""
    require(bool(text), "no smoke book build: run `make test`")
    assert re.search(r'<figcaption>.*Test error of nnPU and aaPU', text, re.S)
    assert re.search(r'<figcaption>.*The evidence behind the verdict', text, re.S)
    # numbered as the book's figures, never a bare "Fig. N" that reads as the paper's
    numbers = re.findall(r'caption-number">([^<]*)<', text)
    assert numbers and all(re.fullmatch(r"Book fig\. \d+\s*", n) for n in numbers), numbers
    summary = (HTML / "pages" / "summary.html").read_text()
    assert re.search(r'<figcaption>.*Every comparative claim of the table', summary, re.S)
    assert "No run-to-run spread has been measured at the <code" in summary          # smoke: none
    for column in ("paired difference", "p (adjusted)", "ruled out", "verdict"):
        assert f">{column}</th>" in summary


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def served_book():
    require(HTML.exists(), "no smoke book build: run `make test`")
    port = _free_port()
    handler = partial(SimpleHTTPRequestHandler, directory=str(HTML))
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{port}"
    server.shutdown()


def chromium(*args):
    exe = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    require(exe is not None, "headless Chromium is not installed (Debian: apt-get install chromium)")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--hide-scrollbars", "--virtual-time-budget=15000", "--window-size=1280,2400"]
    return subprocess.run([exe, *flags, *args], capture_output=True, text=True, timeout=120)


@book
@pytest.mark.parametrize("page", ["introduction", "synthetic"])
def test_screenshot_shows_maths_and_figures(page, served_book, tmp_path):
    url = f"{served_book}/pages/{page}.html"
    dom = chromium("--dump-dom", url).stdout
    assert "<mjx-container" in dom, "MathJax did not render the maths"
    if page == "synthetic":
        assert re.search(r'<img[^>]+src="[^"]+\.png"', dom), "no figure image in the page"
    shot = SMOKE / "screenshots" / f"{page}.png"
    shot.parent.mkdir(exist_ok=True)
    chromium(f"--screenshot={shot}", url)
    assert shot.exists() and shot.stat().st_size > 20_000


@book
def test_the_standing_page_says_what_its_runs_trained_on():
    """Where VPU runs the smoke build's runs trained on the comparison page's P and U less a
    twelfth of each, under a fingerprint of their own; elsewhere on the page's data."""
    summary = SMOKE / "results" / "standing" / "summary.json"
    require(summary.exists(), f"no {summary}: run `make test`")
    ran = {d: m for d, m in json.loads(summary.read_text())["datasets"].items() if m["status"] == "run"}
    assert any(m["validation"] for m in ran.values()) and not all(m["validation"] for m in ran.values())
    import pandas as pd
    history = pd.read_csv(summary.parent / "history.csv")
    scored = history.groupby("dataset").val_risk.apply(lambda v: v.notna().any())   # a split was scored
    assert {d: m["validation"] for d, m in ran.items()} == scored.to_dict()
    for m in ran.values():
        held = [max(1, round(n / 12)) if m["validation"] else 0 for n in (m["page_p"], m["page_u"])]
        assert (m["trained_p"], m["trained_u"]) == (m["page_p"] - held[0], m["page_u"] - held[1])
        assert (m["trained_fingerprint"] != m["fingerprint"]) == m["validation"]
