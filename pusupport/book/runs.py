"""Running a page's methods over its seeds, and the PU data each seed sees."""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import pandas as pd

from . import cluster
from .store import RunStore, train_runs
from ..core.methods import get_method, view_column
from ..core.progress import progress

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .experiment import RunSpec
    from .pages import Page


def data_for(page: Page, **changes):
    """A function seed → PUData for the page's data set (loaded once, drawn per seed).

    ``changes``: data settings for this call (e.g. ``n_labeled=8000``). Raises
    :class:`~pusupport.data.DatasetNotFoundError` at once when the data set is
    neither on disk nor downloadable.
    """
    from ..core.config import merge
    from ..data.synthetic import synthetic
    from ..data.datasets import DATASETS, make_pu
    data = merge(page.settings.data, changes, "data")
    if page.dataset == "synthetic":
        opts = data.kwargs("n_labeled", "n_unlabeled", "n_test")
        return lambda seed: synthetic(seed, **opts)
    labeled, positive = _labeled(page), DATASETS[page.dataset][1]
    opts = data.kwargs("n_labeled", "n_unlabeled")
    return lambda seed: make_pu(page.dataset, labeled, positive, seed=seed, **opts)


def _labeled(page: Page):
    from ..data.datasets import DATASETS
    return DATASETS[page.dataset][0](data_dir=page.data_dir, **page.settings.data.kwargs("max_features"))


def data_source(page: Page) -> dict:
    """What the page's PU data are drawn from on any seed: the data set's name and a
    checksum of its labelled train and test split as loaded (another copy of the data set,
    e.g. a re-encoded one, has another); the §4.1 data come from their generator."""
    if page.dataset == "synthetic":
        return {"name": "synthetic", "checksum": "drawn by pusupport.data.synthetic"}
    from ..core.checkpoint import checksum
    d = _labeled(page)
    return {"name": page.dataset, "checksum": checksum(d.x_train, d.y_train, d.x_test, d.y_test)}


@dataclass(frozen=True)
class Job:
    """Runs trained together: ``configs`` (one per run) on ``seeds`` — one stacked network
    when there are several seeds, one model when one seed — each run on the data of its
    ``makes`` function (seed → PUData)."""

    labels: tuple
    configs: tuple
    makes: tuple
    seeds: tuple

    @property
    def stacked(self) -> bool:
        return len(self.seeds) > 1


def _with_prior(make, prior: float):
    return lambda seed: replace(make(seed), prior=prior)


def jobs_of(page: Page, specs: list[RunSpec], make_data=None) -> list[Job]:
    """The plan's runs as jobs. A run whose method stacks trains its seeds as one stacked
    network where that is faster on the device (:func:`~pusupport.core.runtime.resolve`'s
    ``stack_seeds``), and with ``stack_settings`` the runs on the same data (data changes
    aside from π) whose settings differ only in values
    (:data:`~pusupport.core.training.PER_MEMBER`) are one network of every run × seed;
    the others train seed by seed. With ``page.checkpoints`` a run
    checkpoints under ``<results>/checkpoints/[<group>/]<label>`` (a stack: in its first
    run's folder)."""
    from ..core.members import check_stackable
    from ..core.runtime import resolve
    from ..core.stacking import NotStackable
    from ..core.training import PER_MEMBER
    bases, makes, stacks, single = {}, {}, {}, []
    for spec in specs:
        data = tuple(sorted(spec.changes.get("data", {}).items()))
        if data not in bases:
            bases[data] = make_data if make_data is not None and not data else data_for(page, **dict(data))
        if (data, spec.prior) not in makes:
            makes[data, spec.prior] = (bases[data] if spec.prior is None
                                       else _with_prior(bases[data], spec.prior))
        cfg = page.config(spec)
        if page.checkpoints:                 # hours-long runs: resume where a crash left them
            folder = page.results_dir / "checkpoints" / (spec.group or "") / spec.label
            cfg = replace(cfg, checkpoint_dir=str(folder))
        run = (spec.label, cfg, makes[data, spec.prior])
        runtime = resolve(cfg)
        if len(page.seeds) > 1 and get_method(cfg.method).stacks and runtime.stack_seeds:
            shared = (tuple(repr(v) for k, v in asdict(cfg).items() if k not in PER_MEMBER)
                      if runtime.stack_settings else spec.label)
            stacks.setdefault((data, shared), []).append(run)
        else:
            single.append(run)
    jobs, dense = [], {}
    for (data, _), runs in stacks.items():
        if data not in dense:                # sparse inputs, e.g., train seed by seed below
            try:
                check_stackable(bases[data](page.seeds[0]))
                dense[data] = True
            except NotStackable:
                dense[data] = False
        if not dense[data]:
            single += runs
            continue
        labels, configs, run_makes = zip(*runs)
        jobs.append(Job(labels, configs, run_makes, tuple(page.seeds)))
    return jobs + [Job((label,), (cfg,), (make,), (seed,)) for seed in page.seeds
                   for label, cfg, make in single]


def as_trained(specs: list[RunSpec]) -> tuple[list[RunSpec], dict]:
    """The runs that train ``specs``: a view (:attr:`~pusupport.core.methods.Method.view_of`,
    e.g. nnPUSB) becomes its method's run (nnPU's), shared with the plan's own run of that
    method and settings where there is one. Returns (those runs, {label: (trained run's
    label, the view's method or None)})."""
    runs, source = {}, {}
    for spec in specs:
        view = get_method(spec.method).view_of
        base = spec if view is None else replace(spec, label=f"{view} (for {spec.label})", method=view)
        key = (base.method, repr(base.changes), base.prior, base.dataset, base.seeds, base.stacks)
        trained = runs.setdefault(key, base)
        source[spec.label] = trained.label, spec.method if view else None
    return list(runs.values()), source


def run_plan(page: Page, specs: list[RunSpec], make_data=None) -> pd.DataFrame:
    """Train ``specs`` (a plan's runs) on the page's seeds (:func:`jobs_of`; ``make_data``:
    the page's data, default :func:`data_for` of the page with the runs' data changes) and
    return the tidy history of all runs, ``method`` naming each run by its label.

    A run already in the output folder's run store
    (:class:`~pusupport.book.store.RunStore`: trained by another page of the build, or by
    an earlier build) is read, not trained again; the page prints which. With
    ``page.runner`` (a Ray cluster, set by ``book/execute.py --workers N``) the jobs are Ray
    tasks instead (:func:`pusupport.book.cluster.fan_out`), on the same data and seeds. A
    view (e.g. nnPUSB) is read from its method's run (:func:`as_trained`), its test error
    at its own threshold.
    """
    trained, source = as_trained(specs)
    jobs = jobs_of(page, trained, make_data)
    store = None if page.settings.train.dry_run else RunStore(page.output_dir / "runs", page.name)
    if page.runner:                          # a page under `book/execute.py --workers N`
        done = cluster.fan_out(jobs, page.runner, store)
    else:
        done, built = [], {}
        for job in progress(jobs, desc=page.name):
            if job.stacked or job.seeds[0] not in {s for _, s in built}:
                built = {}                   # seed by seed: one seed's data, kept for its runs
            for m in job.makes:
                for s in job.seeds:
                    if (id(m), s) not in built:
                        built[id(m), s] = m(s)
            done.append(train_runs(job, [[built[id(m), s] for s in job.seeds] for m in job.makes],
                                   store))
    read, histories = {}, {}
    for job, results in zip(jobs, done):
        for label, (runs, trainer) in zip(job.labels, results):
            if trainer is not None:
                read.setdefault(label, trainer)
            histories.update({(label, seed): h for seed, h in zip(job.seeds, runs)})
    if read:
        print("read from the run store, not trained again: " + "; ".join(
            f"{label} (trained by the {trainer} page)" for label, trainer in read.items()))
    views = {label: base for label, (base, view) in source.items() if view}
    if views:
        print("not trained: " + "; ".join(f"{label}, read from the {base} run at its own threshold "
                                          "(it trains exactly as that run)"
                                          for label, base in views.items()))

    def history(label, seed):
        base, view = source[label]
        h = histories[base, seed]
        return h.assign(method=label, **({} if view is None else {"test_error": h[view_column(view)]}))
    labels = list(dict.fromkeys(spec.label for spec in specs))
    return pd.concat([history(label, seed) for label in labels for seed in page.seeds],
                     ignore_index=True)
