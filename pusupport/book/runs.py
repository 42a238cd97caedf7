"""Running a page's methods over its seeds, and the PU data each seed sees."""
from __future__ import annotations

from dataclasses import replace

import pandas as pd

from . import cluster
from .store import RunStore, train_histories
from ..core.methods import get_method
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
    loader, positive = DATASETS[page.dataset]
    labeled = loader(data_dir=page.data_dir, **data.kwargs("max_features"))
    opts = data.kwargs("n_labeled", "n_unlabeled")
    return lambda seed: make_pu(page.dataset, labeled, positive, seed=seed, **opts)


def run_methods(page: Page, methods, make_data, group: str | None = None, **overrides) -> pd.DataFrame:
    """Train every method on every seed; ``make_data(seed)`` builds the PU data.

    ``methods`` is a list of names, or a dict mapping a label to TrainConfig overrides
    (e.g. ``{"nnpu+p": {"method": "nnpu"}}``). With several seeds, methods that stack
    run all seeds at once as one network (the same maths) where that is faster on the
    device (:func:`~pusupport.core.runtime.resolve`'s ``stack_seeds``); the others run
    seed by seed. A run already in the output folder's run store
    (:class:`~pusupport.book.store.RunStore`: trained by another page of the build, or by
    an earlier build) is read, not trained again; the page prints which.
    With ``page.checkpoints`` every run checkpoints under
    ``<results>/checkpoints/[<group>/]<label>``, and re-running the page resumes.
    With ``page.runner`` (a Ray cluster, set by ``book/execute.py --workers N``) these
    runs are Ray tasks instead (:func:`pusupport.book.cluster.fan_out`), on the same
    data and seeds.
    Returns the tidy history of all runs.
    """
    from ..core.members import check_stackable
    from ..core.runtime import resolve
    from ..core.stacking import NotStackable
    if not isinstance(methods, dict):
        methods = {m: {"method": m} for m in methods}
    configs = {}
    for label, spec in methods.items():
        spec = {**overrides, **spec}
        configs[label] = page.train_config(spec.pop("method", label), **spec)
        if page.checkpoints:                 # hours-long runs: resume where a crash left them
            folder = page.results_dir / "checkpoints" / (group or "") / label
            configs[label] = replace(configs[label], checkpoint_dir=str(folder))
    stackable = [label for label, cfg in configs.items()
                 if get_method(cfg.method).stacks and resolve(cfg).stack_seeds]
    if len(page.seeds) > 1 and stackable:
        try:
            check_stackable(make_data(page.seeds[0]))
        except NotStackable:                 # e.g. sparse inputs: seed by seed below
            stackable = []
    else:
        stackable = []
    runs = [(label, list(page.seeds)) for label in stackable] + [
        (label, [seed]) for seed in page.seeds for label in configs if label not in stackable]
    store = None if page.settings.train.dry_run else RunStore(page.output_dir / "runs", page.name)
    if page.runner:                          # a page under `book/execute.py --workers N`
        done = cluster.fan_out([(configs[label], seeds) for label, seeds in runs], make_data,
                               page.seeds, page.runner, store)
    else:
        done, data, data_seed = [], None, None
        for label, seeds in progress(runs, desc=page.name):
            if len(seeds) > 1:
                datas = [make_data(s) for s in seeds]
            else:                            # one seed's data at a time, kept for its methods
                if seeds[0] != data_seed:
                    data, data_seed = make_data(seeds[0]), seeds[0]
                datas = [data]
            done.append(train_histories(configs[label], seeds, datas, store))
    read = {}
    for (label, _), (_, trainer) in zip(runs, done):
        if trainer is not None:
            read.setdefault(label, trainer)
    if read:
        print("read from the run store, not trained again: " + "; ".join(
            f"{label} (trained by the {trainer} page)" for label, trainer in read.items()))
    histories = {(label, seed): history for (label, seeds), (histories, _) in zip(runs, done)
                 for seed, history in zip(seeds, histories)}
    return pd.concat([histories[label, seed].assign(method=label)
                      for label in configs for seed in page.seeds], ignore_index=True)


def run_plan(page: Page, specs: list[RunSpec], make_data=None) -> pd.DataFrame:
    """Train ``specs`` (a plan's runs) on the page's seeds: the runs that share a group,
    a π and data changes are trained together by :func:`run_methods` on the same data
    (``make_data``, default :func:`data_for` of the page with the runs' data changes)."""
    groups: dict = {}
    for spec in specs:
        data = spec.changes.get("data", {})
        key = (spec.group, spec.prior, tuple(sorted(data.items())))
        groups.setdefault(key, {})[spec.label] = {"method": spec.method,
                                                  **spec.changes.get("train", {})}
    histories = []
    for (group, prior, data), runs in groups.items():
        make = make_data if make_data is not None and not data else data_for(page, **dict(data))
        if prior is not None:
            make = (lambda seed, base=make, p=prior: replace(base(seed), prior=p))
        histories.append(run_methods(page, runs, make, group=group))
    return pd.concat(histories, ignore_index=True)
