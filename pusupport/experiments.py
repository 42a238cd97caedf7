"""The paper's experimental settings, the book's profiles, and papermill parameters.

Settings are resolved in layers: the paper's settings for a data set
(:data:`PAPER`), what a profile changes for that data set
(:data:`PROFILE_CHANGES`), what a page changes on top (:data:`PAGE_CHANGES`),
then the page's explicit papermill parameters. :func:`resolve_page` validates
the parameters (unknown names, wrong types, unknown profile) and returns the
:class:`Experiment`, which knows what differs from the paper.
"""
from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .progress import progress
from .records import save_results
from .training import TrainConfig, resolve_device, train

PROFILES = ("smoke", "cpu", "paper")

#: The paper's settings per data set (§4; Adam, logistic loss, nnPU β = 0, γ = 1).
PAPER = {
    "synthetic": dict(model="mlp", epochs=1000, batch_size=128, lr=1e-4, lr_schedule={100: 1e-5},
                      weight_decay=0.05, n_select=1, select_from=200, n_seeds=10,
                      n_labeled=100, n_unlabeled=1000, n_test=10_000),
    "cifar10": dict(model="kiryo_cnn", width=1.0, dropout=0.5, epochs=200, batch_size=2000, lr=1e-4,
                    lr_schedule={50: 5e-5, 100: 1e-5}, weight_decay=0.017, n_select=150,
                    select_from=20, n_seeds=10, n_labeled=1000, n_unlabeled=None, amp=None),
    "cifar100": dict(model="coteaching_cnn", width=1.0, dropout=0.5, epochs=300, batch_size=1000,
                     lr=1e-4, lr_schedule={50: 1e-6}, weight_decay=0.1, n_select=160,
                     select_from=60, n_seeds=10, n_labeled=1000, n_unlabeled=None, amp=None),
    "20news": dict(model="news_mlp", width=1.0, dropout=0.0, epochs=500, batch_size=5000, lr=1e-4,
                   lr_schedule={50: 1e-5}, weight_decay=5e-4, n_select=160, select_from=60,
                   n_seeds=10, n_labeled=1000, n_unlabeled=None, max_features=None),
    # Not in the paper: our choices, with nnPU's MLP (ReLU) as for its MNIST experiment.
    "fashion_mnist": dict(model="news_mlp", activation="relu", width=1.0, dropout=0.0, epochs=200,
                          batch_size=2000, lr=1e-4, lr_schedule={50: 1e-5}, weight_decay=5e-4,
                          n_select=150, select_from=20, n_seeds=10, n_labeled=1000,
                          n_unlabeled=None),
    # Arpit et al.'s memorisation experiment re-created for the binary CIFAR-10 task
    # (PN training with the logistic loss); the aaPU paper gives no settings for it.
    "memorization": dict(model="kiryo_cnn", width=1.0, dropout=0.0, epochs=100, batch_size=128,
                         lr=1e-3, weight_decay=0.0, n_train=50_000, n_val=10_000,
                         noise_rates=[0.0, 0.2, 0.4], n_seeds=1, amp=None),
}

#: Settings that are this book's choice (the paper has no such experiment).
NOT_IN_PAPER = {"fashion_mnist", "memorization"}

#: What each profile changes for a data set. `cpu`: narrower CNNs with bf16 autocast,
#: a disjoint U sample, fewer epochs (learning-rate milestones and the first selection
#: epoch scaled with them), n_select scaled so that S can reach the same fraction of U.
PROFILE_CHANGES = {
    "synthetic": {
        "paper": {},
        "cpu": {},
        "smoke": {"epochs": 12, "select_from": 6, "lr_schedule": {6: 1e-5}, "n_seeds": 2,
                  "n_test": 2000},
    },
    "cifar10": {
        "paper": {},
        "cpu": {"width": 0.25, "amp": True, "n_unlabeled": 10_000, "epochs": 10, "batch_size": 500,
                "lr_schedule": {5: 5e-5, 8: 1e-5}, "select_from": 2, "n_select": 300, "n_seeds": 2},
        "smoke": {"width": 0.125, "amp": True, "n_labeled": 100, "n_unlabeled": 400, "epochs": 3,
                  "batch_size": 100, "lr_schedule": {}, "select_from": 2, "n_select": 20,
                  "n_seeds": 2},
    },
    "cifar100": {
        "paper": {},
        "cpu": {"width": 0.25, "amp": True, "n_unlabeled": 10_000, "epochs": 12, "batch_size": 500,
                "lr_schedule": {2: 1e-6}, "select_from": 3, "n_select": 300, "n_seeds": 2},
        "smoke": {"width": 0.125, "amp": True, "n_labeled": 100, "n_unlabeled": 400, "epochs": 3,
                  "batch_size": 100, "lr_schedule": {}, "select_from": 2, "n_select": 20,
                  "n_seeds": 2},
    },
    "20news": {
        "paper": {},
        "cpu": {"max_features": 20_000, "epochs": 80, "n_seeds": 2},
        "smoke": {"max_features": 2000, "n_labeled": 100, "n_unlabeled": 600, "epochs": 3,
                  "batch_size": 300, "lr_schedule": {}, "select_from": 2, "n_select": 20,
                  "n_seeds": 2},
    },
    "memorization": {
        "paper": {},
        "cpu": {"width": 0.25, "amp": True, "n_train": 2000, "n_val": 2000, "epochs": 20},
        "smoke": {"width": 0.125, "amp": True, "n_train": 200, "n_val": 200, "epochs": 2,
                  "batch_size": 100},
    },
    "fashion_mnist": {
        "paper": {},
        "cpu": {"epochs": 30, "lr_schedule": {10: 1e-5}, "select_from": 3, "n_select": 750,
                "n_seeds": 2},
        "smoke": {"n_labeled": 100, "n_unlabeled": 600, "epochs": 3, "batch_size": 200,
                  "lr_schedule": {}, "select_from": 2, "n_select": 20, "n_seeds": 2},
    },
}

MODEL_KEYS = ("width", "dropout", "activation")
DATA_KEYS = ("n_labeled", "n_unlabeled", "n_test", "max_features", "n_train", "n_val")
#: Page-level settings that are neither training nor data options.
PAGE_KEYS = ("n_seeds", "noise_rates", "extra_positives", "snapshot_epochs", "top_k",
             "n_select_grid", "select_from_grid", "selection_ks", "prior_factors")

COMMON = {"profile": str, "device": str, "seeds": (list, type(None)), "data_dir": (str, type(None)),
          "output_dir": str}
OPT_INT = (int, type(None))

#: Each page: the data set whose settings it starts from, its extra papermill
#: parameters (None = "the profile decides") and its changes per profile.
PAGES = {
    "introduction": {"dataset": None, "parameters": {}},
    "synthetic": {"dataset": "synthetic",
                  "parameters": {"epochs": OPT_INT, "n_select": OPT_INT, "select_from": OPT_INT}},
    "formulation": {"dataset": "synthetic", "parameters": {"epochs": OPT_INT}},
    "adding_p": {"dataset": "cifar10", "parameters": {"epochs": OPT_INT, "extra_positives": OPT_INT}},
    "memorization": {"dataset": "memorization", "parameters": {"epochs": OPT_INT}},
    "histograms": {"dataset": "cifar10", "parameters": {"epochs": OPT_INT, "top_k": OPT_INT}},
    "biased_selection": {"dataset": "synthetic", "parameters": {"epochs": OPT_INT}},
    "discussion": {"dataset": "cifar10",
                   "parameters": {"dataset": (str, type(None)), "epochs": OPT_INT}},
    "prior": {"dataset": "synthetic", "parameters": {"epochs": OPT_INT}},
    "own_data": {"dataset": None,
                 "parameters": {"image_folder": (str, type(None)),
                                "positive_classes": (list, type(None)),
                                "n_labeled": OPT_INT, "epochs": OPT_INT}},
    "summary": {"dataset": None, "parameters": {}},
    "real_data": {"dataset": "cifar10",
                  "parameters": {"dataset": str, "epochs": OPT_INT, "n_select": OPT_INT,
                                 "select_from": OPT_INT, "n_unlabeled": OPT_INT}},
}

#: What a page changes on top of its data set's settings, per profile. Entries in
#: "paper" are part of the experiment's definition in the paper (e.g. 7,000 extra P).
PAGE_CHANGES: dict = {
    "formulation": {   # a short demonstration with the §4.1 model and data
        "paper": {"epochs": 300, "n_seeds": 1},
        "cpu": {"epochs": 300, "n_seeds": 1},
        "smoke": {"epochs": 10, "n_seeds": 1},
    },
    "adding_p": {
        "paper": {"extra_positives": 7000},
        "cpu": {"extra_positives": 7000, "n_unlabeled": 5000, "epochs": 10,
                "lr_schedule": {5: 5e-5, 8: 1e-5}, "n_seeds": 1},
        "smoke": {"extra_positives": 200},
    },
    "histograms": {
        "paper": {"snapshot_epochs": [10, 50, 200], "top_k": 150, "n_seeds": 1},
        "cpu": {"snapshot_epochs": [2, 5, 10], "top_k": 150, "n_unlabeled": 5000, "epochs": 10,
                "lr_schedule": {5: 5e-5, 8: 1e-5}, "n_seeds": 1},
        "smoke": {"snapshot_epochs": [1, 2, 3], "top_k": 20, "n_seeds": 1},
    },
    "biased_selection": {
        "paper": {"snapshot_epochs": [200], "selection_ks": [200, 300, 400]},
        "cpu": {"snapshot_epochs": [200], "selection_ks": [200, 300, 400], "n_seeds": 3},
        "smoke": {"snapshot_epochs": [6], "selection_ks": [200, 300, 400]},
    },
    "discussion": {
        "paper": {"n_select_grid": [40, 80, 160, 320], "select_from_grid": [20, 60]},
        "cpu": {"n_select_grid": [40, 80, 160, 320], "select_from_grid": [2, 6], "epochs": 20,
                "lr_schedule": {5: 1e-5}, "n_seeds": 1},
        "smoke": {"n_select_grid": [10, 20], "select_from_grid": [2, 3], "n_seeds": 1},
    },
}

PAGE_CHANGES["prior"] = {
    "paper": {"prior_factors": [0.8, 0.9, 1.0, 1.1, 1.2]},
    "cpu": {"prior_factors": [0.8, 1.0, 1.2], "epochs": 300, "select_from": 100, "n_seeds": 2},
    "smoke": {"prior_factors": [0.8, 1.0, 1.2]},
}

#: The P-vs-U classifier behind the prior estimates (this book's choice; not in the paper).
PRIOR_ESTIMATION = {
    "synthetic": {"paper": dict(model="mlp", epochs=20, batch_size=128),
                  "smoke": dict(model="mlp", epochs=3, batch_size=128)},
    "cifar10": {"paper": dict(model="kiryo_cnn", model_kwargs={"width": 0.25}, epochs=5,
                              batch_size=256, amp=True, n_unlabeled=10_000),
                "smoke": dict(model="kiryo_cnn", model_kwargs={"width": 0.125}, epochs=1,
                              batch_size=256, amp=True, n_unlabeled=1000)},
    "20news": {"paper": dict(model="news_mlp", epochs=10, batch_size=256, max_features=20_000),
               "smoke": dict(model="news_mlp", epochs=2, batch_size=256, max_features=2000)},
    "fashion_mnist": {"paper": dict(model="news_mlp", model_kwargs={"activation": "relu"}, epochs=5,
                                    batch_size=256),
                      "smoke": dict(model="news_mlp", model_kwargs={"activation": "relu"},
                                    epochs=1, batch_size=256, n_unlabeled=2000)},
}

#: Pages whose `cpu` profile runs another data set than the paper's (too slow here).
CPU_DATASET = {"discussion": "fashion_mnist"}

_IPYTHON_NAMES = {"In", "Out", "get_ipython", "exit", "quit", "open"}


@dataclass
class Experiment:
    """A page's resolved settings."""

    page: str
    dataset: str | None
    profile: str
    device: str
    seeds: list
    output_dir: Path
    data_dir: Path | None
    settings: dict
    changes: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)

    @property
    def name(self) -> str:
        """The page's results folder name: the page, plus the data set when it is a parameter."""
        return f"{self.page}_{self.dataset}" if "dataset" in self.params else self.page

    @property
    def results_dir(self) -> Path:
        return self.output_dir / self.name

    @property
    def paper(self) -> dict:
        """The paper's settings for this page (its data set's, plus the page's own)."""
        return {**PAPER.get(self.dataset, {}), **PAGE_CHANGES.get(self.page, {}).get("paper", {})}

    @property
    def train(self) -> dict:
        """TrainConfig fields (model settings folded into model_kwargs)."""
        cfg = {k: v for k, v in self.settings.items()
               if k not in MODEL_KEYS + DATA_KEYS + PAGE_KEYS}
        cfg["model_kwargs"] = {k: self.settings[k] for k in MODEL_KEYS if k in self.settings}
        return cfg

    @property
    def data(self) -> dict:
        """Keyword arguments for the data set's loader."""
        return {k: self.settings[k] for k in DATA_KEYS if k in self.settings}

    def config(self, method: str, seed: int, **overrides) -> TrainConfig:
        return TrainConfig(method=method, seed=seed, device=self.device, **{**self.train, **overrides})

    def describe(self) -> str:
        """Which profile ran, and every setting it changed from the paper."""
        where = f" on {self.dataset}" if self.dataset else ""
        lines = [f"page '{self.page}'{where} — profile '{self.profile}' on {self.device}, "
                 f"seeds {self.seeds}"]
        if self.dataset in NOT_IN_PAPER:
            lines.append(f"({self.dataset} is not in the paper: 'paper' settings are this book's choice)")
        if self.changes:
            lines.append("changed from the paper:")
            paper = {"dataset": PAGES[self.page]["dataset"], **self.paper}
            lines += [f"  {k} = {v!r}   (paper: {paper.get(k, 'not set')!r})"
                      for k, v in self.changes.items()]
        elif self.dataset:
            lines.append("the paper's settings, unchanged")
        return "\n".join(lines)

    def wall_time(self) -> float:
        return time.perf_counter() - self.started

    def save(self, history: pd.DataFrame, name: str | None = None, **extra) -> dict:
        """Write history.csv and summary.json under ``output_dir/page`` (or ``/name``)."""
        out = self.results_dir if name is None else self.results_dir / name
        return save_results(history, out, page=self.page, dataset=self.dataset,
                            profile=self.profile, device=self.device, seeds=self.seeds,
                            changes=self.changes, wall_seconds=round(self.wall_time(), 1), **extra)


def _check_type(name, value, expected):
    ok = isinstance(value, expected) and not (isinstance(value, bool) and expected in (int, OPT_INT))
    if not ok:
        types = expected if isinstance(expected, tuple) else (expected,)
        names = " or ".join("None" if t is type(None) else t.__name__ for t in types)
        raise TypeError(f"parameter {name}={value!r} has type {type(value).__name__}; "
                        f"expected {names} — fix the papermill -p/-y value")


PLAIN_TYPES = (type(None), bool, int, float, str, list, tuple, dict)


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


def page_parameters(page: str) -> dict:
    return {**COMMON, **PAGES[page]["parameters"]}


def resolve_page(page: str, namespace: dict) -> Experiment:
    """Validate a notebook's parameters (its ``globals()``) and resolve its experiment."""
    if page not in PAGES:
        raise ValueError(f"unknown page {page!r}: use one of {sorted(PAGES)}")
    spec = page_parameters(page)
    given = {k: namespace[k] for k in _parameter_names(namespace, COMMON) if k in namespace}
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
    dataset = (given.get("dataset") or (CPU_DATASET.get(page) if profile != "paper" else None)
               or PAGES[page]["dataset"])
    if dataset is not None and dataset not in PAPER:
        raise ValueError(f"unknown dataset {dataset!r}: use one of {sorted(PAPER)}")
    paper = {**PAPER.get(dataset, {"n_seeds": 1}), **PAGE_CHANGES.get(page, {}).get("paper", {})}
    changes = {**PROFILE_CHANGES.get(dataset, {}).get(profile, {}),
               **PAGE_CHANGES.get(page, {}).get(profile, {})}
    settings = {**paper, **changes}
    for name in PAGES[page]["parameters"]:
        if name != "dataset" and given[name] is not None:
            settings[name] = given[name]
            changes[name] = given[name]
    changes = {k: v for k, v in changes.items() if paper.get(k, object()) != v}
    if dataset != PAGES[page]["dataset"] and page != "real_data":
        changes = {"dataset": dataset, **changes}
    n_seeds = settings["n_seeds"]
    seeds = given["seeds"] if given["seeds"] is not None else list(range(n_seeds))
    if len(seeds) != paper["n_seeds"]:
        changes["n_seeds"] = len(seeds)
    data_dir = given["data_dir"] or os.environ.get("PUSUPPORT_DATA")
    params = {k: given[k] for k in PAGES[page]["parameters"]}
    params["dataset"] = dataset if "dataset" in params else None
    params = {k: v for k, v in params.items() if v is not None or k != "dataset"}
    return Experiment(page, dataset, profile, str(resolve_device(given["device"])), seeds,
                      Path(given["output_dir"]), Path(data_dir) if data_dir else None,
                      settings, changes, params)


def profile_table() -> pd.DataFrame:
    """Every data set's settings in the paper and what each profile changes."""
    rows = []
    for dataset, paper in PAPER.items():
        for profile in PROFILES:
            changed = PROFILE_CHANGES[dataset][profile]
            text = ("; ".join(f"{k}={v}" for k, v in paper.items()) if profile == "paper"
                    else ", ".join(f"{k}={v}" for k, v in changed.items()) or "—")
            rows.append({"data set": dataset, "profile": profile, "settings": text})
    return pd.DataFrame(rows).set_index(["data set", "profile"])


def run_methods(exp: Experiment, methods, make_data, **overrides) -> pd.DataFrame:
    """Train every method on every seed; ``make_data(seed)`` builds the PU data.

    ``methods`` is a list of names, or a dict mapping a label to TrainConfig overrides
    (e.g. ``{"nnpu+p": {"method": "nnpu"}}``). With several seeds, methods that
    :func:`~pusupport.vectorized.train_seeds` supports run all seeds at once (the same
    maths); the others run seed by seed. At the ``paper`` profile every run checkpoints
    under ``output_dir/<page>/checkpoints/<label>``, and re-running the page resumes.
    Returns the tidy history of all runs.
    """
    from .vectorized import NotStackable, check_stackable, train_seeds
    if not isinstance(methods, dict):
        methods = {m: {"method": m} for m in methods}
    configs = {}
    for label, spec in methods.items():
        spec = {**overrides, **spec}
        configs[label] = exp.config(spec.pop("method", label), exp.seeds[0], **spec)
        if exp.profile == "paper":          # hours-long runs: resume where a crash left them
            configs[label].checkpoint_dir = str(exp.results_dir / "checkpoints" / label)
    histories, stackable = {}, []
    if len(exp.seeds) > 1:
        sample = make_data(exp.seeds[0])
        for label, cfg in configs.items():
            try:
                check_stackable(cfg, sample)
                stackable.append(label)
            except NotStackable:                 # e.g. sparse inputs: seed by seed below
                pass
    for label in progress(stackable, desc=f"{exp.name} (all seeds at once)"):
        for result in train_seeds(make_data, exp.seeds, configs[label]):
            histories[label, result.config.seed] = result.history
    runs = [(seed, label) for seed in exp.seeds for label in configs if label not in stackable]
    data, data_seed = None, None
    for seed, label in progress(runs, desc=exp.name):
        if seed != data_seed:
            data, data_seed = make_data(seed), seed
        histories[label, seed] = train(data, dataclasses.replace(configs[label], seed=seed)).history
    return pd.concat([histories[label, seed].assign(method=label)
                      for label in configs for seed in exp.seeds], ignore_index=True)


def data_for(exp: Experiment, **changes):
    """A function seed → PUData for the page's data set (loaded once, drawn per seed).

    Raises :class:`~pusupport.datasets.DatasetNotFoundError` at once when the data
    set is neither on disk nor downloadable.
    """
    from .data import synthetic
    from .datasets import DATASETS, make_pu
    opts = {**exp.data, **changes}
    if exp.dataset == "synthetic":
        return lambda seed: synthetic(seed, **opts)
    loader, positive = DATASETS[exp.dataset]
    load_opts = {k: opts.pop(k) for k in ("max_features",) if k in opts}
    labeled = loader(data_dir=exp.data_dir, **load_opts)
    return lambda seed: make_pu(exp.dataset, labeled, positive, seed=seed, **opts)


def not_run_box(exp: Experiment, error: Exception) -> None:
    """Show a prominent 'not run' box and record the page as not run in summary.json."""
    import json
    from IPython.display import HTML, display
    from .records import atomic_write_text
    text = str(error).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    display(HTML(
        '<div class="admonition warning"><p class="admonition-title">Not run: data not available</p>'
        f"<p>This page needs the <b>{exp.dataset}</b> data set, which is not on this machine "
        "and could not be downloaded. How to get it:</p>"
        f'<pre style="white-space: pre-wrap">{text}</pre>'
        "<p>Then re-run this page (or <code>make book</code>).</p></div>"))
    atomic_write_text(exp.results_dir / "summary.json", json.dumps(
        {"status": "not run", "reason": "data not available", "page": exp.page,
         "dataset": exp.dataset, "profile": exp.profile, "methods": {}}, indent=2))


def estimate_priors(exp: Experiment, datasets=("synthetic", "cifar10", "20news", "fashion_mnist")):
    """BBE and Elkan–Noto estimates of π for each data set (its Table 1 PU problem).

    Returns a table (data set, method, estimate, interval, true π, seconds); a data
    set that is not available gets a row saying so.
    """
    from .datasets import DatasetNotFoundError
    from .prior import estimate_prior
    rows = []
    for name in progress(datasets, desc="prior estimates"):
        opts = dict(PRIOR_ESTIMATION[name]["smoke" if exp.profile == "smoke" else "paper"])
        data_opts = {k: opts.pop(k) for k in ("n_unlabeled", "max_features") if k in opts}
        page = Experiment("prior", name, exp.profile, exp.device, exp.seeds, exp.output_dir,
                          exp.data_dir, {**PAPER[name], **data_opts})
        try:
            data = data_for(page)(exp.seeds[0])
        except DatasetNotFoundError:
            rows.append({"data set": name, "method": "—", "estimate": None, "low": None,
                         "high": None, "true prior": None, "seconds": None,
                         "note": "not run: data not available"})
            continue
        x_u = data.x_u[~data.u_labeled] if data.u_labeled.any() else data.x_u
        true_prior = float((data.u_labels[~data.u_labeled] > 0).float().mean())
        for est in estimate_prior(data.x_p, x_u, seed=exp.seeds[0], device=exp.device,
                                  **opts).values():
            rows.append({"data set": name, **est.as_dict(), "true prior": true_prior, "note": ""})
    return pd.DataFrame(rows)


#: The own-data page's settings per profile (this book's choice: a ¼-width Kiryo CNN).
OWN_DATA = {
    "paper": dict(n_labeled=500, n_unlabeled=None, epochs=50,
                  estimator=dict(model="kiryo_cnn", model_kwargs={"width": 0.25}, epochs=5,
                                 batch_size=256, amp=True)),
    "cpu": dict(n_labeled=500, n_unlabeled=5000, epochs=8,
                estimator=dict(model="kiryo_cnn", model_kwargs={"width": 0.25}, epochs=3,
                               batch_size=256, amp=True)),
    "smoke": dict(n_labeled=50, n_unlabeled=300, epochs=2,
                  estimator=dict(model="kiryo_cnn", model_kwargs={"width": 0.125}, epochs=1,
                                 batch_size=128, amp=True)),
}


def own_data_settings(exp: Experiment) -> dict:
    """The own-data page's folder, positive classes, sizes and model settings."""
    from .datasets import CIFAR10_POSITIVE, data_root
    s = dict(OWN_DATA[exp.profile])
    example = exp.params.get("image_folder") is None
    s["image_folder"] = (str(data_root(exp.data_dir) / "cifar10-jpeg") if example
                         else exp.params["image_folder"])
    s["positive_classes"] = exp.params.get("positive_classes") or (CIFAR10_POSITIVE if example else None)
    if not s["positive_classes"]:
        raise ValueError("positive_classes is required with your own image_folder: "
                         "-y 'positive_classes: [name1, name2]'")
    for key in ("n_labeled", "epochs"):
        if exp.params.get(key) is not None:
            s[key] = exp.params[key]
    s["train"] = dict(model="kiryo_cnn", model_kwargs={"width": 0.25, "dropout": 0.5},
                      epochs=s["epochs"], batch_size=500, lr=1e-4, lr_schedule={},
                      weight_decay=0.017, n_select=max(1, (s["n_unlabeled"] or 50_000) // 50),
                      select_from=max(1, s["epochs"] // 4), amp=True)
    return s


def random_rows(n: int, *tensors, seed: int = 0):
    """The same ``n`` random rows of each tensor (test splits are often sorted by class)."""
    import torch
    index = torch.randperm(len(tensors[0]), generator=torch.Generator().manual_seed(seed))[:n]
    return tuple(t[index] for t in tensors)


def run_memorization(exp: Experiment) -> pd.DataFrame:
    """PN training of binary CIFAR-10 at each noise rate in ``exp.settings['noise_rates']``.

    A random sample of ``n_train`` training images (labels flipped at the noise rate)
    and a random sample of ``n_val`` test images as clean validation data.
    """
    from .data import flip_labels
    from .datasets import CIFAR10_POSITIVE, load_cifar10, make_pu
    from .training import train_supervised
    s = exp.settings
    cifar = make_pu("cifar10", load_cifar10(exp.data_dir), CIFAR10_POSITIVE, n_labeled=1,
                    n_unlabeled=s["n_train"], seed=0)
    x_val, y_val = random_rows(s["n_val"], cifar.x_test, cifar.y_test)
    runs = []
    for noise in progress(s["noise_rates"], desc="noise rates"):
        for seed in exp.seeds:
            h, _ = train_supervised(cifar.x_u, flip_labels(cifar.u_labels, noise, seed), x_val, y_val,
                                    model=s["model"], model_kwargs=exp.train["model_kwargs"],
                                    epochs=s["epochs"], batch_size=s["batch_size"], lr=s["lr"],
                                    weight_decay=s["weight_decay"], seed=seed, device=exp.device,
                                    amp=s.get("amp"))
            runs.append(h.assign(noise=noise, method=f"noise {noise:.0%}",
                                 test_error=1 - h.val_accuracy, test_auc=float("nan")))
    return pd.concat(runs, ignore_index=True)


#: The loss-histogram settings of the paper's Fig. 3: (method, loss, histogram range).
HISTOGRAM_SETTINGS = {"nnPU, sigmoid loss": ("nnpu", "sigmoid", (0.0, 1.0)),
                      "uPU, sigmoid loss": ("upu", "sigmoid", (0.0, 1.0)),
                      "nnPU, logistic loss": ("nnpu", "logistic", None)}


def run_loss_snapshots(exp: Experiment, data):
    """Train each setting of :data:`HISTOGRAM_SETTINGS` and keep U's losses at the snapshot
    epochs. Returns (panels for :func:`~pusupport.plots.loss_histograms`, history with
    the top-k purity at each snapshot)."""
    from .selection import top_k_purity
    snapshots, top_k = exp.settings["snapshot_epochs"], exp.settings["top_k"]
    panels, rows = {}, []
    for title, (method, loss, value_range) in HISTOGRAM_SETTINGS.items():
        result = train(data, exp.config(method, exp.seeds[0], loss=loss, selection_loss=loss,
                                        record_u_losses=snapshots))
        panels[title] = {"losses": result.u_losses, "range": value_range}
        h = result.history.assign(method=title)
        for epoch, losses in result.u_losses.items():
            h.loc[h.epoch == epoch, "top_k_purity"] = top_k_purity(losses, data.u_labels, top_k,
                                                                   ~data.u_labeled)
        rows.append(h)
    return panels, pd.concat(rows, ignore_index=True)


def run_prior_sensitivity(exp: Experiment, make_data, estimate: float) -> pd.DataFrame:
    """nnPU and aaPU trained with π × each of ``prior_factors`` and with ``estimate``."""
    import dataclasses
    truth = make_data(exp.seeds[0]).prior
    priors = {f"×{f:g}": truth * f for f in exp.settings["prior_factors"]}
    priors["BBE estimate"] = estimate
    runs = []
    for label, prior in priors.items():
        h = run_methods(exp, ["nnpu", "aapu"],
                        lambda seed, p=prior: dataclasses.replace(make_data(seed), prior=p))
        runs.append(h.assign(prior_label=label, prior_used=prior, prior_error=prior / truth - 1))
    return pd.concat(runs, ignore_index=True)
