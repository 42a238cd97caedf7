"""A book page's parameters, validated in its first cell, and its resolved settings.

Settings are resolved in layers, each merged by :meth:`~pusupport.core.config.Settings.merge`:
the paper's settings for the page's data set (:data:`~pusupport.book.paper.PAPER`), what the
page's experiment adds in the paper, what the profile changes, what the page changes
at that profile, then the page's explicit papermill parameters. :func:`resolve_page`
returns a :class:`Page`, which knows every difference from the paper.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from ..core.config import DRY_RUN_ROWS, ConfigError, Settings, TrainConfig, merge, section_of, sectioned
from .paper import CPU_DATASET, NOT_IN_PAPER, PAPER, PROFILES
from .settings import COMMON, NOT_IN_PAPER_PAGES, OPT_INT, PAGES, page_parameters, page_settings
from .plans import NO_TRAINING, page_cost
from .records import save_results
from ..core.runtime import resolve, resolve_device

_IPYTHON_NAMES = {"In", "Out", "get_ipython", "exit", "quit", "open"}
PLAIN_TYPES = (type(None), bool, int, float, str, list, tuple, dict)


@dataclass
class Page:
    """A page's resolved settings: ``settings`` (what runs) and ``paper`` (the paper's)."""

    page: str
    name: str
    dataset: str | None
    profile: str
    device: str
    seeds: list
    output_dir: Path
    data_dir: Path | None
    settings: Settings
    paper: Settings
    params: dict = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)

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
        base = replace(self.settings.train, device=self.device,
                       seed=self.seeds[0] if seed is None else seed)
        return merge(base, {"method": method, **overrides}, "train")

    def describe(self) -> str:
        """Which profile ran, and every setting it changed from the paper."""
        where = f" on {self.dataset}" if self.dataset else ""
        lines = [f"page '{self.page}'{where} — profile '{self.profile}' on {self.device}, "
                 f"seeds {self.seeds}"]
        if self.settings.train.dry_run:
            visited = self.train_config("aapu" if PAGES[self.page].get("selects") else "nnpu")
            lines.append(f"DRY RUN (dry_run={self.settings.train.dry_run}): these settings, the first "
                         f"seed only; each run takes one optimisation step in epochs "
                         f"{[e for e in visited.visited_epochs() if visited.steps_in(e)]} of its "
                         f"schedule; selection and evaluation score the first "
                         f"{DRY_RUN_ROWS} rows of U and of the test set. Nothing here is a result.")
        if self.dataset in NOT_IN_PAPER:
            lines.append(f"({self.dataset} is not in the paper: 'paper' settings are this book's choice)")
        if self.dataset and self.dataset != PAGES[self.page]["dataset"] and "dataset" not in self.params:
            lines.append(f"data set: {self.dataset}   (paper: {PAGES[self.page]['dataset']})")
        if self.page in NOT_IN_PAPER_PAGES:
            lines.append(f"(not in the paper: {NOT_IN_PAPER_PAGES[self.page]}; 'paper' settings "
                         "are the data set's, with this page's choices)")
        changes = self.changes()
        if changes:
            lines.append("changed from the paper:")
            lines += [f"  {k} = {v!r}   (paper: {p!r})" for k, (v, p) in changes.items()]
        elif self.page in NOT_IN_PAPER_PAGES or self.dataset in NOT_IN_PAPER:
            lines.append("the 'paper' profile's settings, unchanged")
        elif self.dataset:
            lines.append("the paper's settings, unchanged")
        lines += self._notes()
        return "\n".join(lines)

    def _notes(self) -> list[str]:
        """Differences from the paper that are not settings: precision, π, the U sample."""
        runtime = resolve(replace(self.settings.train, device=self.device), stacked=len(self.seeds) > 1)
        notes = [f"device settings: {runtime.describe()}"]
        if runtime.bf16:
            notes.append("precision: bf16 autocast, scores and risks in float32 (the paper states "
                         "no precision; this book's choice for speed)")
        if self.page not in NO_TRAINING:
            notes.append(page_cost(self.page, self.params.get("dataset")).describe())
        if self.dataset == "synthetic":
            notes.append("π = 0.4387, the generating process's P(x₂ > sin x₁) (the paper states "
                         "0.4412, the positive fraction of its own sample)")
        if self.settings.data.n_unlabeled is not None and self.dataset in PAPER and \
                self.paper.data.n_unlabeled is None:
            notes.append("U is a random sample disjoint from the labelled P (the paper's U is the "
                         "whole training set, P included), so π is that sample's positive "
                         "fraction")
        return notes

    def wall_time(self) -> float:
        return time.perf_counter() - self.started

    def save(self, history: pd.DataFrame, name: str | None = None, **extra) -> dict:
        """Write history.csv and summary.json under ``output_dir/<page>`` (or ``/name``)."""
        out = self.results_dir if name is None else self.results_dir / name
        return save_results(history, out, page=self.page, dataset=self.dataset,
                            profile=self.profile, device=self.device, seeds=self.seeds,
                            changes={k: v for k, (v, _) in self.changes().items()},
                            wall_seconds=round(self.wall_time(), 1), **extra)


def _check_type(name, value, expected):
    ok = isinstance(value, expected) and not (isinstance(value, bool) and expected in (int, OPT_INT))
    if not ok:
        types = expected if isinstance(expected, tuple) else (expected,)
        names = " or ".join("None" if t is type(None) else t.__name__ for t in types)
        raise TypeError(f"parameter {name}={value!r} has type {type(value).__name__}; "
                        f"expected {names} — fix the papermill -p/-y value")


def _parameter_names(namespace: dict, required) -> list[str]:
    """The names the parameters cell and papermill's injected cell defined.

    In IPython with history (papermill), they are read from the cells run before the
    first call of :func:`resolve_page`. Otherwise (nbval, plain Python): every plain
    value in ``namespace`` that was not imported from a module.
    """
    import ast
    import sys
    cells = namespace.get("In")
    if isinstance(cells, list):
        names = []
        for source in cells[1:-1]:
            if "resolve_page(" in source:     # a re-run: only cells before the first call count
                break
            try:
                tree = ast.parse(source)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                targets = (node.targets if isinstance(node, ast.Assign)
                           else [node.target] if isinstance(node, ast.AnnAssign) else [])
                names += [t.id for t in targets if isinstance(t, ast.Name)]
        if set(required) <= set(names):
            return list(dict.fromkeys(names))

    def imported(name, value):      # `from module import NAME` leaves the same object behind
        if isinstance(value, (type(None), bool, int, float, str)):
            return False                # scalars are shared objects: identity says nothing
        return any(getattr(m, name, None) is value for m in list(sys.modules.values())
                   if getattr(m, "__dict__", None) is not namespace)
    return [k for k, v in namespace.items() if not k.startswith("_") and k not in _IPYTHON_NAMES
            and isinstance(v, PLAIN_TYPES) and not imported(k, v)]


def _check_schedule(page: str, s: Settings) -> None:
    """Page settings that contradict the training schedule, caught before anything runs."""
    epochs = s.train.epochs
    if PAGES[page].get("selects") and not 1 <= s.train.select_from <= epochs:
        raise ValueError(f"select_from={s.train.select_from} is outside epochs 1..{epochs}: "
                         "aaPU would never select; lower select_from or raise epochs")
    late = [e for e in s.page.snapshot_epochs or [] if not 1 <= e <= epochs]
    if late:
        raise ValueError(f"snapshot epochs {late} are outside epochs 1..{epochs}: raise epochs "
                         f"to at least {max(late)}")


def _is_setting(name: str) -> bool:
    """Whether a page parameter is a setting (else the page reads it; ``model`` is a page's
    choice of network, not the train section's ModelConfig)."""
    return name != "model" and bool(section_of(name))


def resolve_page(page: str, namespace: dict) -> Page:
    """Validate a notebook's parameters (its ``globals()``) and resolve its settings."""
    if page not in PAGES:
        raise ValueError(f"unknown page {page!r}: use one of {sorted(PAGES)}")
    spec = page_parameters(page)
    given = {k: namespace[k] for k in _parameter_names(namespace, COMMON) if k in namespace}
    unknown = sorted(set(given) - set(spec))
    if unknown:
        raise ConfigError(f"unknown parameter(s) {unknown} for page '{page}': "
                          f"the valid parameters are {sorted(spec)} — check the spelling")
    for name, expected in spec.items():
        if name not in given:
            raise NameError(f"parameter {name!r} is missing from the parameters cell")
        _check_type(name, given[name], expected)
    profile = given["profile"]
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}: use one of {list(PROFILES)}")
    dataset = (given.get("dataset") or (CPU_DATASET.get(page) if profile != "paper" else None)
               or PAGES[page]["dataset"])
    if dataset is not None and dataset not in PAPER:
        raise ValueError(f"unknown dataset {dataset!r}: use one of {sorted(PAPER)}")
    paper, settings = page_settings(page, dataset, profile)
    explicit = {k: v for k, v in given.items() if k in PAGES[page]["parameters"]
                and v is not None and _is_setting(k)}
    settings = settings.merge(sectioned(explicit))
    _check_schedule(page, settings)
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
    data_dir = given["data_dir"] or os.environ.get("PUSUPPORT_DATA")
    params = {k: given[k] for k in PAGES[page]["parameters"] if not _is_setting(k)}
    if params.get("dataset") is None:          # the profile chose the data set, if any
        params.pop("dataset", None)
    name = PAGES[page].get("results", page).format(dataset=dataset) + ("_dry_run" if dry_run else "")
    return Page(page, name, dataset, profile, str(resolve_device(given["device"])), seeds,
                Path(given["output_dir"]), Path(data_dir) if data_dir else None,
                settings, paper, params)


