"""The executor: a :class:`~pusupport.book.plan.Plan` in, the tidy history of its runs out.

It trains the plan's jobs as the plan lays them out, in this process or as Ray tasks
(``runner``: set by ``book/execute.py --workers N``,
:func:`pusupport.book.cluster.fan_out`), reading from the run store
(:class:`~pusupport.book.store.RunStore`) every run another page, an earlier build or
the book's committed runs trained. It knows no page.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import pandas as pd

from . import cluster
from .store import RunStore, train_runs
from ..core.methods import view_column
from ..core.progress import progress

if TYPE_CHECKING:
    from .plan import Plan


class NotHeld(LookupError):
    """Raised by :func:`train_jobs` told to train nothing when ``store`` lacks a run;
    ``labels``: the runs it lacks."""

    def __init__(self, labels: list[str]):
        super().__init__("not in the run store: " + ", ".join(labels))
        self.labels = labels


def train_jobs(jobs, store: RunStore | None = None, runner: dict | None = None,
               desc: str = "", train: bool = True) -> list:
    """The one loop from jobs to training: ``[train_runs(job, its data, store) for job in
    jobs]`` (:func:`~pusupport.book.store.train_runs`), in this process or, with ``runner``,
    as Ray tasks on that cluster (:func:`~pusupport.book.cluster.fan_out`) — unless ``store``
    holds every run: then they are read here, and a page built with Ray runs again after
    its cluster is gone (nbval re-runs the built pages so). ``train=False``: read every
    run, train none (:class:`NotHeld` if ``store`` lacks one)."""
    jobs, done, built = list(jobs), [], {}
    if runner or not train:
        datas = [job.datas(built) for job in jobs]
        lacking = [label for job, d in zip(jobs, datas) if store is None or not store.holds(job, d)
                   for label in job.labels]
        if lacking and not train:
            raise NotHeld(lacking)
        if lacking:
            return cluster.fan_out(jobs, runner, store, built)
        return [train_runs(job, d, store) for job, d in zip(jobs, datas)]
    for job in progress(jobs, desc=desc):
        if job.stacked or any(s not in job.seeds for *_, s in built):
            built = {}                       # seed by seed: one seed's data, kept for its runs
        done.append(train_runs(job, job.datas(built), store))
    return done


class Executed(NamedTuple):
    """What :func:`execute` returns: the tidy ``history``; ``kept``: ``{(label, seed):
    RunResult}`` of the runs that keep more than their history; ``sources``: each run's
    label → who trained it (None: trained now)."""

    history: pd.DataFrame
    kept: dict
    sources: dict


def execute(plan: Plan, store: RunStore | None = None, runner: dict | None = None,
            desc: str = "", train: bool = True, said: frozenset = frozenset()) -> Executed:
    """Train ``plan`` (:func:`train_jobs`): the tidy history of every label it shows,
    ``method`` naming each run by its label (a view, e.g. nnPUSB, is read from its method's
    run, its test error at its own threshold), the results of the runs that keep more than
    their history (:attr:`~pusupport.book.plan.RunSpec.keeps`) and where each run came from.
    A run ``store`` holds is read, not trained again (said on the console, unless its (label,
    trainer) is in ``said``: told before); ``train=False``: none is trained (:class:`NotHeld`)."""
    done = train_jobs(plan.jobs, store, runner, desc, train)
    read, results, sources = {}, {}, {}
    for job, trained in zip(plan.jobs, done):
        for label, (runs, trainer) in zip(job.labels, trained):
            if trainer is not None and (label, trainer) not in said:
                read.setdefault(label, trainer)
            sources.setdefault(label, trainer)
            results.update({(label, seed): r for seed, r in zip(job.seeds, runs)})
    by_trainer = {}
    for label, trainer in read.items():
        by_trainer.setdefault(trainer, []).append(label)
    if by_trainer:
        print("read from the run store, not trained again: " + "; ".join(
            f"{', '.join(labels)} (trained by {trainer})" for trainer, labels in by_trainer.items()))
    shared = {f"{job.runs[i].label} its first {epoch} (those of {job.runs[p].label})"
              for job in plan.jobs for i, (p, epoch) in job.forks.items()}
    if shared:
        print("epochs trained once, then forked (aaPU trains as nnPU until its first "
              "selection): " + "; ".join(sorted(shared)))
    views = {label: base for label, (base, view) in plan.shown.items() if view}
    if views:
        print("not trained: " + "; ".join(f"{label}, read from the {base} run at its own threshold "
                                          "(it trains exactly as that run)"
                                          for label, base in views.items()))
    seeds = {run.label: run.seeds for run in plan.runs}

    def shown(label, seed):
        base, view = plan.shown[label]
        h = results[base, seed].history
        return h.assign(method=label, **({} if view is None else {
            "test_error": h[view_column(view)], "test_wrong": h.get(view_column(view, "test_wrong"))}))
    history = pd.concat([shown(label, seed) for label, (base, _) in plan.shown.items()
                         for seed in seeds[base]], ignore_index=True)
    keeps = {run.label for run in plan.runs if run.keeps}
    return Executed(history, {(label, seed): r for (label, seed), r in results.items() if label in keeps},
                    sources)
