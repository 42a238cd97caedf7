"""Your PU data as it comes: labelled positives and an unlabelled pool.

A folder ``DIR/labeled/*`` beside ``DIR/unlabeled/*`` (nested sub-folders are read too;
an optional labelled ``DIR/test/<class>/*`` is a test split), or a table whose label column
marks the labelled positives — 1/0, 1/−1, True/False, or two names of which you say which.
π is never read from these labels: it is given, or estimated from P and U
(:func:`pusupport.apps.own.choose_prior`). To judge a method on fully labelled data, simulate
PU from it instead (:func:`pusupport.apps.own.build_problem`, the command line's ``--positive``).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ..core.problem import PUData, as_features, check_finite
from .reading import _channels, _missing, image_files, read_table
from .words import LABELED_FOLDERS, UNLABELED_FOLDERS, few

#: Label values recognised as marking the labelled positives, and the unlabelled rows.
LABELED_MARKS = ("1", "true", "labeled", "labelled", "positive")
UNLABELED_MARKS = ("0", "-1", "false", "unlabeled", "unlabelled", "unknown")
#: What a model trained on PU data calls its two outputs.
CLASSES = ["negative", "positive"]


@dataclass
class PUSource:
    """PU data read from your files: labelled positives ``x_p``, the pool ``x_u`` with an
    id per row (``u_ids``: file paths or table rows), an optional labelled test split
    (``y_test`` ±1; empty without one), and the preprocessing a saved model keeps."""

    x_p: torch.Tensor
    x_u: torch.Tensor
    u_ids: list
    x_test: torch.Tensor
    y_test: torch.Tensor
    preprocessing: dict
    source: str
    classes = CLASSES
    held_out = False            # a test split is yours or none: no rows are held out of a PU pool

    @property
    def kind(self) -> str:
        return self.preprocessing["kind"]

    def problem(self, prior: float = 0.5) -> PUData:
        """The PU problem, π a placeholder until given or estimated; no U label is known."""
        n_u = len(self.x_u)
        return PUData(Path(self.source).name or "own data", self.x_p, self.x_u,
                      torch.zeros(n_u, dtype=torch.long), torch.zeros(n_u, dtype=torch.bool),
                      self.x_test, self.y_test, prior)


def _folder(root: Path, given: str | None, names: tuple, what: str, option: str) -> Path:
    children = {d.name.lower(): d for d in root.iterdir() if d.is_dir()}
    if given is not None:
        if given.lower() not in children:
            raise ValueError(f"{option} {given}: {root} has no such folder (its folders: "
                             f"{sorted(d.name for d in children.values())})")
        return children[given.lower()]
    found = [children[n] for n in names if n in children]
    if len(found) != 1:
        said = (f"{len(found)} folders for the {what} ({' and '.join(f.name for f in found)})" if found
                else f"no folder for the {what}")
        raise ValueError(f"{root}: found {said}; recognised names: {', '.join(names)}; its folders: "
                         f"{sorted(d.name for d in children.values())}: name yours with {option} NAME")
    return found[0]


def _decode(files, image_size, skip_unreadable: bool):
    from ..data.images import decode_images
    x, kept = decode_images(files, image_size, skip_unreadable)
    return x, [files[i] for i in kept]


def _read_folder(root: Path, labeled: str | None, unlabeled: str | None, test_positive: str,
                 image_size, skip_unreadable: bool) -> PUSource:
    if not root.is_dir():
        raise _missing(root, "image folder", ["labeled/*", "unlabeled/*", "test/<class>/* (optional)"])
    parts = {}
    for what, given, names, option in (("labelled positives", labeled, LABELED_FOLDERS, "--labeled-folder"),
                                       ("unlabelled pool", unlabeled, UNLABELED_FOLDERS, "--unlabeled-folder")):
        folder = _folder(root, given, names, what, option)
        files = image_files(folder)
        if len(files) < 2:
            raise ValueError(f"{folder} holds {len(files)} image(s): at least two are needed for the "
                             f"{what} (half of each trains the P-vs-U classifier that estimates π)")
        parts[what] = files
    files_p, files_u = parts.values()
    x, kept = _decode(files_p + files_u, image_size, skip_unreadable)
    n_p = len(set(kept) & set(files_p))
    x_test, y_test = _read_test(root / "test", test_positive, tuple(x.shape[1:]), skip_unreadable)
    c, h, w = x.shape[1:]
    return PUSource(as_features(x[:n_p]), as_features(x[n_p:]), [str(f) for f in kept[n_p:]],
                    as_features(x_test), y_test,
                    {"kind": "images", "image_size": [h, w], "channels": c}, str(root))


def _read_test(folder: Path, positive: str, shape: tuple, skip_unreadable: bool):
    """The optional labelled test split test/<class>/*: +1 for the class ``positive``."""
    if not folder.is_dir():
        return torch.zeros(0, *shape, dtype=torch.uint8), torch.zeros(0, dtype=torch.long)
    classes = {d.name.lower(): d for d in folder.iterdir() if d.is_dir()}
    if positive.lower() not in classes:
        raise ValueError(f"{folder}: no class folder {positive!r} for the test positives (its "
                         f"folders: {sorted(d.name for d in classes.values())}): name it with "
                         "--test-positive NAME, or remove test/ to train without a test split")
    files = {name: image_files(d) for name, d in classes.items()}
    ordered = [f for name in sorted(files) for f in files[name]]
    if not ordered:
        raise ValueError(f"{folder} holds no images: add a labelled test split there, or remove "
                         "test/ to train without one")
    x, kept = _decode(ordered, shape[1:], skip_unreadable)
    positives = set(files[positive.lower()])
    return _channels(x, shape[0]), torch.tensor([1 if f in positives else -1 for f in kept])


def _marks(labels: pd.Series, labeled_value, empty_is_unlabeled: bool, path: Path) -> np.ndarray:
    """True where a row is a labelled positive, from the label column's two values."""
    empty = labels.isna().to_numpy()
    if empty.any() and not empty_is_unlabeled:
        rows = [int(i) + 1 for i in np.flatnonzero(empty)]
        raise ValueError(f"{path}: the label column is empty in data row(s) {few(rows)} "
                         "(counting from 1): pass "
                         "--empty-is-unlabeled (Python: empty_is_unlabeled=True) if an empty cell "
                         "means unlabelled, or fill them")
    text = labels.map(lambda v: str(int(v)) if isinstance(v, (float, np.floating)) and float(v).is_integer()
                      else str(v)).str.strip().str.lower()
    values = sorted(set(text[~empty]))
    if labeled_value is not None:
        mark = str(labeled_value).strip().lower()
        if mark not in values:
            raise ValueError(f"{path}: no row is labelled {labeled_value!r} (the label column holds "
                             f"{values}): give the value that marks the labelled positives")
    else:
        mark = recognised_mark(values)
    if mark is None or len(values) > 2:
        raise ValueError(f"{path}: the label column holds {few(values, 6)}; "
                         "PU labels have two values, one marking the labelled positives (1/0, 1/-1, "
                         "True/False, or name it with --labeled-value VALUE; Python: labeled_value=…). "
                         "Fully labelled classes? Simulate PU from them with --positive CLASS "
                         "(evaluation mode)")
    return (text == mark).to_numpy() & ~empty


def recognised_mark(values) -> str | None:
    """Of two label values (as lower-case text), the one recognised as marking the labelled
    positives (:data:`LABELED_MARKS`) where the other is recognised as unlabelled; else None."""
    values = [str(v).strip().lower() for v in values]
    known = [v for v in values if v in LABELED_MARKS]
    return known[0] if len(values) == 2 and len(known) == 1 and all(
        v in LABELED_MARKS + UNLABELED_MARKS for v in values) else None


def _read_table(path: Path, label_column: str, labeled_value, empty_is_unlabeled: bool,
                spelling: str) -> PUSource:
    x, labels, names, ids = read_table(path, label_column, spelling=spelling, empty_ok=True)
    if labels is None:
        raise ValueError(f"{path}: no PU labels (.npz needs an array 'y' marking the labelled positives)")
    labeled = _marks(labels, labeled_value, empty_is_unlabeled, path)
    x_test, y_test = x[:0], torch.zeros(0, dtype=torch.long)
    if path.suffix.lower() == ".npz":
        arrays = np.load(path)
        if "x_test" in arrays:
            x_test = torch.tensor(arrays["x_test"], dtype=torch.float32)
            y_test = torch.tensor(np.where(np.asarray(arrays["y_test"]) > 0, 1, -1))
    for what, n in (("labelled positives", int(labeled.sum())), ("unlabelled rows", int((~labeled).sum()))):
        if n < 2:
            raise ValueError(f"{path}: {n} {what}; PU learning needs at least two of each")
    if torch.is_tensor(x) and x.is_floating_point():
        rows = [int(i) + 1 for i in torch.nonzero(~torch.isfinite(x).reshape(len(x), -1).all(1)).flatten()]
        if rows:
            raise ValueError(f"{path}: data row(s) {few(rows)} (counting "
                             "from 1) hold NaN or inf values: remove or impute them before training")
    check_finite(path.name, "training", x)
    u = np.flatnonzero(~labeled)
    return PUSource(x[torch.from_numpy(np.flatnonzero(labeled))], x[torch.from_numpy(u)],
                    [ids[i] for i in u], x_test, y_test,
                    {"kind": "features", "columns": names, "label_column": label_column}, str(path))


def load_pu(images=None, features=None, label_column: str = "label", labeled_value=None,
            empty_is_unlabeled: bool = False, labeled_folder: str | None = None,
            unlabeled_folder: str | None = None, test_positive: str = "positive", image_size=None,
            skip_unreadable: bool = False, spelling: str = "python") -> PUSource:
    """PU data from an image folder (``labeled/`` beside ``unlabeled/``, other names given
    by ``labeled_folder``/``unlabeled_folder``; optional ``test/<class>/`` with
    ``test_positive`` its positive class) or a feature table (``label_column`` marks the
    labelled positives; ``labeled_value`` names the mark when it is not 1/True)."""
    if (images is None) == (features is None):
        raise ValueError("give exactly one of an image folder (--images DIR) or a feature "
                         "table (--features FILE)")
    if images is not None:
        return _read_folder(Path(images), labeled_folder, unlabeled_folder, test_positive,
                            image_size, skip_unreadable)
    return _read_table(Path(features), label_column, labeled_value, empty_is_unlabeled, spelling)
