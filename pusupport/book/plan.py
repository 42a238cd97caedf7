"""A page's runs resolved once into a :class:`Plan`: what trains, with which settings, on
which data and seeds, and how the device lays the runs out.

A book page resolves its :class:`RunSpec` list into a plan once; the executor
(:func:`~pusupport.book.runs.execute`) trains it and the cost model
(:func:`~pusupport.book.cost.price`) prices the same plan, its layout included. The
layout rule is :func:`layout`, one place for both. Nothing here knows a page.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable

from ..core.config import Settings, TrainConfig, authors_recipe, merge
from ..core.forks import fork_epoch, trunks
from ..core.methods import get_method
from ..core.runtime import SETTINGS_STACKED, STACKED, measured
from ..core.groups import PER_MEMBER
from .cost import Run, run_flops, run_memory

#: What a driver may keep of a run beside its history (fields of
#: :class:`~pusupport.core.training.RunResult`): the trained model, the selected set S,
#: U's losses at the epochs of ``record_u_losses``, the decision threshold.
KEPT = ("model", "selected", "u_losses", "threshold")


@dataclass(frozen=True)
class RunSpec:
    """One training configuration of a page, trained on each of the page's seeds.

    ``changes``: a sectioned table over the page's settings ({"train": …, "data": …});
    ``prior``: π given to the method (None: the data's); ``group``: runs trained on the
    same data and checkpointed in one folder; ``seeds``: 1 for a run on the first seed
    only; ``stacks``: False for runs never stacked with other seeds; ``dataset``:
    another data set than the page's; ``estimator``: a P-vs-U classifier behind a prior
    estimate (trained from the default training settings on half of P and of U \\ P);
    ``values``: what else the page's driver reads (e.g. a label-noise rate); ``keeps``: what
    of each seed's result the driver reads beside the history (:data:`KEPT`).
    """

    label: str
    method: str
    changes: dict = field(default_factory=dict)
    prior: float | None = None
    group: str | None = None
    seeds: int | None = None
    stacks: bool = True
    dataset: str | None = None
    estimator: bool = False
    values: dict = field(default_factory=dict)
    keeps: tuple = ()

    def __post_init__(self):
        if unknown := sorted(set(self.keeps) - set(KEPT)):
            raise ValueError(f"run {self.label!r} keeps {unknown}: a run keeps only {list(KEPT)} "
                             "beside its history")

    def train(self, base: TrainConfig) -> TrainConfig:
        """``base`` (the page's, or the defaults for an estimator) for this run."""
        if self.estimator:
            base = Settings().merge({k: v for k, v in self.changes.items() if k != "data"}).train
            return merge(base, {"method": self.method, "eval_every": 0}, "train")
        model = Settings(train=base).merge({k: v for k, v in self.changes.items() if k == "model"})
        return authors_recipe(merge(model.train, {**self.changes.get("train", {}),
                                                  "method": self.method}, "train"))


@dataclass(frozen=True)
class Planned:
    """One run of a plan: ``cfg`` (its TrainConfig on the plan's first seed) on ``seeds``;
    ``data``: its data set and data changes, ``prior`` its π (runs with the same pair share
    each seed's PUData); ``make``: seed → PUData (None in a plan that is only priced);
    ``sizes``: the data's sizes as the cost model counts them
    (:class:`~pusupport.book.cost.Data`); ``scored``: rows scored once after training;
    ``dense``: inputs a stacked network can take; ``keeps``: what of each seed's result the
    run store keeps beside the history (:data:`KEPT`)."""

    label: str
    cfg: TrainConfig
    seeds: tuple
    data: tuple = ()
    prior: float | None = None
    make: Callable | None = None
    sizes: Any = None
    scored: int = 0
    dense: bool = True
    stacks: bool = True
    keeps: tuple = ()


@dataclass(frozen=True)
class Job:
    """Runs trained together on ``seeds``, their seeds as one stacked network when there are
    several, one model when one seed; ``together``: every run as one network (settings
    stacked), else each run its own — the runs that fork from another
    (:func:`~pusupport.core.forks.trunks`) sharing its first epochs either way."""

    runs: tuple
    seeds: tuple
    together: bool = True

    @property
    def stacked(self) -> bool:
        return len(self.seeds) > 1

    @property
    def labels(self) -> tuple:
        return tuple(r.label for r in self.runs)

    @property
    def configs(self) -> tuple:
        return tuple(r.cfg for r in self.runs)

    @property
    def forks(self) -> dict:
        """{run: (the run it forks from, the last epoch they share)}, by index in ``runs``."""
        parent = trunks([(r.data, r.prior) for r in self.runs], self.configs)
        return {i: (p, fork_epoch(self.runs[i].cfg)) for i, p in enumerate(parent) if p is not None}

    def priced(self) -> list[Run]:
        """The cost model's :class:`~pusupport.book.cost.Run` of each of its runs, as this job
        trains them (a forked run from its fork on)."""
        return [Run(r.cfg, r.sizes, len(self.seeds), self.stacked, r.scored,
                    first=self.forks.get(i, (None, 0))[1] + 1) for i, r in enumerate(self.runs)]

    @property
    def flops(self) -> float:
        """FLOPs of training this job, as the cost model counts them
        (:func:`~pusupport.book.cost.run_flops`); 0 where a run's sizes are unknown."""
        if any(r.sizes is None for r in self.runs):
            return 0.0
        return sum(run_flops(run) for run in self.priced())

    @property
    def memory(self) -> float | None:
        """Peak bytes of training this job, as the cost model counts them
        (:func:`~pusupport.book.cost.run_memory`); None where a run's sizes are unknown."""
        if any(r.sizes is None for r in self.runs):
            return None
        return max(run_memory(Run(r.cfg, r.sizes, len(self.seeds), self.stacked)) for r in self.runs)

    def datas(self, built: dict) -> list[list]:
        """Each run's PUData per seed (run-major), from ``built`` ({(data, prior, seed):
        PUData}) or built now and kept there: each seed's data are built once."""
        for run in self.runs:
            for s in self.seeds:
                if (run.data, run.prior, s) not in built:
                    built[run.data, run.prior, s] = run.make(s)
        return [[built[r.data, r.prior, s] for s in self.seeds] for r in self.runs]


@dataclass(frozen=True)
class Plan:
    """The runs that train (``runs``), laid out as ``jobs`` for a ``device`` type; ``shown``:
    each label the page shows → (the trained run's label, the view's method or None:
    :func:`as_trained`); ``seeds``: the page's."""

    runs: tuple
    shown: dict
    seeds: tuple
    device: str
    jobs: tuple

    @classmethod
    def of(cls, runs, shown: dict, seeds, device: str) -> Plan:
        return cls(tuple(runs), dict(shown), tuple(seeds), device, tuple(layout(runs, seeds, device)))

    def priced(self) -> list[Run]:
        """The cost model's :class:`~pusupport.book.cost.Run` of each run of each job, as the
        layout trains it (a forked run from its fork on)."""
        return [run for job in self.jobs for run in job.priced()]


def stacks(run: Planned, device: str) -> bool:
    """Whether ``run``'s seeds train as one stacked network on ``device`` (a type: "cpu",
    "cuda"): where its model stacks there (:data:`~pusupport.core.runtime.STACKED`, from
    measurements on this machine, or borrowed: :func:`~pusupport.core.runtime.measured`), its method can, its inputs are dense and it has several seeds."""
    return (run.stacks and len(run.seeds) > 1 and run.dense and get_method(run.cfg.method).stacks
            and run.cfg.model.name in measured(STACKED, device))


def layout(runs, seeds, device: str) -> list[Job]:
    """The jobs that train ``runs`` on ``device``: a run that :func:`stacks` trains all its
    seeds as one network, with the runs on the same data whose settings differ only in
    values (:data:`~pusupport.core.groups.PER_MEMBER`) where its model stacks settings too
    (:data:`~pusupport.core.runtime.SETTINGS_STACKED`); every other run trains seed by seed
    (in the order of ``seeds``). A run that forks from another (:func:`forked`) joins that
    run's job."""
    grouped, apart, single = {}, {}, []
    for run in runs:
        if not stacks(run, device):
            single.append(run)
        elif run.cfg.model.name in measured(SETTINGS_STACKED, device):
            shared = tuple(repr(v) for k, v in asdict(run.cfg).items() if k not in PER_MEMBER)
            grouped.setdefault((run.data, run.seeds, shared), []).append(run)
        else:
            apart.setdefault(run.seeds, []).append(run)
    order = dict.fromkeys([*seeds, *(s for run in single for s in run.seeds)])
    return ([Job(tuple(group), group[0].seeds) for group in grouped.values()]
            + [Job(g, s, False) for s, group in apart.items() for g in forked(group)]
            + [Job(g, (seed,), False) for seed in order
               for g in forked([r for r in single if seed in r.seeds])])


def forked(runs) -> list[tuple]:
    """``runs`` (on the same seeds) as groups trained in one job: each trunk with the runs
    that fork from it (:func:`~pusupport.core.forks.trunks`), every other run alone."""
    parent = trunks([(r.data, r.prior) for r in runs], [r.cfg for r in runs])
    groups: dict = {}
    for i, run in enumerate(runs):
        groups.setdefault(i if parent[i] is None else parent[i], []).append(run)
    return [tuple(g) for g in groups.values()]


def as_trained(specs: list[RunSpec]) -> tuple[list[RunSpec], dict]:
    """The runs that train ``specs``: a view (:attr:`~pusupport.core.methods.Method.view_of`,
    e.g. nnPUSB) becomes its method's run (nnPU's), shared with the plan's own run of that
    method, settings and driver's values where there is one. Returns (those runs, {label: (trained run's
    label, the view's method or None)})."""
    runs, source = {}, {}
    for spec in specs:
        view = get_method(spec.method).view_of
        base = spec if view is None else replace(spec, label=f"{view} (for {spec.label})", method=view)
        key = (base.method, repr(base.changes), base.prior, base.dataset, base.seeds, base.stacks,
               repr(base.values), base.keeps)
        trained = runs.setdefault(key, base)
        source[spec.label] = trained.label, spec.method if view else None
    return list(runs.values()), source
