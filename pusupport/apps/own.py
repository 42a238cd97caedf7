"""Your own data, end to end — the steps the command line and the own-data page share:
build the PU problem from data read by :mod:`~pusupport.apps.reading`, give or estimate π,
pick a default model, train aaPU, save the model and predict with it.
"""
from __future__ import annotations

import os
import warnings
from dataclasses import replace
from pathlib import Path

import pandas as pd
import torch

from ..core.config import DRY_RUN_ROWS, ModelConfig, Settings, TrainConfig, as_model_config, authors_recipe, merge
from ..core.problem import PUData, make_pu
from .prior import estimate_prior
from .reading import OwnData
from .words import SPELLING
from .saved import SavedModel, save_model

#: Your own data (this book's choice: a ¼-width Kiryo CNN with dropout, aaPU), in the book's
#: table shape {profile: {section: settings}}; "paper" is the command line's default and the
#: base of the others. aaPU's selection (from epoch ⌊epochs/4⌋, 2 % of U an epoch) follows.
OWN_DATA = {
    "paper": {"model": dict(name="kiryo_cnn", width=0.25, dropout=0.5), "data": dict(n_labeled=500),
              "train": dict(epochs=50, batch_size=500, lr=1e-4, lr_schedule={}, weight_decay=0.017)},
    "cpu": {"data": dict(n_unlabeled=5000), "train": dict(epochs=8)},
    "smoke": {"data": dict(n_labeled=50, n_unlabeled=300, n_test=1000), "train": dict(epochs=2)},
}
#: P-vs-U halvings behind an estimate of π from your data (the median of their estimates:
#: :func:`~pusupport.apps.prior.estimate_prior`). scikit-learn's digits as a folder, 150
#: labelled (5 draws of them, 160 halvings in three runs): one halving's BBE estimate has SD
#: 0.044 within a draw, 0.050 in all (within 0.03 of π in 68 of 160); the median of 4 halves
#: the first, and has SD 0.035 in all (23 of 40) — the rest is which 150 were labelled.
SPLITS = 4
#: The P-vs-U classifier behind the BBE estimate of π for images, per profile.
_OWN_ESTIMATOR = {"model": dict(name="kiryo_cnn", width=0.25), "train": dict(epochs=10, batch_size=256, lr=1e-3)}
OWN_DATA_ESTIMATOR = {
    "paper": _OWN_ESTIMATOR,
    "cpu": _OWN_ESTIMATOR,
    "smoke": {"model": dict(name="kiryo_cnn", width=0.125), "train": dict(epochs=1, batch_size=128)},
}


def build_problem(own: OwnData, positive, n_labeled: int | None = None, seed: int = 0,
                  n_unlabeled: int | None = None, clip: bool = False,
                  n_test: int | None = None) -> PUData:
    """The PU problem (:data:`~pusupport.apps.words.U_MEANING`): ``n_labeled`` (default:
    half) of the training positives are labelled; U is every other training row, or a
    seeded sample of ``n_unlabeled`` of them; π is the positive fraction of U; the test
    split whole, or ``n_test`` of its rows (one draw for every seed). With ``clip`` (a
    profile's sizes), n_labeled, n_unlabeled and n_test are capped to the data."""
    from ..core.problem import resolve_classes
    from ..data.datasets import sample_test_split
    positive = [str(p) for p in ([positive] if isinstance(positive, (str, int)) else positive)]
    pos = torch.tensor(resolve_classes(positive, own.labeled.classes))
    n_pos = int(torch.isin(own.labeled.y_train, pos).sum())
    half = max(1, n_pos // 2)
    n_labeled = half if n_labeled is None else min(n_labeled, half) if clip else n_labeled
    if n_pos and n_labeled >= n_pos:
        raise ValueError(f"{n_labeled} labelled positives would leave U without positives (the "
                         f"training rows hold {n_pos}): label at most {n_pos - 1}")
    rest = len(own.labeled.y_train) - n_labeled
    n_unlabeled = rest if n_unlabeled is None else min(n_unlabeled, rest) if clip else n_unlabeled
    return make_pu(Path(own.source).name or "own data", sample_test_split(own.labeled, n_test, clip),
                   positive, n_labeled, seed=seed, n_unlabeled=n_unlabeled)


def default_model(own_or_shape) -> ModelConfig:
    """A ¼-width Kiryo CNN (dropout 0.5) for images; an MLP for features (nnPU's ReLU
    news MLP beyond 100 features)."""
    shape = own_or_shape.labeled.x_train.shape if isinstance(own_or_shape, OwnData) else own_or_shape
    if len(shape) == 4:
        return as_model_config(OWN_DATA["paper"]["model"])
    return ModelConfig("news_mlp", activation="relu") if shape[1] > 100 else ModelConfig("mlp")


#: Small data (:func:`small_data`): the fewest rows in a mini-batch, U's rows per mini-batch
#: at most, Adam's rate, and the fewest steps the P-vs-U classifier takes.
SMALL_BATCH, ROWS_PER_BATCH, SMALL_LR, ESTIMATOR_STEPS = 16, 10, 1e-3, 300


def small_data(cfg: TrainConfig, n_rows: int, min_steps: int = 0) -> TrainConfig:
    """``cfg`` for ``n_rows`` training rows. Where the data are small (fewer than ten
    batches' worth), the batch becomes a tenth of the rows (at least 16), Adam's rate 1e-3,
    and the epochs enough for ``min_steps`` steps; larger data keep ``cfg`` as it is."""
    batch = max(SMALL_BATCH, n_rows // ROWS_PER_BATCH)
    if batch >= cfg.batch_size:
        return cfg
    steps = -(-n_rows // batch)
    return replace(cfg, batch_size=batch, lr=max(cfg.lr, SMALL_LR),
                   epochs=max(cfg.epochs, -(-min_steps // steps)))


def estimator_config(own_or_shape, profile: str = "paper", dry_run: int = 0,
                     n_rows: int | None = None) -> TrainConfig:
    """The P-vs-U classifier that estimates π: the page's CNN for images, the §4.1 MLP else
    (``dry_run``: see :class:`~pusupport.core.config.TrainConfig`). With ``n_rows`` (P and
    U), small data get :func:`small_data`'s settings for the half that trains it, and at
    least 300 steps."""
    from .prior import ESTIMATOR
    shape = own_or_shape.labeled.x_train.shape if isinstance(own_or_shape, OwnData) else own_or_shape
    if len(shape) == 4:
        cfg = replace(Settings().merge(OWN_DATA_ESTIMATOR[profile]).train, dry_run=dry_run)
    else:
        cfg = merge(Settings().merge(ESTIMATOR).train,
                    {"model": default_model(shape), "dry_run": dry_run}, "train")
    return cfg if n_rows is None else small_data(cfg, n_rows // 2, ESTIMATOR_STEPS)


def estimate(data: PUData, config: TrainConfig | None = None, seed: int = 0,
             device: str = "auto", trainer=None) -> dict:
    """BBE and Elkan–Noto estimates of π from the problem's P and U: the median over
    :data:`SPLITS` halvings, each P-vs-U classifier stopped at its best held-out epoch
    (``select_epoch``, ``splits`` and ``trainer``: see
    :func:`~pusupport.apps.prior.estimate_prior`)."""
    config = config or estimator_config(tuple(data.x_u.shape), n_rows=len(data.x_p) + len(data.x_u))
    return estimate_prior(data.x_p, data.x_u, config, seed=seed, device=device, trainer=trainer,
                          select_epoch=True, splits=SPLITS)


def check_method(method: str, prior: float | None = None, spelling: str = "python") -> str:
    """``method`` if one can train it on one's own data and ``prior`` is not given to a
    method that never reads π; else a ValueError naming the fix."""
    from ..core.methods import get_method, usable_methods
    if method not in usable_methods():
        raise ValueError(f"unknown method {method!r}: use one of {usable_methods()}")
    if prior is not None and not get_method(method).needs_prior:
        said = (f"--method {method}", "--prior") if spelling == "cli" else (f"method={method!r}", "prior=…")
        raise ValueError(f"{said[0]} never uses π: drop {said[1]}")
    return method


def choose_prior(data: PUData, prior: float | None, config: TrainConfig | None = None,
                 seed: int = 0, device: str = "auto", method: str = "aapu", trainer=None):
    """(the problem with π set, the BBE estimate or None): ``prior`` given, or BBE's; a
    ``method`` that never reads π (VPU) gets neither, and no estimator is trained
    (``trainer``: see :func:`~pusupport.apps.prior.estimate_prior`)."""
    from ..core.methods import get_method
    if not get_method(method).needs_prior:
        return data, None
    if prior is not None:
        if isinstance(prior, bool) or not isinstance(prior, (int, float)) or not 0 < prior < 1:
            raise ValueError(f"prior={prior!r}: give π, the positive fraction of U, as a number "
                             "strictly between 0 and 1 (e.g. 0.3), or None to estimate it")
        return replace(data, prior=float(prior)), None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bbe = estimate(data, config, seed, device, trainer)["BBE"]
    for w in caught:              # BBE is the estimate used: Elkan–Noto's clipping is not news
        if not str(w.message).startswith("the raw Elkan-Noto"):
            warnings.warn(w.message, w.category, stacklevel=2)
    return replace(data, prior=bbe.estimate), bbe


def estimate_problem(estimate, spelling: str = "python") -> str:
    """Why a π estimate must not be trained with (a degenerate P-vs-U classifier, or a raw
    estimate outside (0, 1)), naming the fix; "" when it is usable."""
    if estimate is None or not estimate.unusable:
        return ""
    say = SPELLING[spelling]
    return (f"the {estimate.method} estimate of π is unusable: {estimate.note} Pass {say['prior']} "
            f"if you know π, or train the P-vs-U classifier longer ({say['estimator_epochs']})")


def check_trained(result, data: PUData, spelling: str = "python") -> str:
    """Why the trained classifier is useless — degenerate on the test set (else on U), or a
    test error no better than giving every test point the majority label — naming the
    fixes in the ``spelling`` of :data:`SPELLING`; or ""."""
    from ..core.methods import get_method
    from ..core.models import predict
    from .prior import degenerate
    from ..core.runtime import resolve
    say = SPELLING[spelling]
    longer = ", ".join(say[k] for k in ("epochs", "lr", "batch_size") if k in say)
    x, truth = (data.x_test, data.y_test.cpu() > 0) if len(data.x_test) else (data.x_u, None)
    if result.config.dry_run:                      # the first rows, as the training loop scores
        x, truth = x[:DRY_RUN_ROWS], truth if truth is None else truth[:DRY_RUN_ROWS]
    device = next(result.model.parameters()).device
    scores = predict(result.model, x.to(device), amp=resolve(result.config).bf16).cpu()
    scores = scores - result.threshold                        # the method's decision rule
    problem = degenerate(scores)
    method = get_method(result.config.method)
    check = (f"check π first ({say['prior']}; this run used {data.prior:.3f}), then train "
             if method.needs_prior else f"{method.label} uses no π: train ")
    if problem:
        return (f"the trained classifier is degenerate: {problem}. {check[0].upper()}{check[1:]}"
                f"longer or faster ({longer})")
    if truth is not None:
        error, positive = float(((scores > 0) != truth).float().mean()), float(truth.float().mean())
        trivial = min(positive, 1 - positive)
        if error >= trivial:
            return (f"the test error {error:.3f} is no better than calling every test point "
                    f"{'negative' if positive <= 0.5 else 'positive'} ({trivial:.3f}): {check}"
                    f"longer or faster ({longer})")
    return ""


def describe_estimate(e, spelling: str = "python") -> str:
    """One line: 'BBE: π = 0.412 (interval 0.370–0.455; the median of 4 P-vs-U halvings)',
    its note if any, and whether the interval is too wide to rely on."""
    over = f"; the median of {e.splits} P-vs-U halvings" if e.splits > 1 else ""
    line = f"{e.method}: π = {e.estimate:.3f} (interval {e.low:.3f}–{e.high:.3f}{over})"
    if e.note:
        line += f" — {e.note}"
    elif e.too_wide:
        line += (f" — the interval is too wide to rely on: pass {SPELLING[spelling]['prior']} "
                 "if you know π")
    return line


def check_not_input(path, option: str, inputs: dict, strict: bool = False) -> None:
    """A ValueError naming ``option`` and the fix if ``path`` is one of the ``inputs``
    ({option: path} of what is read), would overwrite a file inside an input folder, or
    would add one to a folder inside it (its class folders; ``strict``: lie inside it at all,
    for a folder of outputs)."""
    path = Path(path)
    for given, source in inputs.items():
        if source is None:
            continue
        if path.resolve() == Path(source).resolve():
            raise ValueError(f"{option} {path} is also the input {given}: writing it would destroy "
                             f"that input; give {option} another path (nothing was written)")
        top = Path(source).resolve()
        if not top.is_dir() or top not in path.resolve().parents:
            continue
        parent = path.resolve().parent
        if path.exists() or strict or (parent != top and parent.is_dir()):
            harm = "overwrite a file of" if path.exists() and not path.is_dir() else "add files to"
            raise ValueError(f"{option} {path} lies inside the input {given} {source}: writing it would "
                             f"{harm} your data; give {option} a path outside that folder (nothing was written)")


def check_output(path, option: str, folder: bool = False, inputs: dict | None = None,
                 outputs: dict | None = None) -> Path:
    """``path`` checked before any work, by one rule for every output: it is no input and
    writes into no input folder's data (:func:`check_not_input`; ``inputs``: {option: path}
    of what the command reads), it is not where another output goes (``outputs``, likewise),
    the folder that will hold it must exist and be writable, and the
    path must not be a folder where a file is wanted (or a file where a folder is). Anything
    else is a ValueError naming ``option`` and the fix."""
    path = Path(path)
    want = "a folder" if folder else "a file name, e.g. model.pt or predictions.csv"
    if path.exists() and path.is_dir() != folder:
        raise ValueError(f"{option} {path}: is {'a file' if folder else 'a folder'}; give {want}")
    for other, there in (outputs or {}).items():
        if path.absolute() == Path(there).absolute():
            raise ValueError(f"{option} {path} is also where {other} is written: one would overwrite "
                             f"the other; give {option} another path (nothing was written)")
    check_not_input(path, option, inputs or {})
    parent = path.absolute().parent
    if not parent.is_dir():
        raise ValueError(f"{option} {path}: the folder {parent} does not exist; create it first "
                         f"(mkdir -p {parent})")
    try:
        probe = parent / f".pusupport-write-test-{os.getpid()}"
        probe.touch()
        probe.unlink()
    except OSError as err:
        raise ValueError(f"{option} {path}: cannot write in {parent} ({err.strerror or err}); "
                         "give a path in a folder you can write") from None
    return path


#: Adam's rate on your data for a method whose authors train at another than aaPU's, and
#: whose loss drifts at aaPU's. VPU (HC-Feynman/vpu run.py: 3e-5): its loss does not change
#: when a constant is added to every log φ, and at 1e-3 the scores drift down together —
#: scikit-learn's digits as a table (150 labelled), every pool point called negative, the run
#: refused; as a folder, pool ROC AUC 0.885 with 1 of 1,647 called positive. At 3e-5: 0.976
#: and 0.945.
OWN_RATE = {"vpu": 3e-5}


def train_config(n_unlabeled: int, model: ModelConfig, method: str = "aapu", epochs: int | None = None,
                 base: TrainConfig | None = None, **overrides) -> TrainConfig:
    """aaPU's settings for your data (default: the own-data page's 'paper' settings), with
    :func:`small_data`'s batch and rate for a small U (a method of :data:`OWN_RATE`: its
    rate), whose rate then falls tenfold for the last fifth of the epochs (the final model,
    the one saved, is then not a spike of high-rate noise); ``overrides`` win. It selects
    2 % of U an epoch from epoch ⌊epochs/4⌋ (at least 1)."""
    base = base or Settings().merge(OWN_DATA["paper"]).train
    cfg = small_data(base, n_unlabeled)
    small, epochs = cfg is not base, cfg.epochs if epochs is None else epochs
    cfg = merge(cfg, {"method": method, "model": model, "epochs": epochs,
                      **({"lr": OWN_RATE[method]} if method in OWN_RATE else {}),
                      "n_select": max(1, n_unlabeled // 50), "select_from": max(1, epochs // 4),
                      **overrides}, "train")
    if small and not cfg.lr_schedule and "lr_schedule" not in overrides and epochs >= 5:
        cfg = replace(cfg, lr_schedule={epochs - epochs // 5: cfg.lr / 10})
    return authors_recipe(cfg)


#: The PU split a recipe that stops early reads, held out of training: a twelfth of P and
#: of U (VPU's protocol; the book's standing page holds out the same).
STOP_SPLIT = 1 / 12


def fit(data: PUData, cfg: TrainConfig, trainer=None):
    """Train ``cfg`` on ``data`` (``trainer``: e.g. a page's run store; default
    :func:`~pusupport.core.training.train`). A method whose recipe stops early
    (:attr:`~pusupport.core.methods.Method.stop`, Robust-PU's patience) reads its criterion
    on a PU split held out of training (:data:`STOP_SPLIT`), and the model it keeps is the
    one at its stop: trained again, on the same data and seed, to that epoch. Returns (the
    RunResult, a sentence saying where it stopped, or "")."""
    from ..core.evaluation import at_own_choice
    from ..core.methods import get_method
    from ..core.problem import hold_out
    from ..core.training import train
    trainer, method = trainer or train, get_method(cfg.method)
    if not method.stop:
        return trainer(data, cfg), ""
    held = hold_out(data, STOP_SPLIT, cfg.seed)
    whole = trainer(held, cfg)
    chosen = at_own_choice(whole.history)
    if chosen.empty:
        raise ValueError(f"{method.label}'s early stop read no criterion on the held-out split: "
                         f"train more than its warm-up of {cfg.select_from - 1} epochs")
    stop, last = int(chosen.epoch.iloc[0]), int(whole.history.epoch.max())
    kept = whole if stop == last else trainer(held, replace(cfg, epochs=stop))
    return kept, (f"{method.label} stops early on a PU split held out of training ({len(held.x_val_p)} "
                  f"labelled, {len(held.x_val_u)} unlabelled): its criterion was lowest after epoch "
                  f"{stop} of the {last} trained, and that model is kept"
                  + ("" if stop == last else f" (trained again to epoch {stop}, same data and seed)"))


def save(path, result, own, data: PUData, positive) -> Path:
    """Save the trained model with its spec, preprocessing, π, class names and positive
    classes (``own``: what was read, an :class:`OwnData` or a
    :class:`~pusupport.apps.pu_data.PUSource`)."""
    cfg = result.config
    from ..core.methods import get_method
    prior = data.prior if get_method(cfg.method).needs_prior else None
    return save_model(path, result.model, cfg.model, tuple(data.x_u.shape[1:]), own.preprocessing,
                      prior, cfg.method, own.classes, [str(p) for p in positive], result.threshold)


def predictions(saved: SavedModel, x, ids) -> pd.DataFrame:
    """One row per input: its id (file path or row id), score g(x), σ(g(x)) and label 1/0."""
    g = saved.scores(x)
    return pd.DataFrame({"id": ids, "score": g.numpy(), "probability": torch.sigmoid(g).numpy(),
                         "predicted": (g > saved.threshold).long().numpy()})


def ties(table: pd.DataFrame) -> str:
    """A warning where the model gives many pool rows one and the same score — then their
    order in the ranking is their ids', not the model's (a ReLU network can map a whole region
    to one output: a user's digits folder had 325 of 1,116 pool images at its top score) — or ""."""
    counts = table.score.value_counts()
    if counts.empty or counts.iloc[0] < max(10, 0.01 * len(table)):
        return ""
    where = int((table.score > counts.index[0]).sum())
    return (f"{counts.iloc[0]} of {len(table)} pool rows share one score ({counts.index[0]:.4g}, ranks "
            f"{where + 1}–{where + counts.iloc[0]}): the model tells them apart no further, so their "
            "order in the ranking is by id; another model or more epochs may separate them")


def ranking(saved: SavedModel, x_u, ids) -> pd.DataFrame:
    """The unlabelled pool ranked by score, most positive first: :func:`predictions` with
    ``rank`` (1 = the highest score) in front."""
    table = predictions(saved, x_u, ids).sort_values("score", ascending=False, kind="stable")
    return table.assign(rank=range(1, len(table) + 1))[["rank", "id", "score", "probability", "predicted"]]
