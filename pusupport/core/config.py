"""Typed settings: the model, one training run, the data, and a page — and one merge.

Every table of settings (the paper's, each profile's changes, a page's changes,
papermill parameters, keyword overrides) reaches a run through :func:`merge`, which
rejects a key its section does not have and names the section's valid keys.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field, fields, replace

from .losses import LOSSES
from .methods import METHODS, get_method
from .models import MODELS
from .page_settings import PageConfig
from .risks import CORRECTIONS, S_WEIGHTS
from .runtime import AUTOCAST, DROPOUT_STREAMS, GENERATORS


class ConfigError(ValueError):
    """A setting that does not exist or does not belong where it was given."""


def _need(ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(message)


def _is_int(value, low: int = 0) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= low


@dataclass(frozen=True)
class ModelConfig:
    """The classifier g: a model of :data:`~pusupport.core.models.MODELS` and its options.

    ``width`` scales every hidden size (1.0 = the published network). ``dropout`` and
    ``activation`` are passed only to models that take them (None: the model's default).
    """

    name: str = "mlp"
    width: float = 1.0
    dropout: float | None = None
    activation: str | None = None

    def __post_init__(self):
        _need(self.name in MODELS, f"unknown model {self.name!r}: use one of {sorted(MODELS)}")
        _need(isinstance(self.width, (int, float)) and self.width > 0,
              f"width must be a number > 0, got {self.width!r}")
        takes = inspect.signature(MODELS[self.name]).parameters
        for option in ("dropout", "activation"):
            _need(getattr(self, option) is None or option in takes,
                  f"model {self.name!r} has no {option} option: leave {option} unset")
        _need(self.dropout is None or 0 <= self.dropout < 1,
              f"dropout must be in [0, 1), got {self.dropout!r}")

    def kwargs(self) -> dict:
        """Constructor arguments of the model (unset options left to its defaults)."""
        return {f.name: getattr(self, f.name) for f in fields(self)[1:]
                if getattr(self, f.name) is not None}


def as_model_config(model) -> ModelConfig:
    """A :class:`ModelConfig` from a config, a model name or a dict of its fields."""
    if isinstance(model, ModelConfig):
        return model
    if isinstance(model, str):
        return ModelConfig(model)
    if isinstance(model, dict):
        return merge(ModelConfig(), model, "model")
    raise ConfigError(f"model must be a name, a dict or a ModelConfig, got {model!r}")


@dataclass(frozen=True)
class TrainConfig:
    """One training run (defaults: the paper's §4.1).

    lr_schedule maps an epoch e to the learning rate used *after* it: {100: 1e-5}
    trains epochs 1–100 at ``lr`` and 101+ at 1e-5 (PyTorch MultiStepLR semantics).
    ``eval_every``: test metrics after every k-th epoch and the last (NaN in between);
    0 = the last epoch only (for results that report final numbers).
    With ``checkpoint_dir`` set, the run saves a checkpoint every ``checkpoint_every``
    epochs and at its end, and calling it again resumes from the last one.
    ``compile`` runs the training forward pass through ``torch.compile``.
    ``correction``: aaPU's and nnPU's max(0, ·) as Kiryo et al.'s step ("kiryo") or as a
    plain clamp ("clamp"; :func:`~pusupport.core.risks.aapu_risk`).
    ``method_settings``: changes to the method's own settings (:attr:`Method.settings`,
    e.g. {"lam": 0.3} for VPU), read as :attr:`own`.
    ``dry_run`` = n > 0 proves these settings without training: n epochs of the schedule
    are visited (see :meth:`visited_epochs`), each with one optimisation step on the first
    :data:`DRY_RUN_STEP_ROWS` rows of a batch drawn at ``batch_size``, and selection and
    evaluation score the first :data:`DRY_RUN_ROWS` rows of U and the test set.
    ``autocast``, ``channels_last``, ``generators``, ``dropout_streams`` and ``compile``
    are the device-conditional choices (:mod:`pusupport.core.runtime`: "auto"/None = the
    device's default).
    """

    method: str = "aapu"
    model: ModelConfig = field(default_factory=ModelConfig)
    loss: str = "logistic"
    epochs: int = 1000
    batch_size: int = 128
    lr: float = 1e-4
    lr_schedule: dict = field(default_factory=lambda: {100: 1e-5})
    weight_decay: float = 0.05
    beta: float = 0.0
    gamma: float = 1.0
    n_select: int = 1
    select_from: int = 200
    selection_loss: str = "logistic"
    allow_repick: bool = True
    s_weight: str = "labeled"
    correction: str = "kiryo"
    method_settings: dict = field(default_factory=dict)
    seed: int = 0
    device: str = "auto"
    autocast: str = "auto"
    channels_last: bool | None = None
    generators: str = "auto"
    dropout_streams: str = "auto"
    eval_batch_size: int = 4096
    eval_every: int = 1
    compile: bool = False
    record_u_losses: tuple = ()
    checkpoint_dir: str | None = None
    checkpoint_every: int = 10
    progress: bool = True
    dry_run: int = 0

    def __post_init__(self):
        get_method(self.method)
        object.__setattr__(self, "model", as_model_config(self.model))
        for name in ("loss", "selection_loss"):
            _need(getattr(self, name) in LOSSES,
                  f"unknown {name} {getattr(self, name)!r}: use one of {sorted(LOSSES)}")
        for name, low in (("epochs", 1), ("batch_size", 1), ("eval_every", 0), ("dry_run", 0),
                          ("checkpoint_every", 1), ("n_select", 0), ("eval_batch_size", 1)):
            _need(_is_int(getattr(self, name), low),
                  f"{name} must be an int >= {low}, got {getattr(self, name)!r}")
        _need(self.lr > 0 and self.weight_decay >= 0, "lr must be > 0 and weight_decay >= 0")
        _need(self.beta >= 0, f"beta must be >= 0, got {self.beta} (nnPU uses beta=0)")
        _need(0 < self.gamma <= 1, f"gamma must be in (0, 1], got {self.gamma} (nnPU uses gamma=1)")
        for name in ("compile", "allow_repick", "progress"):
            _need(isinstance(getattr(self, name), bool),
                  f"{name} must be True or False, got {getattr(self, name)!r}")
        _need(self.correction == "kiryo" or self.method in ("aapu", "nnpu"),
              f"correction={self.correction!r} is a reading of aaPU's and nnPU's max(0, ·): "
              f"{self.method} keeps its authors' rule; use correction='kiryo'")
        for name, allowed in (("s_weight", S_WEIGHTS), ("correction", CORRECTIONS),
                              ("autocast", AUTOCAST), ("generators", GENERATORS),
                              ("dropout_streams", DROPOUT_STREAMS)):
            _need(getattr(self, name) in allowed,
                  f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        _need(self.channels_last in (None, True, False),
              f"channels_last must be True, False or None (the device's default), "
              f"got {self.channels_last!r}")
        if METHODS[self.method].selects:
            _need(_is_int(self.select_from, 1) and self.select_from <= self.epochs,
                  f"select_from={self.select_from} is outside epochs 1..{self.epochs}: "
                  f"{self.method} would never select; lower select_from or raise epochs")
        own = METHODS[self.method].settings
        _need(isinstance(self.method_settings, dict) and (own is not None or not self.method_settings),
              f"method_settings={self.method_settings!r}: {self.method} has no settings of its "
              "own; leave method_settings empty")
        object.__setattr__(self, "method_settings", dict(sorted(self.method_settings.items())))
        object.__setattr__(self, "_own", None if own is None else
                           merge(own(), self.method_settings, f"{self.method} method_settings"))
        object.__setattr__(self, "lr_schedule",
                           {int(k): float(v) for k, v in self.lr_schedule.items()})
        object.__setattr__(self, "record_u_losses", tuple(int(e) for e in self.record_u_losses))

    @property
    def own(self):
        """The method's own settings (:attr:`Method.settings`, with ``method_settings``), or None."""
        return self._own

    def lr_at(self, epoch: int) -> float:
        """Learning rate used during (1-indexed) ``epoch``."""
        lr = self.lr
        for milestone in sorted(self.lr_schedule):
            if epoch > milestone:
                lr = self.lr_schedule[milestone]
        return lr

    def steps_in(self, epoch: int) -> int | None:
        """Optimisation steps in ``epoch``: all (None) — in a dry run one in each of its
        first ``dry_run`` landmarks (the first selecting epoch, or the first of a method's
        second stage; the last; the first) and
        none in the epochs visited only to record U's losses."""
        if not self.dry_run:
            return None
        method = METHODS[self.method]
        start = (self.select_from if method.selects and self.n_select else
                 method.second_stage(self) if method.second_stage else 1)
        return int(epoch in list(dict.fromkeys([start, self.epochs, 1]))[:self.dry_run])

    def visited_epochs(self, first: int = 1) -> list[int]:
        """The epochs the loop runs from ``first`` on: all of them, or in a dry run the
        landmarks of :meth:`steps_in` and the epochs whose U losses are recorded."""
        epochs = range(first, self.epochs + 1)
        if not self.dry_run:
            return list(epochs)
        return [e for e in epochs if self.steps_in(e) or e in self.record_u_losses]

    def selects_at(self, epoch: int) -> bool:
        """Whether S grows after ``epoch`` (a selecting method, from ``select_from`` on)."""
        return METHODS[self.method].selects and self.n_select > 0 and epoch >= self.select_from

    def evaluates_at(self, epoch: int) -> bool:
        """Whether the test set is scored after ``epoch`` (a dry run: its last epoch only)."""
        if self.dry_run:
            return epoch == self.visited_epochs()[-1]
        return epoch == self.epochs or (self.eval_every > 0 and epoch % self.eval_every == 0)


@dataclass(frozen=True)
class DataConfig:
    """Sizes of a PU problem and the loader's options (None: the data set's default)."""

    n_labeled: int | None = None      # labelled positives, drawn from the training positives
    n_unlabeled: int | None = None    # U: None = the whole training set (the paper's protocol)
    n_test: int | None = None         # test points: the synthetic problem draws them; a real
                                      # data set's test split is sampled to this many
    max_features: int | None = None   # 20News: keep the most frequent words only
    n_train: int | None = None        # PN pages: training images
    n_val: int | None = None          # PN pages: clean validation images
    validation: float | None = None   # a fraction of P and U held out as a PU validation split

    def __post_init__(self):
        _need(self.validation is None or (isinstance(self.validation, float) and 0 < self.validation < 0.5),
              f"validation must be a fraction of P and U between 0 and 0.5 (VPU's protocol: 1/12) "
              f"or None, got {self.validation!r}")
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "validation":
                continue
            _need(value is None or _is_int(value, 1), f"{f.name} must be an int >= 1 or None, "
                                                      f"got {value!r}")

    def kwargs(self, *names) -> dict:
        """The set values (all of them, or those in ``names``)."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if getattr(self, f.name) is not None and (not names or f.name in names)}


#: Rows of U and of the test set a dry run scores.
DRY_RUN_ROWS = 64
#: Rows of each paper-sized mini-batch a dry run's step takes (P, U and S in the batch's
#: proportions, at least one of P and of U): the batch is drawn at the paper's size, then cut.
DRY_RUN_STEP_ROWS = 32

SECTIONS = {"data": DataConfig, "model": ModelConfig, "train": TrainConfig, "page": PageConfig}


def section_of(key: str) -> list[str]:
    """The sections that have a setting called ``key``."""
    return [name for name, cls in SECTIONS.items() if key in {f.name for f in fields(cls)}]


def authors_recipe(cfg: TrainConfig) -> TrainConfig:
    """``cfg`` as its method's authors' recipe trains it (:attr:`Method.recipe`, e.g.
    Robust-PU's largest number of weighted epochs); unchanged for a method without one."""
    recipe = METHODS[cfg.method].recipe
    return recipe(cfg) if recipe else cfg


def merge(config, changes: dict, section: str):
    """``config`` (a settings dataclass) with ``changes``; an unknown key is an error that
    names the valid keys of ``section`` (and the section a misplaced key belongs in)."""
    valid = [f.name for f in fields(config)]
    unknown = [k for k in changes if k not in valid]
    if unknown:
        homes = {k: section_of(k) for k in unknown}
        hint = "".join(f"; {k} belongs in section {h[0]!r}" for k, h in homes.items() if h)
        raise ConfigError(f"unknown {section} setting(s) {unknown}{hint}. "
                          f"The valid {section} keys are {valid}")
    return replace(config, **changes)


@dataclass(frozen=True)
class Settings:
    """A page's settings: data, model, training and page sections."""

    data: DataConfig = field(default_factory=DataConfig)
    train: TrainConfig = field(default_factory=lambda: TrainConfig(method="nnpu"))
    page: PageConfig = field(default_factory=PageConfig)

    @property
    def model(self) -> ModelConfig:
        return self.train.model

    def merge(self, changes: dict) -> "Settings":
        """These settings with a sectioned table of changes {"train": {...}, "model": {...}}."""
        unknown = sorted(set(changes) - set(SECTIONS))
        if unknown:
            raise ConfigError(f"unknown section(s) {unknown}: the sections are {list(SECTIONS)}")
        out = self
        for name, values in changes.items():
            if name == "model":
                out = replace(out, train=replace(out.train, model=merge(out.model, values, "model")))
            else:
                out = replace(out, **{name: merge(getattr(out, name), values, name)})
        return out

    def flat(self) -> dict:
        """Every setting as ``{"section.key": value}``."""
        out = {}
        for name in SECTIONS:
            config = self.model if name == "model" else getattr(self, name)
            out.update({f"{name}.{f.name}": getattr(config, f.name) for f in fields(config)
                        if not (name == "train" and f.name == "model")})
        return out


def sectioned(values: dict) -> dict:
    """Flat settings {key: value} (e.g. papermill parameters) as a sectioned table; a key
    no section has is an error naming every valid key."""
    out: dict = {}
    for key, value in values.items():
        homes = [h for h in section_of(key) if not (h == "train" and key == "model")]
        if not homes:
            valid = sorted({f.name for c in SECTIONS.values() for f in fields(c)})
            raise ConfigError(f"unknown setting {key!r}: the valid settings are {valid}")
        out.setdefault(homes[0], {})[key] = value
    return out
