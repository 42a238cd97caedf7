"""Fan-out with Ray (book/execute.py --workers N): the same results as the serial build, a
failing page named with a non-zero exit, and no Ray on the default path.

The Ray tests need the `cluster` extra; without it they skip, saying why — with
CI=true they fail instead (CI installs the extra).
"""
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent
EXECUTE = ROOT / "book" / "execute.py"
SMOKE = Path(os.environ.get("SMOKE_BOOK", ROOT / "build" / "smoke"))
IN_CI = os.environ.get("CI", "").lower() == "true"

#: Fields of summary.json that are wall-clock times, so differ between any two runs:
#: the page's wall time (top level) and the time the own-data page took to estimate
#: the class prior. Every other field must be equal.
TIMINGS = (("wall_seconds",), ("prior_estimate", "seconds"))


def require_ray():
    if importlib.util.find_spec("ray") is None:
        reason = "Ray is not installed: pip install -e '.[cluster]'"
        if IN_CI:
            pytest.fail(f"{reason} (CI=true: this check must run)")
        pytest.skip(reason)


def require_smoke_build(folder: Path):
    if not folder.is_dir():
        reason = f"no serial smoke build in {SMOKE} (make test builds it first)"
        if IN_CI:
            pytest.fail(f"{reason} (CI=true: this check must run)")
        pytest.skip(reason)


def run_execute(*args, timeout, env=None):
    env = {**os.environ, **(env or {}), "TQDM_DISABLE": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    env.pop("RAY_ADDRESS", None)                 # a local Ray instance, never a real cluster
    return subprocess.run([sys.executable, str(EXECUTE), "--profile", "smoke", *args],
                          capture_output=True, text=True, env=env, timeout=timeout)


def without_timings(summary: dict) -> dict:
    for path in TIMINGS:
        *parents, key = path
        node = summary
        for p in parents:
            node = node.get(p, {})
        node.pop(key, None)
    return summary


def summaries(results: Path) -> dict:
    """{page: summary.json without TIMINGS}; a path into ``results`` (own_data's model_path)
    is written relative to it, as <results>/..."""
    return {p.parent.name: without_timings(json.loads(
                p.read_text().replace(str(results.resolve()), "<results>")))
            for p in sorted(results.glob("*/summary.json"))}


def test_the_default_path_imports_no_ray():
    code = ("import importlib.util, sys; spec = importlib.util.spec_from_file_location('x', "
            f"{str(EXECUTE)!r}); spec.loader.exec_module(importlib.util.module_from_spec(spec)); "
            "import pusupport.book.runs; print('ray' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "False"
    help_run = subprocess.run([sys.executable, str(EXECUTE), "--help"], capture_output=True,
                              text=True, timeout=120)
    assert help_run.returncode == 0 and "--workers" in help_run.stdout


#: Pages run again serially against `make test`'s build (two pages at a time, their runs as Ray
#: tasks): one of each kind of job — runs as Ray tasks (formulation), stacked seeds shared
#: through the run store (synthetic, readings: the book's reading is the synthetic page's
#: pair), CNN runs seed by seed (CIFAR-10) and sparse rows (20 News). The pages that read
#: every page's results (standing, summary) are left out: alone in a folder they would train
#: or miss what the book shares. Two groups, each a serial build of its own (a page that reads
#: another's runs beside it), which `make test` runs side by side, one to a CPU.
WITH_RAY = (("formulation", "synthetic", "readings"), ("real_cifar10", "real_20news"))


@pytest.mark.book
@pytest.mark.parametrize("pages", WITH_RAY, ids="+".join)
def test_ray_runs_give_the_summaries_of_a_serial_build(tmp_path, pages):
    require_ray()
    built = SMOKE / "results"
    require_smoke_build(built)
    # the smoke build's runs inside pages were Ray tasks
    assert "jobs as Ray tasks" in (SMOKE / "pages" / "formulation.ipynb").read_text()
    data = os.environ.get("PUSUPPORT_DATA")
    run = run_execute("--workers", "1", "--only", *pages, "--no-build", "--book-dir",
                      str(tmp_path / "book"), "--output-dir", str(tmp_path / "results"),
                      *(["--data-dir", data] if data else []), timeout=1800)
    said = run.stdout + run.stderr
    assert run.returncode == 0, said[-5000:]
    assert "Ray: every task gets" not in said
    ours, theirs = summaries(tmp_path / "results"), summaries(built)
    assert sorted(ours) == sorted(pages)
    assert [page for page in pages if ours[page] != theirs[page]] == []


def test_a_failing_page_is_retried_once_then_named_with_a_non_zero_exit(tmp_path):
    require_ray()
    pages = [{"page": "introduction", "notebook": "introduction", "parameters": {}},
             {"page": "broken", "notebook": "real_data", "parameters": {"dataset": "no_such_set"}}]
    (tmp_path / "pages.json").write_text(json.dumps(pages))
    run = run_execute("--workers", "2", "--no-build", "--pages-file", str(tmp_path / "pages.json"),
                      "--book-dir", str(tmp_path / "book"), "--output-dir",
                      str(tmp_path / "results"), timeout=600)
    said = run.stdout + run.stderr
    assert run.returncode == 1, said[-5000:]
    assert said.count("broken failed (") == 1 and "retrying once" in said   # one retry
    assert said.count("broken failed again") == 1 and "] broken: failed" in said
    assert "page broken FAILED twice" in said and "failed pages: broken" in said
    assert "no_such_set" in said                               # the page's own error
    # the other page still ran
    assert json.loads((tmp_path / "results" / "page_times_smoke.json").read_text()).keys() == {
        "introduction"}


def test_the_no_training_guard_stops_any_training_and_nothing_else():
    """tests/no_training on PYTHONPATH: importing the package works, training raises."""
    code = ("from pusupport.data import synthetic; from pusupport.core.training import train\n"
            "try:\n    train(synthetic(0, n_labeled=10, n_unlabeled=20, n_test=10), method='nnpu', epochs=1)\n"
            "except RuntimeError as err:\n    print('stopped:', err)")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tests" / "no_training")}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("stopped: this build trained a run")


@pytest.mark.book
def test_a_page_that_reuses_another_pages_run_names_it():
    """In `make test`'s smoke build the pages that use the book's aaPU and nnPU runs read them
    from the page that trained them first, and the standing page CIFAR-10's (where no method it
    runs reads a held-out split, so it trains on that page's data), each naming the page.
    (Built a second time into the same folder, the whole book trains nothing: `make test`
    runs nbval that way, with tests/no_training on PYTHONPATH.)"""
    pages = SMOKE / "pages"
    require_smoke_build(pages)
    said = {name: (pages / f"{name}.ipynb").read_text()
            for name in ("biased_selection", "synthetic", "readings", "standing")}
    # two pages at a time: whichever page took the book's pair first trained each run, once;
    # the others read it, naming that page
    def read_from(text) -> dict:             # {run: the pages it was read from}, e.g. from
        line = re.search(r"read from the run store, not trained again: (.*?)\\n", text)   # "aapu, nnpu
        found = {}                                                     # (trained by the x page)"
        for labels, by in re.findall(r"([\w, ]+?) \(trained by the (\w+) page", line[1] if line else ""):
            for run in labels.split(", "):
                found.setdefault(run.strip(), set()).add(by)
        return found
    named = {}
    for name in ("biased_selection", "synthetic", "readings"):
        for run, by in read_from(said[name]).items():
            named.setdefault(run, set()).update(by)
    assert {run: len(by) for run, by in named.items() if run in ("aapu", "nnpu")} == {"aapu": 1, "nnpu": 1}, named
    assert {"aapu", "nnpu"} <= set(read_from(said["standing"])), said["standing"][:2000]


def test_on_gpus_the_runs_of_a_model_that_shares_take_a_fraction_of_one():
    """A run's Ray resources on a GPU cluster: the §4.1 MLP two runs a GPU (sharing paid
    1.81×), Kiryo's CNN one (0.98×); one MLP run a GPU where two would not fit its memory."""
    from pusupport.book.cluster import job_task
    from pusupport.book.cost import Run, run_memory
    from pusupport.book.registry import get
    gpu = {"num_gpus": 1, "num_cpus": 8}
    mlp = get("synthetic").runs(profile="paper", device="cuda").jobs[0]
    cnn = get("real_data").runs("cifar10", profile="paper", device="cuda").jobs[0]
    assert job_task(gpu, mlp) == {"num_gpus": 0.5, "num_cpus": 4}
    assert job_task(gpu, cnn) == gpu and job_task({"num_cpus": 1}, mlp) == {"num_cpus": 1}
    peak = max(run_memory(Run(r.cfg, r.sizes, len(mlp.seeds), mlp.stacked)) for r in mlp.runs)
    assert job_task(gpu, mlp, gpu_memory=2.5 * peak)["num_gpus"] == 0.5
    assert job_task(gpu, mlp, gpu_memory=1.5 * peak) == gpu


def test_runs_sharing_a_declared_gpu_give_the_runs_trained_here(tmp_path, capsys):
    """Ray's local cluster with one GPU declared on this CPU: the readings page's MLP jobs
    run as half-GPU tasks and give the histories the page trains alone."""
    require_ray()
    import ray
    from pusupport.book import cluster
    from pusupport.book.pages import resolve_page
    from pusupport.book.store import train_runs
    from test_pages import params
    page = resolve_page("readings", **params("readings", profile="smoke", seeds=[0, 1],
                                             output_dir=str(tmp_path)))
    jobs = list(page.resolved().jobs)
    ray.init(num_cpus=2, num_gpus=1, include_dashboard=False, logging_level="ERROR")
    try:
        runner = {"address": ray.get_runtime_context().gcs_address,
                  "task": {"num_gpus": 1, "num_cpus": 1}}
        assert {cluster.job_task(runner["task"], job)["num_gpus"] for job in jobs} == {0.5}
        shared = cluster.fan_out(jobs, runner)
    finally:
        ray.shutdown()
    line = next(line for line in capsys.readouterr().out.splitlines() if "jobs as Ray tasks" in line)
    # the page's wait for the workers' jobs is said where there were any (its CPU held idle)
    assert ("s waiting for the workers'" in line) == (" 0 on workers" not in line)
    built = {}
    for job, got in zip(jobs, shared):
        for (ours, _), (theirs, _) in zip(got, train_runs(job, job.datas(built))):
            for a, b in zip(ours, theirs):
                pd.testing.assert_frame_equal(a.history.drop(columns="wall_time"),
                                              b.history.drop(columns="wall_time"))


def test_a_job_is_claimed_once_and_a_job_task_claims_it_without_ray(monkeypatch, tmp_path):
    """Each job trains once: the first claim wins, the page's or a worker's; a task that
    starts after the page closed its claims (each job read from the run store in a
    moment) gets nothing to do. The claim makes no Ray call — a task blocked in one lends
    its CPU, and a 1-CPU cluster then ran two job tasks at once (DEVELOPING.md, "A fresh
    build at f778d25") — so here Ray is not there at all."""
    from pusupport.book import cluster

    def no_ray():
        raise AssertionError("a job task called Ray before it trained")
    monkeypatch.setattr(cluster, "import_ray", no_ray)
    monkeypatch.setattr(cluster, "train_runs", lambda job, datas, store=None: ("trained", job, datas))
    claims = tmp_path / "claims"
    claims.mkdir()
    job = SimpleNamespace(seeds=(0, 1), runs=("a",))
    assert cluster._claimed_run(str(claims), 3, {"num_cpus": 1}, job, None, "d0", "d1") == (
        "trained", job, [["d0", "d1"]])
    assert cluster._claimed_run(str(claims), 3, {"num_cpus": 1}, job, None, "d0", "d1") is None
    assert cluster.claim(str(claims), 4) and not cluster.claim(str(claims), 4)
    shutil.rmtree(claims)                                               # the page closed them
    assert cluster._claimed_run(str(claims), 5, {"num_cpus": 1}, job, None, "d0", "d1") is None


def test_the_page_takes_its_costliest_job_first_and_a_worker_the_cheapest(monkeypatch, tmp_path):
    """Ray starts a page's job tasks cheapest first (the cost model's FLOPs) and the page
    takes them from the other end, so that the page is not left waiting on a costly job a
    worker started late. Here no worker starts one (a stand-in for Ray, no cluster): the
    page takes every job, costliest first, and each result lands in its job's place."""
    from pusupport.book import cluster
    from pusupport.book.cost import run_flops
    from pusupport.book.pages import resolve_page
    from pusupport.book.store import RunStore
    from test_pages import params
    page = resolve_page("readings", **params("readings", profile="smoke", seeds=[0, 1],
                                             output_dir=str(tmp_path)))
    jobs = list(page.resolved().jobs)
    flops = [job.flops for job in jobs]
    assert flops != sorted(flops)       # taking the plan's last first would not be costliest first
    assert sum(flops) == pytest.approx(sum(run_flops(r) for r in page.resolved().priced()))
    submitted, taken = [], []

    class Task:                         # a job task that no worker ever starts
        def options(self, **task):
            return self

        def remote(self, claims, i, *args):
            submitted.append(i)
            return i

    class NoWorkers:                    # only what fan_out asks of Ray
        is_initialized = staticmethod(lambda: True)
        put = staticmethod(lambda x: x)
        cancel = staticmethod(lambda x: None)

        @staticmethod
        def remote(target):
            assert target is cluster._claimed_run
            return Task()

        @staticmethod
        def get(ref):
            raise AssertionError("the page waited on a worker that never started")

    monkeypatch.setattr(cluster, "import_ray", lambda: NoWorkers)
    monkeypatch.setattr(cluster, "train_runs", lambda job, datas, store=None: taken.append(job) or job.labels)
    out = cluster.fan_out(jobs, {"address": None, "task": {"num_cpus": 1}}, RunStore(tmp_path / "runs", "readings"))
    assert list((tmp_path / "runs").iterdir()) == []           # the claims closed, beside the store
    assert out == [job.labels for job in jobs]                 # each job's result in its place
    assert submitted == cluster.claim_order(jobs) == sorted(range(len(jobs)), key=flops.__getitem__)
    assert [job.flops for job in taken] == sorted(flops, reverse=True)
