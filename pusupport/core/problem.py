"""PU problems as device-ready tensors: the case-control construction from labelled
data (nnPU's and the paper's protocol), your own arrays, and the synthetic problem of §4.1."""
from __future__ import annotations

import fnmatch
import warnings
from dataclasses import dataclass, fields, replace

import torch

from .risks import check_prior


@dataclass
class PUData:
    """A case-control PU problem.

    x_p: labelled positives. x_u: unlabelled points. u_truth: hidden ±1 labels of
    U (diagnostics only, never used for training). u_in_p: True where a U point
    is also a labelled positive (selection skips those). x_test / y_test: the
    fully labelled (±1) test set. prior: π, the positive fraction of U. x_val_p /
    x_val_u: a PU validation split held out of the training data (:func:`hold_out`), or
    None; its labels are never kept.
    """

    name: str
    x_p: torch.Tensor
    x_u: torch.Tensor
    u_truth: torch.Tensor
    u_in_p: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    prior: float
    x_val_p: object = None
    x_val_u: object = None

    def __post_init__(self):
        if len(self.x_p) == 0:
            raise ValueError(f"{self.name}: no labelled positives — P must not be empty")
        if len(self.x_u) == 0:
            raise ValueError(f"{self.name}: no unlabelled points — U must not be empty")
        if not (len(self.u_truth) == len(self.u_in_p) == len(self.x_u)):
            raise ValueError(f"{self.name}: u_truth and u_in_p must have one entry per U point")
        check_prior(self.prior)

    def to(self, device) -> "PUData":
        """A copy with every tensor on ``device``."""
        def move(v):
            return v.to(device) if hasattr(v, "to") else v
        return PUData(**{f.name: move(getattr(self, f.name)) for f in fields(self)})

    def summary(self) -> dict:
        """Table 1's row for this data set: sizes, π and the test split."""
        return {"dataset": self.name, "n_p": len(self.x_p), "n_u": len(self.x_u),
                "prior": round(self.prior, 4),
                "test_p": int((self.y_test > 0).sum()), "test_n": int((self.y_test < 0).sum())}


@dataclass
class LabeledData:
    """A fully labelled train/test split: features, integer labels and class names."""

    x_train: object
    y_train: torch.Tensor
    x_test: object
    y_test: torch.Tensor
    classes: list


# ---------------------------------------------------------------- the PU construction

def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def resolve_classes(patterns, classes) -> list[int]:
    """Class indices matching ``patterns`` (names, shell patterns such as 'sci.*', or ints
    that name integer class folders such as '0', '2'); a number that names no class matches
    the classes equal to it as numbers ('1' a float label column's '1.0')."""
    if isinstance(patterns, (str, int)):
        patterns = [patterns]
    found, unknown = set(), []
    for pat in (str(p) for p in patterns):
        hits = ([i for i, c in enumerate(classes) if fnmatch.fnmatchcase(c, pat)]
                or [i for i, c in enumerate(classes) if _number(c) is not None and _number(c) == _number(pat)])
        found.update(hits) if hits else unknown.append(pat)
    if unknown:
        raise ValueError(f"unknown positive class(es) {unknown}; valid class names: {list(classes)}")
    return sorted(found)


def make_pu(name: str, data: LabeledData, positive, n_labeled: int = 1000, seed: int = 0,
            n_unlabeled: int | None = None, prior: float | None = None) -> PUData:
    """Case-control PU problem from a labelled split (nnPU's and the paper's protocol).

    Labels are binarised by the ``positive`` classes; ``n_labeled`` labelled P are
    drawn from the training positives; U is the whole training set (default) or,
    with ``n_unlabeled``, a sample disjoint from the labelled P. π is the true
    positive fraction of U; a given ``prior`` overrides it (warning if it differs).
    The test set is the full binarised test split. ``seed`` fixes the draw.
    """
    pos = torch.tensor(resolve_classes(positive, data.classes))
    y_train = torch.where(torch.isin(data.y_train, pos), 1, -1)
    y_test = torch.where(torch.isin(data.y_test, pos), 1, -1)
    gen = torch.Generator().manual_seed(seed)
    train_p = (y_train > 0).nonzero().reshape(-1)
    names = [data.classes[i] for i in pos.tolist()]
    if len(train_p) == 0:
        raise ValueError(f"{name}: the positive class(es) {names} have no training examples: "
                         "check positive_classes, or the class folders' contents")
    if len(train_p) == len(y_train):
        raise ValueError(f"{name}: every training example is in a positive class {names}: PU "
                         "learning needs negatives among the unlabelled data — name fewer "
                         "positive classes (or add a negative class)")
    check_finite(name, "training", data.x_train)
    check_finite(name, "test", data.x_test)
    if not 0 < n_labeled <= len(train_p):
        raise ValueError(f"{name}: n_labeled={n_labeled} must be between 1 and the "
                         f"{len(train_p)} training positives")
    p_index = train_p[torch.randperm(len(train_p), generator=gen)[:n_labeled]]
    if n_unlabeled is None:
        u_index = torch.arange(len(y_train))
    else:
        rest = torch.ones(len(y_train), dtype=torch.bool)
        rest[p_index] = False
        rest = rest.nonzero().reshape(-1)
        if not 0 < n_unlabeled <= len(rest):
            raise ValueError(f"{name}: n_unlabeled={n_unlabeled} must be between 1 and {len(rest)}")
        u_index = rest[torch.randperm(len(rest), generator=gen)[:n_unlabeled]].sort().values
    u_truth = y_train[u_index]
    true_prior = float((u_truth > 0).float().mean())
    if prior is None:
        prior = true_prior
    elif abs(check_prior(prior) - true_prior) > 1e-3:
        warnings.warn(f"{name}: using prior={prior} although the positive fraction of U is "
                      f"{true_prior:.4f}", stacklevel=2)
    x_u = as_features(data.x_train if n_unlabeled is None else data.x_train[u_index])
    return PUData(name, as_features(data.x_train[p_index]), x_u, u_truth,
                  torch.isin(u_index, p_index), as_features(data.x_test), y_test, prior)


def hold_out(data: PUData, fraction: float, seed: int = 0) -> PUData:
    """``data`` with ``fraction`` of its P rows and of its U rows moved out of training into
    a PU validation split (``x_val_p``, ``x_val_u``), drawn on ``seed``: P : U keeps its
    proportion, as in VPU's protocol (Chen et al., 2020: 500 of each class's 6,000
    Fashion-MNIST rows). No label of the split is kept; where U is every training row a
    held-out U row may also be a labelled positive left in training."""
    if not 0 < fraction < 0.5:
        raise ValueError(f"validation={fraction!r}: hold out a fraction of P and U between 0 and "
                         "0.5 (VPU's protocol: 1/12)")
    gen = torch.Generator().manual_seed(seed)
    cut = [torch.randperm(n, generator=gen) for n in (len(data.x_p), len(data.x_u))]
    val_p, val_u = (c[:max(1, round(len(c) * fraction))].sort().values for c in cut)
    keep_p, keep_u = (c[max(1, round(len(c) * fraction)):].sort().values for c in cut)
    if len(keep_p) == 0:
        raise ValueError(f"{data.name}: {len(data.x_p)} labelled positive(s) leave none to train "
                         "on once a validation split is held out: label more, or hold out none")
    return replace(data, x_p=data.x_p[keep_p], x_u=data.x_u[keep_u], u_truth=data.u_truth[keep_u],
                   u_in_p=data.u_in_p[keep_u], x_val_p=data.x_p[val_p], x_val_u=data.x_u[val_u])


def as_features(x):
    """uint8 images → float32 in [0, 1]; anything else unchanged."""
    return x.float().div_(255) if torch.is_tensor(x) and x.dtype == torch.uint8 else x


def check_finite(name: str, part: str, x) -> None:
    """Refuse NaN or infinite features, naming how many rows hold them."""
    values = x if torch.is_tensor(x) else getattr(x, "val", None)
    if values is None or not values.is_floating_point() or len(values) == 0:
        return
    bad = ~torch.isfinite(values)
    if bad.any():
        rows = int(bad.reshape(len(values), -1).any(1).sum()) if torch.is_tensor(x) else "some"
        raise ValueError(f"{name}: {rows} {part} row(s) hold NaN or inf values: remove or impute "
                         "them before training")


def from_arrays(x, labeled_index, x_test=None, y_test=None, prior: float | None = None,
                u_truth=None, name: str = "own data") -> PUData:
    """PU data from your own features: rows ``labeled_index`` of ``x`` are the labelled
    positives, all other rows are unlabelled.

    ``prior`` (required) is π of the unlabelled rows — estimate it with
    :func:`pusupport.apps.prior.estimate_prior` if you do not know it;
    ``x_test``/``y_test`` (±1) are optional — without them test metrics are NaN;
    ``u_truth`` (±1 per unlabelled row), if known, only feed diagnostics.
    """
    if prior is None:
        raise ValueError("from_arrays needs prior=π, the positive fraction of the unlabelled rows: "
                         "estimate it with pusupport.apps.prior.estimate_prior(x_p, x_u)")
    x = torch.as_tensor(x, dtype=torch.float32)
    check_finite(name, "training", x)
    index = torch.as_tensor(labeled_index, dtype=torch.long).reshape(-1)
    if len(index) == 0 or int(index.min()) < -len(x) or int(index.max()) >= len(x):
        raise ValueError(f"labeled_index must name rows of x (0 to {len(x) - 1}); got "
                         f"{len(index)} index(es)" + (f" from {int(index.min())} to {int(index.max())}"
                                                     if len(index) else "") +
                         ": pass the row numbers of the labelled positives")
    labeled = torch.zeros(len(x), dtype=torch.bool)
    labeled[index] = True
    x_u = x[~labeled]
    u_truth = (torch.zeros(len(x_u), dtype=torch.long) if u_truth is None
                else torch.as_tensor(u_truth).long())
    x_test = x[:0] if x_test is None else torch.as_tensor(x_test, dtype=torch.float32)
    y_test = torch.zeros(0, dtype=torch.long) if y_test is None else torch.as_tensor(y_test).long()
    check_finite(name, "test", x_test)
    return PUData(name, x[labeled], x_u, u_truth, torch.zeros(len(x_u), dtype=torch.bool),
                  x_test, y_test, prior)


def flip_labels(y: torch.Tensor, rate: float, seed: int = 0) -> torch.Tensor:
    """Random label noise for ±1 labels: each label is flipped with probability ``rate``."""
    if not 0 <= rate < 1:
        raise ValueError(f"noise rate must be in [0, 1), got {rate}")
    gen = torch.Generator().manual_seed(seed)
    flip = torch.rand(len(y), generator=gen) < rate
    return torch.where(flip, -y, y)


def supervised(x_pos, x_neg, x_test=None, y_test=None, name: str = "PN") -> PUData:
    """A fully labelled (PN) problem in PUData form, for method ``"pn"``: the positives
    in the P slot, the negatives in the U slot, π their positive fraction."""
    n_neg = len(x_neg)
    x_test = x_pos[:0] if x_test is None else x_test
    y_test = torch.zeros(0, dtype=torch.long) if y_test is None else y_test
    return PUData(name, x_pos, x_neg, -torch.ones(n_neg, dtype=torch.long),
                  torch.zeros(n_neg, dtype=torch.bool), x_test, y_test,
                  len(x_pos) / (len(x_pos) + n_neg))
