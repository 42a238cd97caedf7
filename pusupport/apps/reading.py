"""Reading your data: a feature table or an image folder into labelled data with a test
split, and the inputs a saved model predicts on.

Feature tables: ``.csv`` / ``.parquet`` with a label column (every other column is a
feature); ``.npz`` with arrays ``x`` (n, d) and ``y`` (n,) (optionally ``x_test`` and
``y_test``); ``.npy``: one 2-D array whose last column is the label. Without a test
split, a seeded 20 % of the rows is held out as the test set.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ..core.problem import LabeledData
from ..data.datasets import DatasetNotFoundError
from ..data.images import (IMAGE_EXTENSIONS, YOUR_DATA, decode_images, image_size_pair,
                           load_image_folder)
from .saved import SavedModel
from .words import SPELLING, few

TABLES = (".csv", ".parquet", ".npy", ".npz")
TEST_FRACTION = 0.2


@dataclass
class OwnData:
    """Labelled data read from your files, with the preprocessing a saved model keeps."""

    labeled: LabeledData
    preprocessing: dict
    source: str
    held_out: bool = False          # the test set is TEST_FRACTION of the rows (no test split given)

    @property
    def kind(self) -> str:
        return self.preprocessing["kind"]

    @property
    def classes(self) -> list:
        return self.labeled.classes


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


def _columns(frame: pd.DataFrame, wanted) -> str:
    """A table's columns for an error: the names closest to ``wanted`` first, then the
    first ten of them (a wide table has hundreds)."""
    names = [str(c) for c in frame.columns]
    near = difflib.get_close_matches(str(wanted), names, n=3, cutoff=0.6)
    return ((f" (closest: {', '.join(map(repr, near))})" if near else "")
            + f"; its {len(names)} columns are {few(names, 10)}")


def read_table(path, label_column: str | None = None, columns=None, spelling: str = "python",
               empty_ok: bool = False):
    """(features (n, d) float32, labels or None, feature names, row ids) of a table.

    With ``columns`` (a saved model's), exactly those columns are the features; errors name
    options in the ``spelling`` of :data:`SPELLING`; empty labels are an error unless
    ``empty_ok`` (PU labels, where an empty cell may mean unlabelled)."""
    path = Path(path)
    if not path.is_file():
        raise _missing(path, "feature table")
    suffix = path.suffix.lower()
    if suffix not in TABLES:
        raise ValueError(f"{path}: unknown table format {suffix!r}: use one of {', '.join(TABLES)}")
    if suffix in (".npy", ".npz"):
        arrays = np.load(path)
        if suffix == ".npz":
            if "x" not in arrays:
                raise ValueError(f"{path} has no array 'x' (its arrays: {', '.join(arrays.files) or 'none'}): "
                                 "save the features as x, e.g. np.savez(path, x=features, y=labels)")
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
            raise ValueError(f"{path} has no label column {label_column!r}{_columns(frame, label_column)}: "
                             f"pass {SPELLING[spelling]['label_column']}")
    if labels is not None and labels.isna().any() and not empty_ok:
        rows = [int(i) + 1 for i in np.flatnonzero(labels.isna().to_numpy())]
        raise ValueError(f"{path}: the label column {label_column or 'y'!r} is empty in data row(s) "
                         f"{few(rows)} (counting from 1, below the "
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
    held_out = not (path.suffix.lower() == ".npz" and "x_test" in np.load(path))
    if not held_out:
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
                   str(path), held_out)


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
