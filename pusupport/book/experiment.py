"""An experiment — one page of the book — as one object: the data set it starts from, its
settings per profile, its papermill parameters, its plan of runs, its run labels and its
claims. The page runs the plan and the cost model prices the same plan; nothing else
knows the page's name.

Settings are resolved by :func:`resolve` in one table shape, ``{profile: {section:
settings}}``: the data set's (:data:`~pusupport.book.paper.PAPER` is its ``paper``
entry, :data:`~pusupport.book.paper.PROFILE_CHANGES` the others), then the
experiment's, then the page's explicit parameters, each merged by
:meth:`~pusupport.core.config.Settings.merge`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..core.config import Settings, sectioned
from .claims import Claim
from .cost import Data, data_sizes, priceable
from .paper import PAPER, PROFILE_CHANGES
from .plan import Plan, Planned, RunSpec, as_trained

__all__ = ["COMMON", "OPT_INT", "OPT_STR", "TRAINING", "Experiment", "RunSpec", "runs_of"]

OPT_INT = (int, type(None))
OPT_STR = (str, type(None))
#: The parameters of every page: which profile, where it runs, on what, and where results go.
COMMON = {"profile": str, "device": str, "seeds": (list, type(None)), "data_dir": (str, type(None)),
          "output_dir": str, "dry_run": int, "checkpoints": (bool, type(None)),
          "runner": (dict, type(None))}
#: The training settings every page that trains takes as parameters (None: the profile's).
TRAINING = {"epochs": OPT_INT, "lr": (float, type(None))}


@dataclass(frozen=True)
class Experiment:
    """A page: its data set (whose settings it starts from), its settings per profile on top
    of them, its own papermill parameters (name → type), its plan (resolved settings →
    runs), the legend names and colours of run labels that are not method names, its
    claims, and the pages of the book it makes ({page: {"dataset": …, "title": …}};
    default: one page named after it). ``cpu_dataset``: the data set its ``cpu`` and
    ``smoke`` profiles run; ``sizes``: the data set whose sizes the cost model uses when
    ``dataset`` is a book-only table (e.g. "memorization"); ``not_in_paper``: what it shows
    when the paper has no such experiment; ``selects``: whether it trains a selecting method;
    ``reads``: the data sets whose comparison pages' runs it reads, and ``reads_every_page``:
    whether it reads every other page's results (the book runs those pages first);
    ``plan_reads``: its own parameters that are not settings but change its plan (the
    own-data page's method and π), passed to ``plan`` by name where given."""

    name: str
    dataset: str | None = None
    changes: dict = field(default_factory=dict)
    parameters: dict = field(default_factory=dict)
    plan: Callable[[Settings], list[RunSpec]] | None = None
    labels: dict = field(default_factory=dict)
    claims: tuple[Claim, ...] = ()
    pages: dict | None = None
    cpu_dataset: str | None = None
    sizes: str | None = None
    not_in_paper: str | None = None
    selects: bool = False
    reads: tuple[str, ...] = ()
    reads_every_page: bool = False
    plan_reads: tuple[str, ...] = ()

    def book_pages(self) -> dict:
        return self.pages or {self.name: {}}

    def folder(self, dataset: str | None = None) -> str:
        """The results folder (and page name) of this experiment on ``dataset``."""
        for page, entry in self.book_pages().items():
            if entry.get("dataset") in (None, dataset):
                return page
        raise ValueError(f"experiment {self.name!r} has no page for data set {dataset!r}: "
                         f"use one of {[e.get('dataset') for e in self.book_pages().values()]}")

    def all_parameters(self) -> dict:
        return {**COMMON, **self.parameters}

    def resolve(self, dataset: str | None, profile: str, parameters: dict | None = None
                ) -> tuple[Settings, Settings]:
        """(the paper's settings, this profile's with ``parameters``) on ``dataset``."""
        paper = Settings().merge(PAPER.get(dataset, {})).merge(self.changes.get("paper", {}))
        ours = paper.merge(PROFILE_CHANGES.get(dataset, {}).get(profile, {}))
        settings = {k: v for k, v in (parameters or {}).items() if k not in self.plan_reads}
        ours = ours.merge(self.changes.get(profile, {})).merge(sectioned(settings))
        return paper, ours

    def specs(self, s: Settings, parameters: dict | None = None) -> list[RunSpec]:
        """The plan's runs at settings ``s``, with those of the page's ``parameters`` it reads
        (:attr:`plan_reads`)."""
        if not self.plan:
            return []
        return self.plan(s, **{k: v for k, v in (parameters or {}).items() if k in self.plan_reads})

    def runs(self, dataset: str | None = None, profile: str = "paper", device: str = "cuda",
             parameters: dict | None = None) -> Plan:
        """The plan at ``profile`` on ``dataset`` with the page's ``parameters`` (settings given
        by name), laid out for ``device`` (a type), as the cost model prices it: its runs
        carry their data's sizes, not their data."""
        dataset = dataset or self.dataset
        _, s = self.resolve(dataset, profile, parameters)
        trained, shown = as_trained(self.specs(s, parameters))
        seeds = range(s.page.n_seeds)
        return Plan.of([self.planned(spec, s, dataset, seeds) for spec in trained], shown, seeds, device)

    def planned(self, spec: RunSpec, s: Settings, dataset: str | None, seeds) -> Planned:
        """The one resolver of a run: ``spec`` at settings ``s`` on ``dataset``, on its share
        of ``seeds`` (a run on another data set: on that data set's ``paper`` settings and
        seeds), its data ``(dataset, data changes)`` and their sizes as the cost model
        counts them (None where it cannot: the run is not priced); an estimator on the first
        seed, trained on half of P and of U \\ P, the other halves scored once. A page adds
        its data (:meth:`~pusupport.book.page.Page.resolved`)."""
        if spec.dataset is not None and spec.dataset != dataset:
            dataset, s = spec.dataset, self.resolve(spec.dataset, "paper")[0]
            seeds = range(s.page.n_seeds)                    # as that data set's page runs it
        changes = spec.changes.get("data", {})
        table, settings = self.sizes or dataset, s.merge({"data": changes}).data
        data = data_sizes(table, settings) if priceable(table, settings) else None
        key, cfg = (dataset, tuple(sorted(changes.items()))), spec.train(s.train)
        if spec.estimator and data is not None:
            p, u = data.n_p // 2, data.eligible // 2
            return Planned(spec.label, cfg, tuple(seeds)[:1], key, sizes=Data(p, u, 0, 0, data.shape, data.nnz),
                           scored=data.n_p - p + data.eligible - u, stacks=False, keeps=spec.keeps)
        return Planned(spec.label, cfg, tuple(seeds)[:spec.seeds or len(seeds)], key, spec.prior,
                       sizes=data, dense=data is not None and data.nnz is None, stacks=spec.stacks,
                       keeps=spec.keeps)


def runs_of(methods, **changes) -> list[RunSpec]:
    """One :class:`RunSpec` per method name, each with the same TrainConfig ``changes``."""
    return [RunSpec(m, m, {"train": changes} if changes else {}) for m in methods]
