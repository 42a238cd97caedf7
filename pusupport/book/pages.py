"""A book page's parameters, validated in its first cell, and its resolved settings.

A notebook passes its parameters to :func:`resolve_page` by name; they are checked
against its experiment's (:class:`~pusupport.book.experiment.Experiment`) and its
settings resolved by :meth:`~pusupport.book.experiment.Experiment.resolve`. The
:class:`Page` knows every difference from the paper, runs the experiment's plan, and
gives the verdicts on its claims.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from ..core import checkpoint
from ..core.config import DRY_RUN_ROWS, ConfigError, Settings, TrainConfig, merge, section_of
from ..core.methods import get_method
from ..core.runtime import resolve, resolve_device
from ..data.datasets import SIZES
from ..data.files import data_root
from . import registry
from .claims import verdict_text
from .cost import price
from .experiment import OPT_INT, Experiment, RunSpec
from .injected import injected_names
from .paper import CHECKPOINTS, NOT_IN_PAPER, PAPER, PROFILES
from .plots import paired_differences
from .records import save_results, shown_path
from .reference import fingerprint, read_spread
from .runs import run_plan


#: Settings that do not change a run's numbers (where it runs, what it saves).
NOT_RESULTS = {f"train.{k}" for k in checkpoint.NOT_RESULTS}
#: Settings added after results were committed: left out of a fingerprint while unset
#: (None), so that adding one leaves every committed result current.
ADDED_LATER = {"page.compared"}


@dataclass
class Page:
    """A page's resolved settings: ``settings`` (what runs) and ``paper`` (the paper's)."""

    experiment: Experiment
    name: str
    dataset: str | None
    profile: str
    device: str
    seeds: list
    output_dir: Path
    data_dir: Path
    settings: Settings
    paper: Settings
    checkpoints: bool = False
    runner: dict | None = None
    params: dict = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)

    @property
    def page(self) -> str:
        return self.experiment.name

    @property
    def results_dir(self) -> Path:
        return self.output_dir / self.name

    def changes(self) -> dict:
        """Every setting that differs from the paper: {"section.key": (value, paper's value)}."""
        ours, theirs = self.settings.flat(), self.paper.flat()
        out = {k: (v, theirs[k]) for k, v in ours.items() if theirs[k] != v}
        if self.seeds != list(range(len(self.seeds))):
            out["seeds"] = (self.seeds, list(range(self.paper.page.n_seeds)))
        return out

    def train_config(self, method: str, seed: int | None = None, **overrides) -> TrainConfig:
        """The page's training settings for ``method`` (overrides: TrainConfig fields)."""
        return merge(self._base(seed), {"method": method, **overrides}, "train")

    def _base(self, seed: int | None) -> TrainConfig:
        return replace(self.settings.train, device=self.device,
                       seed=self.seeds[0] if seed is None else seed)

    def plan(self) -> list[RunSpec]:
        """The experiment's runs at these settings."""
        return self.experiment.plan(self.settings) if self.experiment.plan else []

    def config(self, spec: RunSpec, seed: int | None = None) -> TrainConfig:
        """The TrainConfig of the run ``spec`` on ``seed`` (default: the first)."""
        return spec.train(self._base(seed))

    def run(self, specs: list[RunSpec] | None = None, make_data=None) -> pd.DataFrame:
        """Train ``specs`` (default: the whole plan) on every seed; the tidy history."""
        return run_plan(self, self.plan() if specs is None else specs, make_data)

    def train(self, data, cfg: TrainConfig):
        """One run (``cfg`` on ``data``) whose whole result the page reads (model, U's
        losses, S): read from the output folder's run store when another page or an
        earlier build trained it (the page says so), else trained and stored; a dry run
        trains and stores nothing."""
        from ..core.training import train
        from .store import RunStore
        if self.settings.train.dry_run:
            return train(data, cfg)
        result, trainer = RunStore(self.output_dir / "runs", self.name).result(data, cfg)
        if trainer is not None:
            print(f"read from the run store, not trained again: {cfg.method} on {data.name}, "
                  f"seed {cfg.seed} (trained by the {trainer} page)")
        return result

    def claims(self) -> list[tuple]:
        """(claim, results folder) of this page's claims."""
        return [(c, self.name) for c in self.experiment.claims
                if self.experiment.folder(c.dataset) == self.name]

    def verdict(self) -> str:
        """Markdown: this page's claims, what was measured and the verdicts — judged as the
        summary judges them (the same family adjustment and run-to-run spread)."""
        spread, _ = read_spread(self.output_dir, self.profile)
        return verdict_text(self.output_dir, self.claims(), spread, registry.family_sizes())

    def evidence(self, ax=None):
        """The paired-differences figure of this page's comparative claims (a note where
        none was judged, e.g. in a dry run)."""
        return paired_differences(registry.judged(self.output_dir, self.claims(), self.profile), axes=ax)

    def identity(self, seeds: bool = True) -> dict:
        """What shapes the page's numbers: its folder, data set, every setting that shapes a
        result and (``seeds``) its seeds; without them, what runs on any seed must share."""
        flat = {k: v for k, v in self.settings.flat().items()
                if k not in NOT_RESULTS and not (k in ADDED_LATER and v is None)}
        if seeds:
            return {"page": self.name, "dataset": self.dataset, "seeds": self.seeds, "settings": flat}
        flat.pop("page.n_seeds")
        return {"page": self.name, "dataset": self.dataset, "settings": flat}

    def fingerprint(self, seeds: bool = True) -> str:
        """The fingerprint of :meth:`identity`."""
        return fingerprint(self.identity(seeds))

    @property
    def beyond_paper(self) -> bool:
        """Whether the paper lacks this page's experiment or data set: its 'paper' profile
        holds this book's choices, not the paper's."""
        return bool(self.experiment.not_in_paper) or self.dataset in NOT_IN_PAPER

    def describe(self) -> str:
        """Which profile ran, and every setting it changed from the paper."""
        where = f" on {self.dataset}" if self.dataset else ""
        elsewhere = self.dataset is None and len({r.dataset for r in self.plan()}) > 1
        seeds = "of each data set's own page" if elsewhere else self.seeds
        lines = [f"page '{self.page}'{where} — profile '{self.profile}' on {self.device}, "
                 f"seeds {seeds}"]
        if self.settings.train.dry_run:
            specs = self.plan()           # a run that selects, if the plan has one
            run = next((r for r in specs if get_method(r.method).selects), specs[0] if specs else None)
            visited = self.config(run) if run else self.settings.train
            lines.append(f"DRY RUN (dry_run={self.settings.train.dry_run}): these settings, the first "
                         f"seed only; each run takes one optimisation step in epochs "
                         f"{[e for e in visited.visited_epochs() if visited.steps_in(e)]} of its "
                         f"schedule; selection and evaluation score the first "
                         f"{DRY_RUN_ROWS} rows of U and of the test set. Nothing here is a result.")
        if self.dataset in NOT_IN_PAPER:
            lines.append(f"({self.dataset} is not in the paper: 'paper' settings are this book's choice)")
        if self.dataset and self.dataset != self.experiment.dataset and "dataset" not in self.params:
            lines.append(f"data set: {self.dataset}   (paper: {self.experiment.dataset})")
        if self.experiment.not_in_paper:
            lines.append(f"(not in the paper: {self.experiment.not_in_paper}; 'paper' settings "
                         "are the data set's, with this page's choices)")
        changes = self.changes()
        if changes:
            lines.append("changed from the paper:")
            source = "'paper' profile" if self.beyond_paper else "paper"
            lines += [f"  {k} = {_shown(v)}   ({source}: {_paper_value(k, p)})"
                      for k, (v, p) in changes.items()]
        elif self.beyond_paper:
            lines.append("the 'paper' profile's settings, unchanged")
        elif self.dataset:
            lines.append("the paper's settings, unchanged")
        lines += self._notes()
        return "\n".join(lines)

    def _notes(self) -> list[str]:
        """Differences from the paper that are not settings: precision, π, the U sample."""
        runtime = resolve(replace(self.settings.train, device=self.device))
        notes = [f"device settings: {runtime.describe()}", self._where()]
        if runtime.bf16:
            notes.append("precision: bf16 autocast, scores and risks in float32 (the paper states "
                         "no precision; this book's choice for speed)")
        if self.experiment.plan:
            notes.append(price(self.experiment.runs(self.params.get("dataset"))).describe())
        if self.dataset == "synthetic":
            notes.append("π = 0.4387, the generating process's P(x₂ > sin x₁) (the paper states "
                         "0.4412, the positive fraction of its own sample)")
        if self.settings.data.n_unlabeled is not None and self.dataset in PAPER and \
                self.paper.data.n_unlabeled is None:
            notes.append("U is a random sample disjoint from the labelled P (the paper's U is the "
                         "whole training set, P included), so π is that sample's positive "
                         "fraction")
        return notes

    def _where(self) -> str:
        """How the runs run, whether they checkpoint, and where data are read from."""
        runs = ("Ray tasks on the build's cluster" if self.runner else "in this kernel, one "
                "after the other")
        saved = (f"every run checkpoints under {self.results_dir.name}/checkpoints and resumes"
                 if self.checkpoints else "no checkpoints")
        data = "" if self.dataset == "synthetic" else f"; data folder: {shown_path(self.data_dir)}"
        return f"runs: {runs}; {saved}{data}"

    def wall_time(self) -> float:
        return time.perf_counter() - self.started

    @property
    def n_test(self) -> int | None:
        """The number of test (or validation) points each run is judged on."""
        data, sizes = self.settings.data, SIZES.get(self.dataset)
        return data.n_test or data.n_val or (sizes and sizes.n_test)

    def save(self, history: pd.DataFrame, name: str | None = None, **extra) -> dict:
        """Write history.csv and summary.json under ``output_dir/<page>`` (or ``/name``)."""
        out = self.results_dir if name is None else self.results_dir / name
        return save_results(history, out, page=self.page, dataset=self.dataset,
                            profile=self.profile, device=self.device, seeds=self.seeds,
                            fingerprint=self.fingerprint(), n_test=self.n_test,
                            changes={k: v for k, (v, _) in self.changes().items()},
                            wall_seconds=round(self.wall_time(), 1), **extra)


def _shown(value) -> str:
    """A setting as ``describe()`` prints it: a table keyed by names (the methods per data
    set) as "a: x, y; b: z", anything else as its repr."""
    if isinstance(value, dict) and value and all(isinstance(k, str) for k in value):
        return "; ".join(f"{k}: {', '.join(map(str, v)) if isinstance(v, list) else v}"
                         for k, v in value.items())
    return repr(value)


#: What a setting the paper's table leaves unset (None) means in the paper.
PAPER_UNSET = {"data.n_unlabeled": "all training points", "data.max_features": "the whole vocabulary"}


def _paper_value(key: str, value) -> str:
    """The paper's value of ``key`` as ``describe()`` prints it; unset: what that means."""
    return PAPER_UNSET.get(key, "not set") if value is None else _shown(value)


def _check_type(name, value, expected):
    ok = isinstance(value, expected) and not (isinstance(value, bool) and expected in (int, OPT_INT))
    if not ok:
        types = expected if isinstance(expected, tuple) else (expected,)
        names = " or ".join("None" if t is type(None) else t.__name__ for t in types)
        raise TypeError(f"parameter {name}={value!r} has type {type(value).__name__}; "
                        f"expected {names} — fix the papermill -p/-y value")


def _check_schedule(experiment: Experiment, s: Settings) -> None:
    """Page settings that contradict the training schedule, caught before anything runs."""
    epochs = s.train.epochs
    if experiment.selects and not 1 <= s.train.select_from <= epochs:
        raise ValueError(f"select_from={s.train.select_from} is outside epochs 1..{epochs}: "
                         "aaPU would never select; lower select_from or raise epochs")
    late = [e for e in s.page.snapshot_epochs or [] if not 1 <= e <= epochs]
    if late:
        raise ValueError(f"snapshot epochs {late} are outside epochs 1..{epochs}: raise epochs "
                         f"to at least {max(late)}")


def _is_setting(name: str) -> bool:
    """Whether a page parameter is a setting (else the page reads it; ``model`` and
    ``method`` are the own-data page's choices of network and method, which it checks and
    turns into settings itself)."""
    return name not in ("model", "method") and bool(section_of(name))


def resolve_page(name: str, **given) -> Page:
    """Validate a notebook's parameters (passed by name) and resolve its settings."""
    experiment = registry.get(name)
    spec = experiment.all_parameters()
    unknown = sorted((set(given) | injected_names()) - set(spec))
    if unknown:
        raise ConfigError(f"unknown parameter(s) {unknown} for page '{name}': "
                          f"the valid parameters are {sorted(spec)} — check the spelling")
    for key, expected in spec.items():
        if key not in given:
            raise NameError(f"parameter {key!r} is missing: pass it to resolve_page "
                            "(and define it in the parameters cell)")
        _check_type(key, given[key], expected)
    profile = given["profile"]
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}: use one of {list(PROFILES)}")
    dataset = (given.get("dataset") or (experiment.cpu_dataset if profile != "paper" else None)
               or experiment.dataset)
    if dataset is not None and dataset not in PAPER:
        raise ValueError(f"unknown dataset {dataset!r}: use one of {sorted(PAPER)}")
    explicit = {k: v for k, v in given.items() if k in experiment.parameters
                and v is not None and _is_setting(k)}
    paper, settings = experiment.resolve(dataset, profile, explicit)
    _check_schedule(experiment, settings)
    seeds = given["seeds"] if given["seeds"] is not None else list(range(settings.page.n_seeds))
    if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
        raise TypeError(f"seeds={seeds!r}: give a non-empty list of ints, e.g. [0, 1, 2]")
    dry_run = given["dry_run"]
    if not 0 <= dry_run <= 3:
        raise ValueError(f"dry_run={dry_run}: use 0 (a real run) or 1–3 (epochs visited, one "
                         "optimisation step each)")
    if dry_run:
        settings, seeds = settings.merge({"train": {"dry_run": dry_run}}), seeds[:1]
    settings = settings.merge({"page": {"n_seeds": len(seeds)}})
    params = {k: given[k] for k in experiment.parameters if not _is_setting(k)}
    if params.get("dataset") is None:          # the profile chose the data set, if any
        params.pop("dataset", None)
    checkpoints = CHECKPOINTS[profile] if given["checkpoints"] is None else given["checkpoints"]
    folder = experiment.folder(dataset) + ("_dry_run" if dry_run else "")
    return Page(experiment, folder, dataset, profile, str(resolve_device(given["device"])), seeds,
                Path(given["output_dir"]), data_root(given["data_dir"]), settings, paper,
                checkpoints, given["runner"], params)


def comparison_page(page: Page, dataset: str, seeds: list | None = None) -> Page:
    """The page that judges aaPU against nnPU on ``dataset`` (its claim of the §4 family),
    at ``page``'s profile, device, folders and runner, on ``seeds`` (None: its profile's):
    the same settings and seeds, so its runs are read from the run store, not trained again."""
    from .experiments.synthetic import AAPU_VS_NNPU
    pages = {c.dataset or e.dataset: e for e in registry.all_experiments().values()
             for c in e.claims if c.family == AAPU_VS_NNPU}
    if dataset not in pages:
        raise ValueError(f"no page compares aaPU with nnPU on {dataset!r}: use one of {sorted(pages)}")
    experiment = pages[dataset]
    given = {**{k: None for k in experiment.parameters}, "profile": page.profile,
             "device": page.device, "seeds": seeds, "data_dir": str(page.data_dir),
             "output_dir": str(page.output_dir), "dry_run": page.settings.train.dry_run,
             "checkpoints": page.checkpoints, "runner": page.runner}
    if "dataset" in experiment.parameters:
        given["dataset"] = dataset
    return resolve_page(experiment.name, **given)
