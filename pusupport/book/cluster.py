"""Fan-out with Ray (the optional ``cluster`` extra): a book's pages, and a page's runs.

``book/execute.py --workers N`` (or with ``RAY_ADDRESS`` set) runs each page as a Ray
task, and gives it the papermill parameter ``runner`` (the cluster's address and the
task's resources), so the page's :func:`~pusupport.book.runs.execute` sends its runs
(one per stack of runs, or per run and seed) to the same cluster. A page's task asks for
one GPU when the cluster has GPUs (and the device is not ``cpu``), else for one CPU; a
run's task the same, or 1/N of a GPU where N runs of its model share one
(:func:`job_task`); a task's torch and OpenMP threads are the CPUs it was given.

A page waits for its runs while holding its own GPU or CPU. So that pages holding every
GPU never wait on runs that cannot start, the page also takes runs itself: each run
starts once — on a worker, or in the page — whichever claims it first (:func:`claim`: a
file, not a Ray call, since a task blocked in a Ray call lends its CPU or GPU to another).

Nothing imports this module unless fan-out was asked for, so Ray stays optional.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from ..core.runtime import SHARED, measured
from .store import train_runs


def import_ray():
    """The ``ray`` module, or an error that says how to install it."""
    try:
        import ray
    except ImportError as err:
        raise ImportError("fan-out with Ray needs the `cluster` extra: "
                          "pip install -e '.[cluster]'") from err
    return ray


def start(workers: int, device: str) -> dict:
    """Connect to the cluster at ``RAY_ADDRESS``, else start a local Ray instance that
    runs ``workers`` tasks at a time (one GPU each where this machine has GPUs).

    Returns the options every task is submitted with.
    """
    ray = import_ray()
    if os.environ.get("RAY_ADDRESS"):
        ray.init()                                   # ray.init reads RAY_ADDRESS itself
    else:
        import torch
        gpus = min(workers, torch.cuda.device_count()) if device != "cpu" else 0
        ray.init(num_cpus=os.cpu_count() if gpus else workers, num_gpus=gpus,
                 include_dashboard=False, logging_level="ERROR")   # no start-up notices
    have = ray.cluster_resources()
    gpus = int(have.get("GPU", 0)) if device != "cpu" else 0
    if gpus:
        return {"num_gpus": 1, "num_cpus": max(1, int(have.get("CPU", 1)) // gpus)}
    return {"num_cpus": 1}


def limit_threads(task: dict) -> None:
    """Use as many torch/OpenMP threads as the task was given CPUs (the page's kernel,
    a child process, reads the environment)."""
    import torch
    n = max(1, int(task["num_cpus"]))
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(n)
    torch.set_num_threads(n)


def _gpu_memory() -> float | None:
    """Bytes of memory of this task's first GPU (None without one)."""
    import torch
    return torch.cuda.get_device_properties(0).total_memory if torch.cuda.is_available() else None


def run_page(execute, page: dict, kwargs: dict, task: dict) -> float:
    """Ray task: ``execute(page, **kwargs)`` (the book's page runner, given by the caller:
    nothing here knows pages); the page's runs fan out to this cluster too."""
    ray = import_ray()
    limit_threads(task)
    kwargs = {**kwargs, "runner": {"address": ray.get_runtime_context().gcs_address, "task": task,
                                   "gpu_memory": _gpu_memory()}}
    return execute(page, **kwargs)


def run_pages(execute, pages: list[dict], kwargs: dict, task: dict,
              line=lambda page, seconds, left: f"  {page}: " + (
                  "failed" if seconds is None else f"{seconds:.0f} s")) -> tuple[dict, dict]:
    """``execute(page, **kwargs)`` of ``pages`` as Ray tasks, in their order, each once the pages it reads (its
    "after") have ended; no more submitted than the cluster runs at once (Ray starts tasks
    in the order they came, so a page whose pages have just ended goes before the later
    pages of the order, not behind every page that was ready from the start); a failed
    page is tried once more (a page after it runs anyway and trains what the failed page
    did not).

    Returns ``({page: seconds}, {page: error})``, printing each outcome as it comes
    (``line(page, seconds or None, pages left)``).
    """
    ray = import_ray()
    remote = ray.remote(run_page).options(**task, max_retries=0)
    ended: set = set()
    waiting = list(pages)
    pending: dict = {}

    def submit(page, attempt):
        pending[remote.remote(execute, page, kwargs, task)] = page, attempt

    slots = _slots(ray.cluster_resources(), task)

    def release():
        for page in [p for p in waiting if set(p.get("after", ())) <= ended | _absent(p, pages)]:
            if len(pending) >= slots:
                return
            waiting.remove(page)
            submit(page, 1)

    release()
    times, failed = {}, {}
    while pending:
        [ref], _ = ray.wait(list(pending), num_returns=1)
        page, attempt = pending.pop(ref)
        name = page["page"]
        try:
            times[name] = ray.get(ref)
        except ray.exceptions.RayError as err:
            last = (str(err).strip().splitlines() or [type(err).__name__])[-1]
            if attempt == 1:
                print(f"  {name} failed ({last}); retrying once", flush=True)
                submit(page, 2)
                continue
            print(f"  {name} failed again: {last}", flush=True)
            failed[name] = err
        ended.add(name)
        release()
        left = [p["page"] for p, _ in pending.values()] + [p["page"] for p in waiting]
        print(line(name, times.get(name), left), flush=True)
    return times, failed


def _slots(have: dict, task: dict) -> int:
    """How many tasks of ``task``'s resources the cluster (``have``) runs at once."""
    if task.get("num_gpus"):
        return max(1, int(have.get("GPU", 0) // task["num_gpus"]))
    return max(1, int(have.get("CPU", 1) // task.get("num_cpus", 1)))


def _absent(page: dict, pages: list[dict]) -> set:
    """The pages ``page`` reads that are not being executed (nothing to wait for)."""
    return set(page.get("after", ())) - {p["page"] for p in pages}


def claim(claims: str, key) -> bool:
    """True for the first process that claims ``key`` in the folder ``claims`` (a file
    created once); False once the page has closed the claims (the folder removed).

    Not a Ray call: a task blocked in ``ray.get`` lends its CPU or GPU to a queued task
    (Ray's rule against deadlock), so a job task that asked an actor trained beside the
    task that took its CPU — three processes on two cores in a fresh ``cpu`` build."""
    try:
        os.close(os.open(os.path.join(claims, str(key)), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except (FileExistsError, FileNotFoundError):
        return False
    return True


def _claimed_run(claims: str, key, task: dict, job, store, *datas):
    """Ray task: the job, unless the page or another worker claimed it first (then None);
    ``datas``: the job's data, run-major (each run's seeds in turn)."""
    if not claim(claims, key):
        return None
    limit_threads(task)
    flat = iter(datas)
    return train_runs(job, [[next(flat) for _ in job.seeds] for _ in job.runs], store)


def fan_out(jobs: list, runner: dict, store=None, built: dict | None = None) -> list:
    """``[train_runs(job, its data, store) for job in jobs]``
    (:func:`pusupport.book.store.train_runs`), the jobs as Ray tasks on the cluster of
    ``runner`` (``{"address", "task", "gpu_memory"}``; on GPUs, N runs a GPU where they
    share one: :func:`job_task`), the page taking the ones no worker has started, in
    :func:`claim_order`: the page its costliest first, a worker that frees up the cheapest.

    Every seed's data is built here, once (``built``: data built already, by
    :meth:`~pusupport.book.plan.Job.datas`), and put in the object store once.
    """
    ray = import_ray()
    if not ray.is_initialized():
        ray.init(address=runner["address"], log_to_driver=False, logging_level="WARNING")
    built, shared = {} if built is None else built, {}
    datas = [job.datas(built) for job in jobs]
    for key, data in built.items():
        shared[key] = ray.put(data)
    # the claims beside the run store, which every node sees (a local folder without one)
    if store is not None:
        Path(store.folder).mkdir(parents=True, exist_ok=True)
    claims = tempfile.mkdtemp(prefix=".claims-", dir=None if store is None else store.folder)
    try:
        remote = ray.remote(_claimed_run)
        tasks = [job_task(runner["task"], job, runner.get("gpu_memory")) for job in jobs]
        order = claim_order(jobs)
        refs = {i: remote.options(**tasks[i], max_retries=0).remote(     # Ray starts them in this order
                    claims, i, tasks[i], _without_data(jobs[i]), store,         # data travel apart
                    *[shared[r.data, r.prior, s] for r in jobs[i].runs for s in jobs[i].seeds])
                for i in order}
        out = {}
        for i in reversed(order):
            if claim(claims, i):
                ray.cancel(refs[i])
                out[i] = train_runs(jobs[i], datas[i], store)
        start = time.perf_counter()
        done = [out[i] if i in out else ray.get(refs[i]) for i in range(len(jobs))]
        idle = time.perf_counter() - start
    finally:
        shutil.rmtree(claims, ignore_errors=True)    # a task starting later finds nothing to claim
    print(f"{len(jobs)} jobs as Ray tasks: {len(jobs) - len(out)} on workers, {len(out)} in this page"
          + (f"; then {idle:.0f} s waiting for the workers' (the CPU this page holds idle)"
             if len(out) < len(jobs) else ""), flush=True)
    return done


def claim_order(jobs: list) -> list[int]:
    """The indices of ``jobs``, cheapest first by the cost model
    (:attr:`~pusupport.book.plan.Job.flops`): the order workers start them in, while the
    page takes them from the other end. A page that took its cheap jobs first waited
    idle for the costly one a worker had started late: the readings page, its 20-minute
    job on a worker, waited 836 s in a fresh ``cpu`` build (2-core Xeon, 2026-11-29)."""
    return sorted(range(len(jobs)), key=lambda i: jobs[i].flops)


def job_task(task: dict, job, gpu_memory: float | None = None) -> dict:
    """A job's Ray resources: its page's, but 1/N of a GPU where N runs of its model share
    one (:data:`~pusupport.core.runtime.SHARED`), fewer while N of its peak memory
    (:attr:`~pusupport.book.plan.Job.memory`) would not fit ``gpu_memory`` bytes (None: not
    checked)."""
    if not task.get("num_gpus"):
        return task
    n = max(measured(SHARED, "cuda", {}).get(r.cfg.model.name, 1) for r in job.runs)
    if gpu_memory and job.memory:
        n = max(1, min(n, int(gpu_memory // job.memory)))
    return {**task, "num_gpus": task["num_gpus"] / n, "num_cpus": max(1, task["num_cpus"] // n)}


def _without_data(job):
    """``job`` without its data functions (closures over loaded data sets): its data travel
    through the object store."""
    return replace(job, runs=tuple(replace(r, make=None) for r in job.runs))
