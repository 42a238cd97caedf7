"""A book page's resolved settings: what runs, what the paper ran, and every difference.

:func:`~pusupport.book.pages.resolve_page` makes a :class:`Page` from a notebook's
parameters. The page resolves its runs into a :class:`~pusupport.book.plan.Plan` once
(:meth:`Page.resolved`), which the executor trains (:meth:`Page.run`) and the cost model
prices, and gives the verdicts on its claims.
"""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd
import torch

from ..core import identity
from ..core.config import DRY_RUN_ROWS, DRY_RUN_STEP_ROWS, Settings, TrainConfig, merge
from ..core.methods import get_method
from ..core.runtime import resolve
from ..core.training import RunResult
from ..data.sizes import SIZES
from .claims import judge_claims, verdict_text
from .cost import price
from .experiment import Experiment
from .paper import NOT_IN_PAPER, PAPER
from .plan import KEPT, Plan, Planned, RunSpec, as_trained
from .records import save_results, shown_path
from .reference import fingerprint
from .runs import Executed, execute
from .sources import data_for, with_prior
from .store import RunStore, checking, committed_runs


#: Settings that do not change a run's numbers (where it runs, what it saves).
NOT_RESULTS = {f"train.{k}" for k in identity.NOT_RESULTS}
#: Settings added after results were committed, with the value every earlier result had:
#: left out of a fingerprint while at it, so that adding one leaves those results current.
ADDED_LATER = {"page.compared": None, "train.correction": "kiryo", "train.method_settings": {},
               "data.validation": None}


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
    families: dict = field(default_factory=dict)
    explicit: dict = field(default_factory=dict)    # the settings (and choices its plan reads) given
    sources: list = field(default_factory=list)     # (run label, who trained it: None = now)
    committed: Path | None = None    # committed runs it reads (None: its profile's, committed_runs)
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
        return self.experiment.specs(self.settings, self.explicit)

    def config(self, spec: RunSpec, seed: int | None = None) -> TrainConfig:
        """The TrainConfig of the run ``spec`` on ``seed`` (default: the first)."""
        return spec.train(self._base(seed))

    def data(self, **changes):
        """A function seed → PUData for the page's data set (``changes``: data settings
        for this call, e.g. ``n_labeled=8000``), loaded once and drawn per seed."""
        return data_for(self.dataset, self.settings.data, self.data_dir, **changes)

    def resolved(self, specs: list[RunSpec] | None = None, make_data=None) -> Plan:
        """The plan of ``specs`` (default: the page's) resolved once: each run's settings on
        the page's seeds, checkpointing under ``<results>/checkpoints/[<group>/]<label>``
        where the page checkpoints; its data (``make_data``: the page's, default
        :meth:`data`, with each run's data changes and π); laid out as this device trains
        fastest (:func:`~pusupport.book.plan.layout`)."""
        trained, shown = as_trained(self.plan() if specs is None else specs)
        s = replace(self.settings, train=self._base(None))
        bases, runs = {}, []
        for spec in trained:
            run = self.experiment.planned(spec, s, self.dataset, self.seeds)
            changes = spec.changes.get("data", {})
            if run.data not in bases:
                bases[run.data] = make_data if make_data is not None and not changes else self.data(**changes)
            cfg = run.cfg
            if self.checkpoints:             # hours-long runs: resume where a crash left them
                folder = self.results_dir / "checkpoints" / (spec.group or "") / spec.label
                cfg = replace(cfg, checkpoint_dir=str(folder))
            runs.append(replace(run, cfg=cfg, make=with_prior(bases[run.data], spec.prior)))
        return Plan.of(runs, shown, self.seeds, torch.device(self.device).type)

    def run(self, specs: list[RunSpec] | None = None, make_data=None, train: bool = True) -> pd.DataFrame:
        """Train ``specs`` (default: the whole plan) on every seed (:meth:`resolved`); the
        tidy history. A run the output folder's run store holds is read, not trained again;
        ``train=False``: none is trained (:class:`~pusupport.book.runs.NotHeld`)."""
        return self._execute(self.resolved(specs, make_data), train).history

    def results(self, specs: list[RunSpec], make_data=None) -> dict:
        """``{(label, seed): RunResult}`` of the runs of ``specs`` that keep more than their
        history (:attr:`~pusupport.book.plan.RunSpec.keeps`), trained or read as :meth:`run`."""
        return self._execute(self.resolved(specs, make_data)).kept

    def train(self, data, cfg: TrainConfig, keeps: tuple = KEPT):
        """One run, ``cfg`` on ``data``, for a driver that reads its result
        (:class:`~pusupport.core.training.RunResult`): a plan of one run, trained or read as
        :meth:`run`. ``keeps``: what of it beside the history the store keeps and the result
        holds (default: all; ``()``: a probe whose history alone is read, e.g. for the epoch
        to stop at)."""
        run = Planned(cfg.method, cfg, (cfg.seed,), (data.name,), make=lambda seed: data,
                      stacks=False, keeps=keeps)
        plan = Plan.of([run], {run.label: (run.label, None)}, [cfg.seed], torch.device(self.device).type)
        done = self._execute(plan)
        return done.kept[run.label, cfg.seed] if keeps else RunResult(done.history, None, None, cfg)

    def store(self) -> RunStore:
        """The run store it trains into and reads from."""
        return RunStore(self.output_dir / "runs", self.name, self.committed or committed_runs(self.profile),
                        again=self.committed is None and checking())   # a record is not checked

    def _execute(self, plan: Plan, train: bool = True) -> Executed:
        store = None if self.settings.train.dry_run else self.store()
        done = execute(plan, store, self.runner, desc=self.name, train=train, said=frozenset(self.sources))
        self.sources += done.sources.items()
        return done

    def where_from(self) -> str:
        """Where the page's numbers come from — trained here now, or read and trained by
        whom (another page, an earlier build, the book's committed runs) — and its wall time."""
        lines, read = [], {}
        for label, trainer in self.sources:
            read.setdefault(trainer, []).append(label)
        if None in read:
            lines.append(f"trained here, now: {_runs(read.pop(None))}")
        lines += [f"read, not trained: {_runs(labels)}, trained by {trainer}" for trainer, labels in read.items()]
        return "\n".join([*lines, f"page wall time: {self.wall_time():.0f} s"])

    def claims(self) -> list[tuple]:
        """(claim, results folder) of this page's claims."""
        return [(c, self.name) for c in self.experiment.claims
                if self.experiment.folder(c.dataset) == self.name]

    def verdict(self) -> str:
        """Markdown: this page's claims, what was measured and the verdicts — judged as the
        summary judges them (the same family adjustment and floor)."""
        return verdict_text(self.output_dir, self.claims(), self.families)

    def judged(self) -> list[tuple]:
        """(claim, Judged) of this page's comparative claims, judged as :meth:`verdict`
        judges them (the paired-differences figure's input; empty in a dry run)."""
        claims = self.claims()
        return [(c.claim, o.judged) for (c, _), (_, o) in
                zip(claims, judge_claims(self.output_dir, claims, self.families)) if o.judged]

    def identity(self, seeds: bool = True) -> dict:
        """What shapes the page's numbers: its folder, data set, every setting that shapes a
        result and (``seeds``) its seeds; without them, what runs on any seed must share."""
        flat = {k: v for k, v in self.settings.flat().items()
                if k not in NOT_RESULTS and not (k in ADDED_LATER and v == ADDED_LATER[k])}
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
                         f"schedule, on the first {DRY_RUN_STEP_ROWS} rows of a batch drawn at "
                         f"the paper's size; selection and evaluation score the first "
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
            notes.append(self._paper_cost())
        if self.dataset == "synthetic":
            notes.append("π = 0.4387, the generating process's P(x₂ > sin x₁) (the paper states "
                         "0.4412, the positive fraction of its own sample)")
        if self.settings.data.n_unlabeled is not None and self.dataset in PAPER and \
                self.paper.data.n_unlabeled is None:
            notes.append("U is a random sample disjoint from the labelled P (the paper's U is the "
                         "whole training set, P included), so π is that sample's positive "
                         "fraction")
        return notes

    def _paper_cost(self) -> str:
        """What the plan costs at the paper's settings with this page's parameters, or why it
        is not priced (a parameter given for a short profile, e.g. epochs=8, can leave the
        paper's settings invalid: its first selection at epoch 200)."""
        try:
            return price(self.experiment.runs(self.params.get("dataset"), parameters=self.explicit)).describe()
        except ValueError as error:
            given = ", ".join(f"{k}={v}" for k, v in self.explicit.items())
            return f"cost at paper: not priced, since with {given} the paper's settings are invalid ({error})"

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


def _runs(labels: list) -> str:
    """Run labels as a page lists them: a few named, a label run more than once counted
    ("pn × 4; aapu"), many counted as runs."""
    counts = Counter(labels)
    return ("; ".join(label if n == 1 else f"{label} × {n}" for label, n in counts.items())
            if len(counts) <= 4 else f"{len(labels)} runs")


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
