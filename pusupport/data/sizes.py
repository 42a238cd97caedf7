"""Each data set's sizes at the paper's protocol, for the cost model: they price runs and
never shape one (so they are not part of a run's identity, :mod:`~pusupport.core.identity`)."""
from __future__ import annotations

from dataclasses import dataclass

from .datasets import CIFAR10_POSITIVE


@dataclass(frozen=True)
class Sizes:
    """A data set's sizes at the paper's protocol, for the cost model: training and test
    rows (None: set by the settings), one row's shape, the positive share of the training
    set, and for tf-idf rows {max_features: (words, mean non-zeros of a training row)}."""

    n_train: int | None
    n_test: int | None
    shape: tuple
    positive: float | None = None
    words: dict | None = None


SIZES = {
    "synthetic": Sizes(None, None, (2,)),
    "cifar10": Sizes(50_000, 10_000, (3, 32, 32), positive=len(CIFAR10_POSITIVE) / 10),
    "cifar100": Sizes(50_000, 10_000, (3, 32, 32)),
    "20news": Sizes(11_314, 7_532, (130_107,), words={None: (130_107, 158), 20_000: (20_000, 141)}),
    "fashion_mnist": Sizes(60_000, 10_000, (1, 28, 28)),
}
