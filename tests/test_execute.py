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
import pytest

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
    assert "(1 page not timed before, not counted)" in line("c", 1.0, ["d"])
    assert line("d", 2.0, []).endswith("d: 2 s; 1 more queued; about 1 min left by earlier page times")
    assert execute.Progress(1, 0, [], {}, 2)("a", 1.0, ["x"]).endswith(
        "no earlier page times (1 page not timed before, not counted)")


def test_between_pages_a_line_says_what_runs_and_the_time_left_on_this_machine(monkeypatch):
    """Earlier times × the machine's factor, less the time the running pages have had."""
    from pusupport.book import timing
    clock = iter([0.0, 120.0, 130.0, 130.0])
    monkeypatch.setattr(timing.time, "perf_counter", lambda: next(clock))
    progress = execute.Progress(3, 0, [], {"a": 600, "b": 300}, 1, factor=2.0)
    progress.left, progress.running = ["a", "b", "c"], ["a"]
    assert progress.beat(125.0) == ("  … 2 min in, 0/3 pages done, running: a (2 min since the "
                                    "start); about 28 min left by earlier page times "
                                    "(1 page not timed before, not counted)")
    progress.done = 1
    assert "running: a (" in progress.beat(130.0) and " since the last page ended); " in progress.beat(130.0)


def test_the_time_left_follows_the_pace_of_the_pages_ended_so_far():
    """Pages that took 1.5× their earlier times make the rest's estimate 1.5× too."""
    progress = execute.Progress(3, 0, [], {"a": 600, "b": 600, "c": 1200}, 1)
    assert progress("a", 900.0, ["b", "c"]).endswith("about 45 min left by earlier page times")
    assert progress("b", 600.0, ["c"]).endswith("about 25 min left by earlier page times")


def test_pages_reading_committed_runs_neither_count_nor_set_the_pace():
    """Their earlier times are a training build's: a page that read in 14 s must not make
    the pages that train look 25 times faster."""
    progress = execute.Progress(4, 0, [], {"read": 350, "c": 600, "d": 600}, 1, reading=["read", "r2"])
    assert progress("read", 14.0, ["c", "d", "r2"]).endswith(
        "about 20 min left by earlier page times (1 page reading committed runs, not counted)")
    assert progress.took == progress.said == 0.0


def test_pages_reading_committed_runs_count_by_their_read_times_where_measured():
    """A fresh clone reads 14 pages' runs: the time left counts each by the time it took to
    read them (unscaled, setting no pace), and only a page without one is left out."""
    progress = execute.Progress(4, 0, [], {"r1": 900, "r2": 900, "c": 600}, 2, factor=2.0,
                                reading=["r1", "r2", "r3"], read_times={"r1": 60, "r2": 180, "c": 5})
    assert progress("r1", 50.0, ["r2", "r3", "c"]).endswith(
        "about 12 min left by earlier page times (1 page reading committed runs, not counted)")
    assert progress.took == progress.said == 0.0
    reads = execute.read_times("cpu")
    assert set(reads) == execute.pages_committed("cpu") and all(0 < t < 120 for t in reads.values())


def test_a_page_running_past_its_earlier_time_says_so_instead_of_a_minute_left(monkeypatch):
    from pusupport.book import timing
    clock = iter([0.0, 700.0])
    monkeypatch.setattr(timing.time, "perf_counter", lambda: next(clock))
    progress = execute.Progress(2, 0, [], {"a": 60, "b": 240}, 1)
    progress.left, progress.running = ["b"], ["b"]
    assert progress.beat(700.0).endswith(
        "running: b (12 min since the start); 8 min longer than earlier page times said: no estimate")


def test_time_spent_on_a_page_reading_committed_runs_is_not_taken_from_the_pages_that_train(monkeypatch):
    from pusupport.book import timing
    clock = iter([0.0, 600.0, 600.0])
    monkeypatch.setattr(timing.time, "perf_counter", lambda: next(clock))
    progress = execute.Progress(3, 0, [], {"r": 60, "a": 600, "b": 240}, 2, reading=["r"])
    progress.left, progress.running = ["r", "a", "b"], ["r", "a"]       # a: 600 s, half its worker's
    assert progress.beat(600.0).endswith("about 2 min left by earlier page times "
                                         "(1 page reading committed runs, not counted)")
    progress.running = ["r"]                                            # a waits: nothing spent on it
    assert "; about 7 min left by earlier page times" in progress.beat(600.0)


def test_a_heartbeat_prints_while_its_block_runs(capsys):
    import time
    from pusupport.book.timing import Heartbeat
    with Heartbeat(lambda elapsed: f"beat {elapsed > 0}", every=0.05):
        time.sleep(0.3)
    beats = capsys.readouterr().out.splitlines()
    assert len(beats) >= 3 and set(beats) == {"beat True"}


def test_the_projection_is_scaled_by_this_cpu_against_the_reference_probe(tmp_path, monkeypatch):
    from pusupport.book import timing
    reference = tmp_path / "reference" / "{profile}" / "page_times.json"
    monkeypatch.setattr(execute, "REFERENCE_TIMES", reference)
    (tmp_path / "reference" / "cpu").mkdir(parents=True)
    (tmp_path / "reference" / "cpu" / "page_times.json").write_text(json.dumps(
        {"measured": {"machine": "the reference", "probe": {"float32": 40.0, "bf16": 120.0, "runs": "bf16"}},
         "pages": {"readings": 1100.0}}))
    no_bf16 = {"float32": 30.0, "bf16": 1.0, "runs": "float32"}     # emulated bf16, unused
    monkeypatch.setattr(execute, "probe", lambda: no_bf16)
    factor, source = execute.reference_speed(tmp_path / "page_times_cpu.json", "cpu")
    assert factor == timing.slower(no_bf16, {"float32": 40.0, "bf16": 120.0, "runs": "bf16"}) == 4.0
    assert source.startswith("the committed reference build (the reference) × 4.00: this CPU's")
    (tmp_path / "page_times_cpu.json").write_text(json.dumps({"readings": 900.0}))
    assert execute.reference_speed(tmp_path / "page_times_cpu.json", "cpu") == (
        1.0, "this output folder's last build")
    (tmp_path / "page_times_cpu.json").unlink()
    (tmp_path / "reference" / "cpu" / "page_times.json").write_text(json.dumps(
        {"measured": {"machine": "the reference", "probe": {"float32": 40.0, "bf16": 120.0, "runs": "bf16"}},
         "pages": {"readings": 1100.0},
         "by_cpu": {"amx_bf16": {"measured": {"machine": "a Xeon", "probe": {"float32": 60.0, "bf16": 300.0,
                                                                              "runs": "bf16"}},
                                 "pages": {"readings": 700.0}}}}))
    amx = {"float32": 60.0, "bf16": 150.0, "runs": "bf16"}
    monkeypatch.setattr(execute, "probe", lambda: amx)
    for cpu, machine, factor, pages in [("amx_bf16", "a Xeon", 2.0, 700.0), ("avx512_bf16", "the reference", 0.8, 1100.0),
                                        (None, "the reference", 0.8, 1100.0)]:
        monkeypatch.setattr(execute, "cpu_bf16_instructions", lambda: cpu)   # the class's own build, else the main one
        said = execute.reference_speed(tmp_path / "page_times_cpu.json", "cpu")
        assert said[0] == factor and said[1].startswith(f"the committed reference build ({machine}) × {factor:.2f}")
        assert execute.earlier_times(tmp_path / "page_times_cpu.json", "cpu") == {"readings": pages}
    assert timing.projected({}, ["a"], 2, 1.0, "x") == "projected: no earlier page times for 1 page"
    assert timing.projected({"a": 600, "b": 600}, ["a", "b", "c"], 2, 2.0, "src") == (
        "projected: about 20 min for 3 pages, 2 at a time, by src (1 page not timed before)")
    probed = timing.probe(seconds=0.05)
    assert probed["float32"] > 0 and probed["bf16"] > 0 and probed["runs"] in ("bf16", "float32")


def test_pages_others_wait_for_start_first_and_each_page_after_those_it_reads():
    pages = [{"page": "summary", "after": ["a", "b", "c", "dep", "standing"]},
             {"page": "a"}, {"page": "standing", "after": ["dep", "not selected"]},
             {"page": "b"}, {"page": "c"}, {"page": "dep"}]
    earlier = {"a": 10, "b": 30, "dep": 5, "standing": 100, "summary": 1}     # c never timed
    order = [p["page"] for p in execute.schedule(pages, earlier)]
    # chains to the end: c ∞, dep 5 + 100 + 1, standing 101, b 31, a 11, summary 1
    assert order == ["c", "dep", "standing", "b", "a", "summary"]
    # pages reading the committed runs take no time: the one that trains (a) starts first
    order = [p["page"] for p in execute.schedule(pages, earlier, read={"b", "c", "dep", "standing", "summary"})]
    assert order == ["a", "b", "c", "dep", "standing", "summary"]


class _Ray:
    """Just enough of Ray for run_pages: tasks end in the order they were submitted;
    ``fails``: pages whose every attempt raises."""

    def __init__(self, fails=(), cpus=8):
        self.events, self.fails, self.queue, self.cpus = [], set(fails), [], cpus
        self.exceptions = type("exceptions", (), {"RayError": RuntimeError})

    def remote(self, fn):
        ray = self

        class Task:
            def options(self, **kw):
                return self

            def remote(self, script, page, kwargs, task):
                ray.events.append(("start", page["page"]))
                ref = object()
                ray.queue.append((ref, page["page"]))
                return ref
        return Task()

    def cluster_resources(self):
        return {"CPU": self.cpus}

    def wait(self, refs, num_returns):
        first = next(ref for ref, _ in self.queue if ref in refs)
        return [first], [r for r in refs if r is not first]

    def get(self, ref):
        name = next(n for r, n in self.queue if r is ref)
        self.queue = [(r, n) for r, n in self.queue if r is not ref]
        self.events.append(("end", name))
        if name in self.fails:
            raise RuntimeError(f"{name} broke")
        return 1.0


def test_ray_starts_a_page_once_the_pages_it_reads_have_ended_even_if_one_failed(monkeypatch):
    from pusupport.book import cluster
    fake = _Ray(fails={"dep"})
    monkeypatch.setattr(cluster, "import_ray", lambda: fake)
    pages = execute.schedule([{"page": "a"}, {"page": "dep"}, {"page": "standing", "after": ["dep"]},
                              {"page": "summary", "after": ["a", "dep", "standing"]}],
                             {"a": 50, "dep": 5, "standing": 100, "summary": 1})
    times, failed = cluster.run_pages("x", pages, {}, {"num_cpus": 1}, lambda *a: "")
    ev = fake.events
    assert ev[:2] == [("start", "dep"), ("start", "a")]          # both free to start at once
    assert ev.index(("start", "standing")) > max(i for i, e in enumerate(ev) if e == ("end", "dep"))
    assert ev.count(("start", "dep")) == 2 and set(failed) == {"dep"}    # tried once more
    assert ev[-2:] == [("start", "summary"), ("end", "summary")]
    assert set(times) == {"a", "standing", "summary"}


def test_a_page_whose_pages_have_ended_starts_before_the_later_pages_of_the_order(monkeypatch):
    """Two CPUs: Ray is given two pages at a time, so standing, ready once dep has ended,
    starts before b and a (lower in the order), not behind them in Ray's queue."""
    from pusupport.book import cluster
    fake = _Ray(cpus=2)
    monkeypatch.setattr(cluster, "import_ray", lambda: fake)
    pages = execute.schedule([{"page": "a"}, {"page": "b"}, {"page": "dep"},
                              {"page": "standing", "after": ["dep"]}, {"page": "c"}],
                             {"a": 10, "b": 30, "c": 40, "dep": 5, "standing": 100})
    assert [p["page"] for p in pages] == ["dep", "standing", "c", "b", "a"]
    cluster.run_pages("x", pages, {}, {"num_cpus": 1}, lambda *a: "")
    started = [name for what, name in fake.events if what == "start"]
    assert started == ["dep", "c", "standing", "b", "a"]
    assert cluster._slots({"CPU": 16.0, "GPU": 2.0}, {"num_gpus": 0.5, "num_cpus": 4}) == 4


def test_the_book_runs_standing_after_the_comparison_pages_and_summary_last():
    """… and the readings after the synthetic page, whose nnPU run its book reading reads:
    the other way round, the synthetic page held a CPU for 15 minutes of a build waiting for
    the readings' copy of that run (its lock)."""
    from pusupport.book.registry import book_pages
    pages = {p["page"]: p for p in book_pages()}
    assert set(pages["standing"]["after"]) == {"synthetic", "real_fashion_mnist", "real_20news",
                                               "real_cifar10"}
    assert set(pages["summary"]["after"]) == set(pages) - {"summary"}
    assert pages["readings"]["after"] == ["synthetic"]
    order = [p["page"] for p in execute.schedule(list(pages.values()), {"synthetic": 294, "readings": 1342})]
    assert order.index("synthetic") < order.index("readings")


def test_a_page_run_with_other_parameters_keeps_its_own_time():
    """A page re-run with ``--set`` is timed apart from its plain run: the own-data page on a
    folder of images is not projected by its time on the example, nor the reverse."""
    kept = {"own_data": 17.0, "synthetic": 40.0}
    folder = {"image_folder": "/data/digits"}
    assert execute.as_run(kept, ["own_data"], folder) == {"synthetic": 40.0}      # never timed so
    kept[execute.timed_as("own_data", folder)] = 211.0
    assert execute.timed_as("own_data", folder) == 'own_data --set image_folder="/data/digits"'
    assert execute.as_run(kept, ["own_data"], folder)["own_data"] == 211.0
    assert execute.as_run(kept, ["own_data"], {})["own_data"] == 17.0


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



@pytest.mark.parametrize("profile", ["cpu", "smoke"])
def test_the_committed_reference_page_times_name_pages_of_the_book_and_their_provenance(profile):
    from pusupport.book.registry import book_pages
    reference = json.loads(Path(str(execute.REFERENCE_TIMES).format(profile=profile)).read_text())
    for build in [reference, *reference.get("by_cpu", {}).values()]:      # each with its provenance
        assert set(build["pages"]) <= {p["page"] for p in book_pages()} and build["pages"]
        assert all(seconds > 0 for seconds in build["pages"].values())
        assert {"commit", "machine", "date", "command", "wall_seconds", "note", "probe"} <= set(build["measured"])
        assert set(build["measured"]["probe"]) == {"float32", "bf16", "runs", "date"}
    assert set(reference.get("by_cpu", {})) <= {"amx_bf16", "avx512_bf16", "float32"}


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


def test_a_page_s_own_parameters_are_set_in_the_one_command(tmp_path, monkeypatch):
    """`--set NAME=VALUE` (YAML values) reaches the --only page's parameters; a malformed or
    build-wide one is refused naming the fix, before any page runs."""
    ran = []
    monkeypatch.setattr(execute, "run_serial", lambda selected, kwargs, progress: ran.extend(selected) or {})
    assert execute.main(["--only", "synthetic", "--profile", "smoke", "--no-build", "--book-dir",
                         str(tmp_path / "book"), "--output-dir", str(tmp_path / "results"),
                         "--set", "seeds=[0, 1]", "--set", "n_select=3"]) == 0
    assert [p["page"] for p in ran] == ["synthetic"]
    assert ran[0]["parameters"]["seeds"] == [0, 1] and ran[0]["parameters"]["n_select"] == 3

    def refused(*given):
        errors = []
        execute.page_parameters(list(given), ["synthetic"], errors.append)
        return errors
    assert refused("profile=paper") == ["--set profile=…: use --profile for that"]
    assert refused("seeds") == ["--set 'seeds': write NAME=VALUE, e.g. --set 'seeds=[0, 1, 2]'"]
    assert refused("seeds=[0,")[0].startswith("--set 'seeds=[0,': the value is not YAML")
    errors = []
    execute.page_parameters(["seeds=[0]"], None, errors.append)
    assert errors == ["--set changes a page's own parameters: name the page with --only PAGE"]


def test_a_build_says_what_becomes_of_the_runs_it_trained(tmp_path, monkeypatch):
    """The book's own runs can be committed; a check build's runs never are (they are held
    against the committed ones); a build with page parameters keeps its runs where they are."""
    monkeypatch.delenv("PUSUPPORT_CHECK", raising=False)
    assert "`make commit-runs PROFILE=cpu` commits them" in execute.trained_note(3, "cpu", tmp_path, {})
    kept = execute.trained_note(3, "cpu", tmp_path, {"epochs": 8})
    assert "kept in" in kept and "commit-runs" not in kept
    monkeypatch.setenv("PUSUPPORT_CHECK", "1")
    checked = execute.trained_note(2, "cpu", tmp_path, {})
    assert checked.startswith("2 runs trained again by this check build") and "commit-runs" not in checked


def test_a_build_says_where_its_training_time_went():
    said = execute.training_profile({"readings": 1380.0, "standing": 840.0, "synthetic": 300.0}, 2)
    assert said == ("training, in minutes of one worker: readings 23.0, standing 14.0, synthetic "
                    "5.0; 42.0 in all, about 21.0 min on 2 workers")
    assert execute.training_profile({"prior": 18.0}, 1).endswith("0.3 in all, about 0.3 min on 1 worker")
