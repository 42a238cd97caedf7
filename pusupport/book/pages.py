"""A book page's parameters, validated in its first cell, resolved into a
:class:`~pusupport.book.page.Page`.

A notebook passes its parameters to :func:`resolve_page` by name; they are checked
against its experiment's (:class:`~pusupport.book.experiment.Experiment`) and its
settings resolved by :meth:`~pusupport.book.experiment.Experiment.resolve`.
"""
from __future__ import annotations

import warnings
from dataclasses import replace
from pathlib import Path

from ..core.config import ConfigError, Settings, section_of
from ..core.runtime import LayoutNote, resolve_device
from ..data.files import data_root
from . import registry
from .claims import COMPARISONS
from .experiment import OPT_INT, Experiment
from .injected import injected_names
from .page import Page
from .paper import CHECKPOINTS, PAPER, PROFILES
from .reference import record_runs

__all__ = ["Page", "comparison_page", "record_of", "resolve_page"]


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


def _page_warning(message, category, filename, lineno, line=None) -> str:
    """A warning as a page shows it (as the command line does): its message, not the build
    machine's file and line."""
    return f"warning: {message}\n"


def resolve_page(name: str, **given) -> Page:
    """Validate a notebook's parameters (passed by name, and those papermill injected into
    its kernel) and resolve its settings; the kernel's warnings then name no file, and none
    speaks of the build's speed (:class:`~pusupport.core.runtime.LayoutNote`: the build's log
    says it once)."""
    warnings.formatwarning = _page_warning
    warnings.filterwarnings("ignore", category=LayoutNote)
    return _resolve(name, given, injected_names())


def _resolve(name: str, given: dict, injected=()) -> Page:
    experiment = registry.get(name)
    spec = experiment.all_parameters()
    unknown = sorted((set(given) | set(injected)) - set(spec))
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
                and v is not None and (_is_setting(k) or k in experiment.plan_reads)}
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
                checkpoints, given["runner"], params, registry.family_sizes(), explicit=explicit)


def comparison_page(page: Page, dataset: str, seeds: list | None = None) -> Page:
    """The page that judges aaPU against nnPU on ``dataset`` (its claim of the §4 family),
    at ``page``'s profile, device, folders and runner, on ``seeds`` (None: its profile's):
    the same settings and seeds, so its runs are read from the run store, not trained again."""
    pages = {c.dataset or e.dataset: e for e in registry.all_experiments().values()
             for c in e.claims if c.family in COMPARISONS}
    if dataset not in pages:
        raise ValueError(f"no page compares aaPU with nnPU on {dataset!r}: use one of {sorted(pages)}")
    experiment = pages[dataset]
    given = {**{k: None for k in experiment.parameters}, "profile": page.profile,
             "device": page.device, "seeds": seeds, "data_dir": str(page.data_dir),
             "output_dir": str(page.output_dir), "dry_run": page.settings.train.dry_run,
             "checkpoints": page.checkpoints, "runner": page.runner}
    if "dataset" in experiment.parameters:
        given["dataset"] = dataset
    return _resolve(experiment.name, given)      # the notebook's injected names are its own


def record_of(page: Page, name: str, profile: str, **parameters) -> Page:
    """The record ``name`` of ``page``'s experiment: at ``profile`` with ``parameters`` given,
    on ``page``'s device and folders, reading every run from those committed under
    ``results/reference/<profile>/<name>/runs`` (:func:`~pusupport.book.store.commit_runs`)."""
    experiment = page.experiment
    given = {**{k: None for k in experiment.parameters}, "profile": profile, "device": page.device,
             "seeds": None, "data_dir": str(page.data_dir), "output_dir": str(page.output_dir),
             "dry_run": 0, "checkpoints": False, "runner": None, **parameters}
    return replace(_resolve(experiment.name, given), name=name, committed=record_runs(profile, name))
