"""Your own data, end to end — the steps the command line and the own-data page share:
read an image folder or a feature table, build the PU problem, give or estimate π,
pick a default model, train aaPU, save the model and predict with it.

Feature tables: ``.csv`` / ``.parquet`` with a label column (every other column is a
feature); ``.npz`` with arrays ``x`` (n, d) and ``y`` (n,) (optionally ``x_test`` and
``y_test``); ``.npy``: one 2-D array whose last column is the label. Without a test
split, a seeded 20 % of the rows is held out as the test set.
"""
from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ..core.config import ModelConfig, Settings, TrainConfig, as_model_config, merge
from ..core.problem import LabeledData, PUData, make_pu
from ..data.datasets import DatasetNotFoundError
from ..data.images import (IMAGE_EXTENSIONS, YOUR_DATA, decode_images, image_size_pair,
                           load_image_folder)
from .prior import estimate_prior
from .saved import SavedModel, save_model

TABLES = (".csv", ".parquet", ".npy", ".npz")
TEST_FRACTION = 0.2

#: Your own data (this book's choice: a ¼-width Kiryo CNN with dropout, aaPU), in the book's
#: table shape {profile: {section: settings}}; "paper" is the command line's default and the
#: base of the others. aaPU's selection (from epoch ⌊epochs/4⌋, 2 % of U an epoch) follows.
OWN_DATA = {
    "paper": {"model": dict(name="kiryo_cnn", width=0.25, dropout=0.5), "data": dict(n_labeled=500),
              "train": dict(epochs=50, batch_size=500, lr=1e-4, lr_schedule={}, weight_decay=0.017)},
    "cpu": {"data": dict(n_unlabeled=5000), "train": dict(epochs=8)},
    "smoke": {"data": dict(n_labeled=50, n_unlabeled=300), "train": dict(epochs=2)},
}
#: The P-vs-U classifier behind the BBE estimate of π for images, per profile.
_OWN_ESTIMATOR = {"model": dict(name="kiryo_cnn", width=0.25), "train": dict(epochs=10, batch_size=256, lr=1e-3)}
OWN_DATA_ESTIMATOR = {
    "paper": _OWN_ESTIMATOR,
    "cpu": _OWN_ESTIMATOR,
    "smoke": {"model": dict(name="kiryo_cnn", width=0.125), "train": dict(epochs=1, batch_size=128)},
}


@dataclass
class OwnData:
    """Labelled data read from your files, with the preprocessing a saved model keeps."""

    labeled: LabeledData
    preprocessing: dict
    source: str

    @property
    def kind(self) -> str:
        return self.preprocessing["kind"]


def _missing(path: Path, what: str, layout: list[str] | None = None) -> DatasetNotFoundError:
    root, layout = (path, layout) if layout else (path.parent, [path.name])
    return DatasetNotFoundError(f"{what} {path}", root, layout, "", "check the path", fix=YOUR_DATA)


def _separator(path: Path) -> str:
    """The CSV's separator, sniffed from its header line: a comma, semicolon, tab or bar."""
    import csv
    with open(path, newline="") as f:
        header = f.readline()
    try:
        return csv.Sniffer().sniff(header, delimiters=",;\t|").delimiter
    except csv.Error:                         # one column, or an empty file: pandas says which
        return ","


def read_table(path, label_column: str | None = None, columns=None, spelling: str = "python"):
    """(features (n, d) float32, labels or None, feature names, row ids) of a table.

    With ``columns`` (a saved model's), exactly those columns are the features; errors name
    options in the ``spelling`` of :data:`SPELLING`."""
    path = Path(path)
    if not path.is_file():
        raise _missing(path, "feature table")
    suffix = path.suffix.lower()
    if suffix not in TABLES:
        raise ValueError(f"{path}: unknown table format {suffix!r}: use one of {', '.join(TABLES)}")
    if suffix in (".npy", ".npz"):
        arrays = np.load(path)
        if suffix == ".npz":
            x, y = arrays["x"], arrays["y"] if "y" in arrays else None
        else:
            d = len(columns) if columns is not None else arrays.shape[1] - 1
            x, y = arrays[:, :d], (arrays[:, d] if arrays.shape[1] > d else None)
        frame = pd.DataFrame(np.asarray(x, dtype=np.float32).reshape(len(x), -1))
        frame.columns = [str(c) for c in frame.columns]
        labels = None if y is None else pd.Series(y)
    else:
        try:
            frame = pd.read_csv(path, sep=_separator(path)) if suffix == ".csv" else pd.read_parquet(path)
        except pd.errors.EmptyDataError:
            frame = pd.DataFrame()
        if frame.empty:
            raise ValueError(f"{path} holds no rows: give a table with a header line and one "
                             "row per example")
        labels = frame.pop(label_column) if label_column in frame.columns else None
        if columns is None and labels is None:
            raise ValueError(f"{path} has no label column {label_column!r}; its columns are "
                             f"{list(frame.columns)}: pass {SPELLING[spelling]['label_column']}")
    if labels is not None and labels.isna().any():
        rows = [int(i) + 1 for i in np.flatnonzero(labels.isna().to_numpy())]
        raise ValueError(f"{path}: the label column {label_column or 'y'!r} is empty in data row(s) "
                         f"{rows[:5]}{' …' if len(rows) > 5 else ''} (counting from 1, below the "
                         "header): give every row a label, or drop those rows")
    names = [str(c) for c in (columns if columns is not None else frame.columns)]
    lacking = [c for c in names if c not in frame.columns]
    if lacking:
        raise ValueError(f"{path} lacks the column(s) {lacking[:5]} the model was trained on: "
                         "give a table with the training columns")
    try:
        x = torch.tensor(frame[names].to_numpy(dtype=np.float32))
    except ValueError as err:
        raise ValueError(f"{path}: the feature columns must be numbers ({err}): encode or drop "
                         "the text columns") from None
    return x, labels, names, [str(i) for i in frame.index]


def _split_rows(x, labels, seed: int):
    classes = sorted({str(v) for v in labels})
    y = torch.tensor([classes.index(str(v)) for v in labels])
    perm = torch.randperm(len(x), generator=torch.Generator().manual_seed(seed))
    n_test = int(len(x) * TEST_FRACTION)
    test, train = perm[:n_test].sort().values, perm[n_test:].sort().values
    return LabeledData(x[train], y[train], x[test], y[test], classes)


def load_own(images=None, features=None, label_column: str | None = "label", image_size=None,
             skip_unreadable: bool = False, data_dir=None, seed: int = 0,
             spelling: str = "python") -> OwnData:
    """Labelled data from an image folder (train/<class>/*, test/<class>/*) or a feature table."""
    if (images is None) == (features is None):
        raise ValueError("give exactly one of an image folder (--images DIR) or a feature "
                         "table (--features FILE)")
    if images is not None:
        path = Path(images)
        if not path.is_dir():
            raise _missing(path, "image folder", ["train/<class>/*", "test/<class>/*"])
        data = load_image_folder(path, image_size, data_dir, skip_unreadable)
        c, h, w = data.x_train.shape[1:]
        return OwnData(data, {"kind": "images", "image_size": [h, w], "channels": c}, str(path))
    x, labels, names, _ = read_table(features, label_column, spelling=spelling)
    path = Path(features)
    if path.suffix.lower() == ".npz" and "x_test" in np.load(path):
        arrays = np.load(path)
        both = np.concatenate([arrays["y"], arrays["y_test"]])
        classes = sorted({str(v) for v in both})
        ys = [torch.tensor([classes.index(str(v)) for v in arrays[k]]) for k in ("y", "y_test")]
        data = LabeledData(x, ys[0], torch.tensor(arrays["x_test"], dtype=torch.float32), ys[1], classes)
    else:
        if labels is None:
            raise ValueError(f"{path}: no labels (.npz needs an array 'y')")
        data = _split_rows(x, labels, seed)
    return OwnData(data, {"kind": "features", "columns": names, "label_column": label_column},
                   str(path))


def build_problem(own: OwnData, positive, n_labeled: int | None = None, seed: int = 0,
                  n_unlabeled: int | None = None, clip: bool = False) -> PUData:
    """The PU problem (:data:`~pusupport.apps.words.U_MEANING`): ``n_labeled`` (default:
    half) of the training positives are labelled; U is every other training row, or a
    seeded sample of ``n_unlabeled`` of them; π is the positive fraction of U. With
    ``clip`` (a profile's sizes), n_labeled and n_unlabeled are capped to the data."""
    from ..core.problem import resolve_classes
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
    return make_pu(Path(own.source).name or "own data", own.labeled, positive, n_labeled,
                   seed=seed, n_unlabeled=n_unlabeled)


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
    """BBE and Elkan–Noto estimates of π from the problem's P and U (``trainer``: see
    :func:`~pusupport.apps.prior.estimate_prior`)."""
    config = config or estimator_config(tuple(data.x_u.shape))
    return estimate_prior(data.x_p, data.x_u, config, seed=seed, device=device, trainer=trainer)


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


#: How each interface spells the options a message names: the command line, and Python
#: (the own-data page's parameters and :mod:`pusupport.apps.own`'s arguments).
SPELLING = {
    "cli": {"prior": "--prior P", "epochs": "--epochs N", "lr": "--lr RATE",
            "batch_size": "--batch-size N", "estimator_epochs": "--estimator-epochs N",
            "allow": "--allow-degenerate", "label_column": "--label-column NAME"},
    "python": {"prior": "prior=…", "epochs": "epochs=…", "lr": "lr=…",
               "estimator_epochs": "more estimator epochs (estimator_config(...).epochs)",
               "allow": "the warning", "label_column": "label_column=…"},
}


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
    x = data.x_test if len(data.x_test) else data.x_u
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
    if len(data.x_test):
        truth = data.y_test.cpu() > 0
        error, positive = float(((scores > 0) != truth).float().mean()), float(truth.float().mean())
        trivial = min(positive, 1 - positive)
        if error >= trivial:
            return (f"the test error {error:.3f} is no better than calling every test point "
                    f"{'negative' if positive <= 0.5 else 'positive'} ({trivial:.3f}): {check}"
                    f"longer or faster ({longer})")
    return ""


def describe_estimate(e, spelling: str = "python") -> str:
    """One line: 'BBE: π = 0.412 (interval 0.370–0.455)', its note if any, and whether the
    interval is too wide to rely on."""
    line = f"{e.method}: π = {e.estimate:.3f} (interval {e.low:.3f}–{e.high:.3f})"
    if e.note:
        line += f" — {e.note}"
    elif e.too_wide:
        line += (f" — the interval is too wide to rely on: pass {SPELLING[spelling]['prior']} "
                 "if you know π")
    return line


def check_output(path, option: str, folder: bool = False) -> Path:
    """``path`` checked before any work, by one rule for every output: the folder that
    will hold it must exist and be writable, and the path must not be a folder where a
    file is wanted (or a file where a folder is). Anything else is a ValueError naming
    ``option`` and the fix."""
    path = Path(path)
    want = "a folder" if folder else "a file name, e.g. model.pt or predictions.csv"
    if path.exists() and path.is_dir() != folder:
        raise ValueError(f"{option} {path}: is {'a file' if folder else 'a folder'}; give {want}")
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


def train_config(n_unlabeled: int, model: ModelConfig, method: str = "aapu", epochs: int | None = None,
                 base: TrainConfig | None = None, **overrides) -> TrainConfig:
    """aaPU's settings for your data (default: the own-data page's 'paper' settings), with
    :func:`small_data`'s batch and rate for a small U, whose rate then falls tenfold for the
    last fifth of the epochs (the final model, the one saved, is then not a spike of
    high-rate noise); ``overrides`` win. It selects 2 % of U an epoch from epoch
    ⌊epochs/4⌋ (at least 1)."""
    base = base or Settings().merge(OWN_DATA["paper"]).train
    cfg = small_data(base, n_unlabeled)
    small, epochs = cfg is not base, cfg.epochs if epochs is None else epochs
    cfg = merge(cfg, {"method": method, "model": model, "epochs": epochs,
                      "n_select": max(1, n_unlabeled // 50), "select_from": max(1, epochs // 4),
                      **overrides}, "train")
    if small and not cfg.lr_schedule and "lr_schedule" not in overrides and epochs >= 5:
        cfg = replace(cfg, lr_schedule={epochs - epochs // 5: cfg.lr / 10})
    return cfg


def save(path, result, own: OwnData, data: PUData, positive) -> Path:
    """Save the trained model with its spec, preprocessing, π, class names and positive classes."""
    cfg = result.config
    from ..core.methods import get_method
    prior = data.prior if get_method(cfg.method).needs_prior else None
    return save_model(path, result.model, cfg.model, tuple(data.x_u.shape[1:]), own.preprocessing,
                      prior, cfg.method, own.labeled.classes, [str(p) for p in positive],
                      result.threshold)


def image_files(folder) -> list[Path]:
    """Every image below ``folder`` (flat or nested), sorted."""
    return sorted(p for p in Path(folder).rglob("*") if p.suffix.lower() in IMAGE_EXTENSIONS)


def read_inputs(saved: SavedModel, path, image_size=None, skip_unreadable: bool = False):
    """(inputs, ids) to predict on: images below a folder (resized to the model's size unless
    ``image_size``) or a table's rows (the model's columns)."""
    path = Path(path)
    kind = saved.preprocessing.get("kind")
    if not path.exists():
        raise _missing(path, "input")
    if path.is_dir():
        if kind != "images":
            raise ValueError(f"this model was trained on a feature table; {path} is a folder: "
                             "pass a table with the training columns")
        files = image_files(path)
        if not files:
            raise ValueError(f"{path} holds no images ({', '.join(IMAGE_EXTENSIONS)})")
        x, kept = decode_images(files, image_size_pair(image_size) or tuple(saved.input_shape[1:]),
                                skip_unreadable)
        return _channels(x, saved.input_shape[0]), [str(files[i]) for i in kept]
    if kind != "features":
        raise ValueError(f"this model was trained on images of shape {tuple(saved.input_shape)}; "
                         f"{path} is a file: pass a folder of images")
    x, _, _, ids = read_table(path, saved.preprocessing.get("label_column"),
                              saved.preprocessing["columns"])
    return x, ids


def _channels(x: torch.Tensor, channels: int) -> torch.Tensor:
    """uint8 images (n, C, H, W) with the model's channels: colour to greyscale (ITU-R 601
    luma) or greyscale repeated, as training converts a folder of mixed images."""
    from torchvision.transforms.v2.functional import rgb_to_grayscale
    if x.shape[1] == channels:
        return x
    return rgb_to_grayscale(x) if channels == 1 else x.expand(-1, channels, -1, -1).contiguous()


def predictions(saved: SavedModel, x, ids) -> pd.DataFrame:
    """One row per input: its id (file path or row id), score g(x), σ(g(x)) and label 1/0."""
    g = saved.scores(x)
    return pd.DataFrame({"id": ids, "score": g.numpy(), "probability": torch.sigmoid(g).numpy(),
                         "predicted": (g > saved.threshold).long().numpy()})
