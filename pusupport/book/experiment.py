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

from ..core.config import Settings, TrainConfig, merge, sectioned
from ..core.methods import get_method
from ..core.runtime import STACKED
from .claims import Claim
from .cost import Data, Run, data_sizes
from .paper import PAPER, PROFILE_CHANGES

OPT_INT = (int, type(None))
#: The parameters of every page: which profile, where it runs, on what, and where results go.
COMMON = {"profile": str, "device": str, "seeds": (list, type(None)), "data_dir": (str, type(None)),
          "output_dir": str, "dry_run": int, "checkpoints": (bool, type(None)),
          "runner": (dict, type(None))}
#: The training settings every page that trains takes as parameters (None: the profile's).
TRAINING = {"epochs": OPT_INT, "lr": (float, type(None))}


@dataclass(frozen=True)
class RunSpec:
    """One training configuration of a plan, trained on each of the page's seeds.

    ``changes``: a sectioned table over the page's settings ({"train": …, "data": …});
    ``prior``: π given to the method (None: the data's); ``group``: runs trained on the
    same data and checkpointed in one folder; ``seeds``: 1 for a run on the first seed
    only; ``stacks``: False for runs a page's driver trains seed by seed; ``dataset``:
    another data set than the page's; ``estimator``: a P-vs-U classifier behind a prior
    estimate (trained from the default training settings on half of P and of U \\ P);
    ``values``: what else the page's driver reads (e.g. a label-noise rate).
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

    def train(self, base: TrainConfig) -> TrainConfig:
        """``base`` (the page's, or the defaults for an estimator) for this run."""
        if self.estimator:
            base = Settings().merge({k: v for k, v in self.changes.items() if k != "data"}).train
            return merge(base, {"method": self.method, "eval_every": 0}, "train")
        return merge(Settings(train=base).merge({k: v for k, v in self.changes.items()
                                                 if k in ("train", "model")}).train,
                     {"method": self.method}, "train")


@dataclass(frozen=True)
class Experiment:
    """A page: its data set (whose settings it starts from), its settings per profile on top
    of them, its own papermill parameters (name → type), its plan (resolved settings →
    runs), the legend names and colours of run labels that are not method names, its
    claims, and the pages of the book it makes ({page: {"dataset": …, "title": …}};
    default: one page named after it). ``cpu_dataset``: the data set its ``cpu`` and
    ``smoke`` profiles run; ``sizes``: the data set whose sizes the cost model uses when
    ``dataset`` is a book-only table (e.g. "memorization"); ``not_in_paper``: what it shows
    when the paper has no such experiment; ``selects``: whether it trains a selecting method."""

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
        ours = ours.merge(self.changes.get(profile, {})).merge(sectioned(parameters or {}))
        return paper, ours

    def runs(self, dataset: str | None = None, profile: str = "paper") -> list[Run]:
        """The plan at ``profile`` on ``dataset`` as the cost model's :class:`Run` list."""
        dataset = dataset or self.dataset
        _, s = self.resolve(dataset, profile)
        return [_priced(spec, s, dataset, self) for spec in (self.plan(s) if self.plan else [])]


def _priced(spec: RunSpec, s: Settings, dataset: str | None, experiment: Experiment) -> Run:
    """A :class:`RunSpec` as the cost model's :class:`Run` at settings ``s``."""
    if spec.dataset is not None and spec.dataset != dataset:
        dataset, s = spec.dataset, experiment.resolve(spec.dataset, "paper")[0]
    data = data_sizes(experiment.sizes or dataset, s.merge({"data": spec.changes.get("data", {})}).data)
    if spec.estimator:
        p, u = data.n_p // 2, data.eligible // 2
        half = Data(p, u, 0, 0, data.shape, data.nnz)
        return Run(spec.train(s.train), half, scored=data.n_p - p + data.eligible - u)
    k, method, cfg = spec.seeds or s.page.n_seeds, get_method(spec.method), spec.train(s.train)
    stacked = (spec.stacks and k > 1 and data.nnz is None and method.stacks
               and cfg.model.name in STACKED["cuda"])      # priced on a GPU, laid out as there
    return Run(cfg, data, k, stacked, view=method.view_of is not None)


def runs_of(methods, **changes) -> list[RunSpec]:
    """One :class:`RunSpec` per method name, each with the same TrainConfig ``changes``."""
    return [RunSpec(m, m, {"train": changes} if changes else {}) for m in methods]
