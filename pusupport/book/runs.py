"""Running a page's methods over its seeds, and the PU data each seed sees."""
from __future__ import annotations

from dataclasses import replace

import pandas as pd

from . import cluster
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
    run all seeds at once as one network (the same maths); the others run seed by
    seed. With ``page.checkpoints`` every run checkpoints under
    ``<results>/checkpoints/[<group>/]<label>``, and re-running the page resumes.
    With ``page.runner`` (a Ray cluster, set by ``book/execute.py --workers N``) these
    runs are Ray tasks instead (:func:`pusupport.book.cluster.fan_out`), on the same
    data and seeds.
    Returns the tidy history of all runs.
    """
    from ..core.members import check_stackable
    from ..core.stacking import NotStackable
    from ..core.training import train, train_seeds
    if not isinstance(methods, dict):
        methods = {m: {"method": m} for m in methods}
    configs = {}
    for label, spec in methods.items():
        spec = {**overrides, **spec}
        configs[label] = page.train_config(spec.pop("method", label), **spec)
        if page.checkpoints:                 # hours-long runs: resume where a crash left them
            folder = page.results_dir / "checkpoints" / (group or "") / label
            configs[label] = replace(configs[label], checkpoint_dir=str(folder))
    stackable = [label for label, cfg in configs.items() if get_method(cfg.method).stacks]
    if len(page.seeds) > 1 and stackable:
        try:
            check_stackable(make_data(page.seeds[0]))
        except NotStackable:                 # e.g. sparse inputs: seed by seed below
            stackable = []
    else:
        stackable = []
    if page.runner:                          # a page under `book/execute.py --workers N`
        histories = _fan_out(page, configs, stackable, make_data)
    else:
        histories = {}
        for label in progress(stackable, desc=f"{page.name} (all seeds at once)"):
            for result in train_seeds(make_data, page.seeds, configs[label]):
                histories[label, result.config.seed] = result.history
        runs = [(seed, label) for seed in page.seeds for label in configs if label not in stackable]
        data, data_seed = None, None
        for seed, label in progress(runs, desc=page.name):
            if seed != data_seed:
                data, data_seed = make_data(seed), seed
            histories[label, seed] = train(data, configs[label], seed=seed).history
    return pd.concat([histories[label, seed].assign(method=label)
                      for label in configs for seed in page.seeds], ignore_index=True)


def _fan_out(page: Page, configs: dict, stackable: list, make_data) -> dict:
    """The runs of :func:`run_methods` as Ray tasks: one per stacking method (all seeds),
    one per other method and seed. Returns ``{(label, seed): history}``."""
    groups = [(label, list(page.seeds)) for label in stackable] + [
        (label, [seed]) for seed in page.seeds for label in configs if label not in stackable]
    done = cluster.fan_out([(configs[label], seeds) for label, seeds in groups], make_data,
                           page.seeds, page.runner)
    return {(label, seed): history for (label, seeds), runs in zip(groups, done)
            for seed, history in zip(seeds, runs)}


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
