"""The paper's experimental settings, the book's profiles, and papermill parameters.

A page's first cell declares its parameters; :func:`resolve_page` checks them
(unknown names, wrong types, unknown profile) and returns the resolved
:class:`Experiment`: the paper's settings with the profile's changes applied.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from tqdm.auto import tqdm

from .records import save_results
from .training import TrainConfig, resolve_device, train

PROFILES = ("smoke", "cpu", "paper")

#: The paper's settings per experiment (§4 and the issue tracker's transcription).
PAPER = {
    "synthetic": dict(model="mlp", epochs=1000, batch_size=128, lr=1e-4, lr_schedule={100: 1e-5},
                      weight_decay=0.05, n_select=1, select_from=200, loss="logistic", n_seeds=10),
}

#: What each profile changes from the paper (absent keys keep the paper's value).
CHANGES = {
    "synthetic": {
        "paper": {},
        "cpu": {"n_seeds": 3},
        "smoke": {"epochs": 12, "select_from": 6, "lr_schedule": {6: 1e-5}, "n_seeds": 2,
                  "n_test": 2000},
    },
}

#: Data-set settings that are not training settings.
DATA_KEYS = ("n_test",)

COMMON = {"profile": str, "device": str, "seeds": (list, type(None)), "data_dir": (str, type(None)),
          "output_dir": str}

#: Extra papermill parameters per page, with their types; None means "profile decides".
PAGE_PARAMETERS = {
    "introduction": {},
    "synthetic": {"epochs": (int, type(None)), "n_select": (int, type(None)),
                  "select_from": (int, type(None))},
}

_IPYTHON_NAMES = {"In", "Out", "get_ipython", "exit", "quit", "open"}


@dataclass
class Experiment:
    """A page's resolved settings."""

    page: str
    profile: str
    device: str
    seeds: list
    output_dir: Path
    data_dir: Path | None
    train: dict
    data: dict = field(default_factory=dict)
    changes: dict = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)

    @property
    def results_dir(self) -> Path:
        return self.output_dir / self.page

    def config(self, method: str, seed: int, **overrides) -> TrainConfig:
        return TrainConfig(method=method, seed=seed, device=self.device,
                           **{**self.train, **overrides})

    def describe(self) -> str:
        lines = [f"page '{self.page}' — profile '{self.profile}' on {self.device}, "
                 f"seeds {self.seeds}"]
        if self.changes:
            lines.append("changed from the paper:")
            lines += [f"  {k} = {v!r}   (paper: {PAPER.get(self.page, {}).get(k, 'not set')!r})"
                      for k, v in self.changes.items()]
        else:
            lines.append("the paper's settings, unchanged")
        return "\n".join(lines)

    def wall_time(self) -> float:
        return time.perf_counter() - self.started

    def save(self, history: pd.DataFrame) -> dict:
        """Write history.csv and summary.json under ``output_dir/page``."""
        return save_results(history, self.results_dir, page=self.page, profile=self.profile,
                            device=self.device, seeds=self.seeds, changes=self.changes,
                            wall_seconds=round(self.wall_time(), 1))


def _check_type(name, value, expected):
    if isinstance(value, bool) and expected in (int, float):
        ok = False
    else:
        ok = isinstance(value, expected)
    if not ok:
        names = " or ".join(t.__name__ for t in (expected if isinstance(expected, tuple) else (expected,)))
        raise TypeError(f"parameter {name}={value!r} has type {type(value).__name__}; "
                        f"expected {names} — fix the papermill -p/-y value")


def resolve_page(page: str, namespace: dict) -> Experiment:
    """Validate a notebook's parameters (its ``globals()``) and resolve the experiment."""
    if page not in PAGE_PARAMETERS:
        raise ValueError(f"unknown page {page!r}: use one of {sorted(PAGE_PARAMETERS)}")
    spec = {**COMMON, **PAGE_PARAMETERS[page]}
    given = {k: v for k, v in namespace.items()
             if not k.startswith("_") and k not in _IPYTHON_NAMES
             and not callable(v) and type(v).__name__ != "module"}
    unknown = sorted(set(given) - set(spec))
    if unknown:
        raise NameError(f"unknown parameter(s) {unknown} for page '{page}': "
                        f"the parameters are {sorted(spec)} — check the spelling")
    for name, expected in spec.items():
        if name not in given:
            raise NameError(f"parameter {name!r} is missing from the parameters cell")
        _check_type(name, given[name], expected)
    profile = given["profile"]
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}: use one of {list(PROFILES)}")
    paper = PAPER.get(page, {"n_seeds": 1})
    changes = dict(CHANGES.get(page, {}).get(profile, {}))
    settings = {**paper, **changes}
    for name in PAGE_PARAMETERS[page]:
        if given[name] is not None:
            settings[name] = given[name]
            if given[name] != paper.get(name):
                changes[name] = given[name]
    n_seeds = settings.pop("n_seeds")
    seeds = given["seeds"] if given["seeds"] is not None else list(range(n_seeds))
    if given["seeds"] is not None and len(seeds) != paper["n_seeds"]:
        changes["n_seeds"] = len(seeds)
    data = {k: settings.pop(k) for k in DATA_KEYS if k in settings}
    data_dir = given["data_dir"] or os.environ.get("PUSUPPORT_DATA")
    return Experiment(page, profile, str(resolve_device(given["device"])), seeds,
                      Path(given["output_dir"]), Path(data_dir) if data_dir else None,
                      settings, data, changes)


def profile_table() -> pd.DataFrame:
    """Every experiment's settings under each profile (the paper's, then each change)."""
    rows = []
    for page, paper in PAPER.items():
        for profile in PROFILES:
            changed = CHANGES[page][profile]
            rows.append({"experiment": page, "profile": profile,
                         "changes from the paper": ", ".join(f"{k}={v}" for k, v in changed.items())
                         or ("—" if profile != "paper" else "; ".join(
                             f"{k}={v}" for k, v in paper.items()))})
    return pd.DataFrame(rows).set_index(["experiment", "profile"])


def run_methods(exp: Experiment, methods, make_data, **overrides) -> pd.DataFrame:
    """Train every method on every seed; ``make_data(seed)`` builds the PU data."""
    histories = []
    runs = [(seed, m) for seed in exp.seeds for m in methods]
    data, data_seed = None, None
    for seed, method in tqdm(runs, desc=exp.page):
        if seed != data_seed:
            data, data_seed = make_data(seed), seed
        result = train(data, exp.config(method, seed, **overrides))
        histories.append(result.history)
    return pd.concat(histories, ignore_index=True)
