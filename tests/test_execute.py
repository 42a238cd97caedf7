"""A page whose data set is missing: a person running it with papermill gets a non-zero
exit and the message; the book build renders it as "not run" and keeps earlier results."""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("execute", ROOT / "book" / "execute.py")
execute = importlib.util.module_from_spec(spec)
spec.loader.exec_module(execute)


def test_papermill_without_the_data_exits_non_zero_and_creates_nothing(tmp_path):
    source = tmp_path / "real_data.ipynb"
    nbformat.write(jupytext.read(ROOT / "notebooks" / "real_data.md"), source)
    data_dir, out_dir = tmp_path / "my-data", tmp_path / "results"
    data_dir.mkdir()
    env = {**os.environ, "PUSUPPORT_DATA": "", "TQDM_DISABLE": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "papermill", str(source), str(tmp_path / "out.ipynb"), "-k", "python3",
         "-p", "profile", "smoke", "-p", "dataset", "cifar10", "-p", "data_dir", str(data_dir),
         "-p", "output_dir", str(out_dir), "--cwd", str(ROOT)],
        capture_output=True, text=True, env=env, timeout=300)
    said = run.stdout + run.stderr
    assert run.returncode != 0
    assert "DatasetNotFoundError" in said and "CIFAR-10 was not found" in said
    assert "Looked for:" in said and "Provide it in one of three ways" in said
    assert str(data_dir / "cifar-10-batches-py") in said
    assert list(data_dir.iterdir()) == [] and not out_dir.exists()       # nothing created


def executed_page(path: Path, failing_at: int) -> None:
    """An executed notebook whose code cell ``failing_at`` raised (as papermill leaves it)."""
    banner = nbformat.v4.new_markdown_cell('<span style="color:red">An Exception was encountered')
    banner.metadata["tags"] = ["papermill-error-cell-tag"]
    cells = [banner, nbformat.v4.new_markdown_cell("# Title")]
    for i in range(4):
        cell = nbformat.v4.new_code_cell(f"x = {i}")
        if i == failing_at:
            cell.outputs = [nbformat.v4.new_output("error", ename="DatasetNotFoundError",
                                                   evalue="gone", traceback=[])]
        cells.append(cell)
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)


def test_not_run_page_keeps_the_cells_before_the_failure_and_shows_the_message(tmp_path):
    page, results = tmp_path / "page.ipynb", tmp_path / "results" / "real_cifar100"
    executed_page(page, failing_at=2)
    execute.mark_not_run(page, "CIFAR-100 was not found.\nLooked for: …", results, "smoke")
    nb = nbformat.read(page, as_version=4)
    assert [c.source for c in nb.cells[:3]] == ["# Title", "x = 0", "x = 1"] and len(nb.cells) == 4
    assert "Not run: data not available" in nb.cells[3].source
    assert "CIFAR-100 was not found." in nb.cells[3].source
    summary = json.loads((results / "summary.json").read_text())
    assert summary["status"] == "not run" and summary["reason"] == "data not available"
    assert "Looked for" in summary["message"]


def test_not_run_never_overwrites_an_earlier_successful_result(tmp_path):
    page, results = tmp_path / "page.ipynb", tmp_path / "results" / "real_cifar10"
    results.mkdir(parents=True)
    earlier = {"status": "run", "methods": {"aapu": {"n_seeds": 2}}}
    (results / "summary.json").write_text(json.dumps(earlier))
    executed_page(page, failing_at=1)
    execute.mark_not_run(page, "gone", results, "cpu")
    assert json.loads((results / "summary.json").read_text()) == earlier


def test_the_progress_line_names_the_pages_left_and_estimates_from_the_last_build():
    line = execute.Progress(total=4, done=0, later=["summary"], earlier={"b": 600, "summary": 120},
                            workers=2)
    assert line("a", 61.4, ["b"]) == ("[1/4] a: 61 s; running: b; 1 more queued; about 6 min "
                                      "left by earlier page times")
    assert line("b", None, ["c", "e", "f"]).startswith("[2/4] b: failed; running: c, e; 2 more "
                                                       "queued; about 1 min left")
    assert "(1 pages not timed before)" in line("c", 1.0, ["d"])
    assert line("d", 2.0, []).endswith("d: 2 s; 1 more queued; about 1 min left by earlier page times")
    assert execute.Progress(1, 0, [], {}, 2)("a", 1.0, ["x"]).endswith("no earlier page times")


def test_pages_that_read_other_pages_run_after_them_longest_first(monkeypatch):
    waves = []
    monkeypatch.setattr("pusupport.book.cluster.start", lambda workers, device: {"num_cpus": 1})
    monkeypatch.setattr("pusupport.book.cluster.run_pages", lambda script, wave, kwargs, task, line: (
        waves.append([p["page"] for p in wave]) or ({p["page"]: 1.0 for p in wave}, {})))
    pages = [{"page": p} for p in ("summary", "a", "standing", "b", "c")]
    times, failed = execute.run_ray(pages, {"device": "cpu"}, 2, {"a": 10, "b": 30})
    assert waves == [["c", "b", "a"], ["standing"], ["summary"]] and len(times) == 5 and not failed


def test_a_fresh_output_folder_takes_the_committed_reference_page_times(tmp_path, monkeypatch):
    reference = tmp_path / "reference" / "{profile}" / "page_times.json"
    monkeypatch.setattr(execute, "REFERENCE_TIMES", reference)
    assert execute.earlier_times(tmp_path / "page_times_cpu.json", "cpu") == {}
    (tmp_path / "reference" / "cpu").mkdir(parents=True)
    (tmp_path / "reference" / "cpu" / "page_times.json").write_text(json.dumps(
        {"measured": {"commit": "abc"}, "pages": {"readings": 1100.0}}))
    assert execute.earlier_times(tmp_path / "page_times_cpu.json", "cpu") == {"readings": 1100.0}
    (tmp_path / "page_times_cpu.json").write_text(json.dumps({"readings": 900.0}))
    assert execute.earlier_times(tmp_path / "page_times_cpu.json", "cpu") == {"readings": 900.0}



def test_the_committed_reference_page_times_name_pages_of_the_book_and_their_provenance():
    from pusupport.book.registry import book_pages
    reference = json.loads(Path(str(execute.REFERENCE_TIMES).format(profile="cpu")).read_text())
    assert set(reference["pages"]) <= {p["page"] for p in book_pages()} and reference["pages"]
    assert all(seconds > 0 for seconds in reference["pages"].values())
    assert {"commit", "machine", "date", "command", "wall_seconds", "note"} <= set(reference["measured"])


def test_a_misspelt_papermill_parameter_fails_the_first_cell_with_the_valid_names(tmp_path):
    """papermill only warns about a name the notebook lacks: the page itself refuses it."""
    source = tmp_path / "formulation.ipynb"
    nbformat.write(jupytext.read(ROOT / "notebooks" / "formulation.md"), source)
    run = subprocess.run(
        [sys.executable, "-m", "papermill", str(source), str(tmp_path / "out.ipynb"), "-k", "python3",
         "-p", "profle", "smoke", "-p", "output_dir", str(tmp_path / "results"), "--cwd", str(ROOT)],
        capture_output=True, text=True, env={**os.environ, "TQDM_DISABLE": "1"}, timeout=300)
    said = run.stdout + run.stderr
    assert run.returncode != 0 and "unknown parameter(s) ['profle']" in said
    assert "the valid parameters are [" in said and "'profile'" in said
    assert not (tmp_path / "results").exists()                      # nothing ran
