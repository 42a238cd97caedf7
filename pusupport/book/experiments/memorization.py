"""Arpit et al.'s memorisation experiment (the aaPU paper's Fig. 2) on binary CIFAR-10:
supervised (PN) training with a fraction of the training labels flipped."""
from __future__ import annotations

import math

import pandas as pd
import torch

from ...core.problem import as_features, flip_labels, resolve_classes, supervised
from ...data.datasets import CIFAR10_POSITIVE, LabeledData
from ...core.progress import progress
from ..claims import Claim, observed
from ..experiment import TRAINING, Experiment, RunSpec

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..page import Page


def random_rows(n: int, *tensors, seed: int = 0):
    """The same ``n`` random rows of each tensor (test splits are often sorted by class)."""
    index = torch.randperm(len(tensors[0]), generator=torch.Generator().manual_seed(seed))[:n]
    return tuple(t[index] for t in tensors)


def run_memorization(page: Page, cifar10: LabeledData) -> pd.DataFrame:
    """PN training of binary CIFAR-10 (``cifar10``) at each of the page's noise rates.

    A random sample of ``n_train`` training images (labels flipped at the noise rate)
    and a random sample of ``n_val`` test images as clean validation data. The history
    has the accuracy on the training labels as given and on the validation labels, and
    the validation set's majority-class rate (what always answering one class scores).
    """
    s = page.settings
    positive = torch.tensor(resolve_classes(CIFAR10_POSITIVE, cifar10.classes))
    binary = {part: torch.where(torch.isin(getattr(cifar10, f"y_{part}"), positive), 1, -1)
              for part in ("train", "test")}
    x_train, y_train = random_rows(s.data.n_train, cifar10.x_train, binary["train"])
    x_val, y_val = random_rows(s.data.n_val, cifar10.x_test, binary["test"])
    x_val = as_features(x_val)
    majority = float(max((y_val > 0).double().mean(), (y_val < 0).double().mean()))
    runs = []
    for spec in progress(page.plan(), desc="noise rates"):
        noise = spec.values["noise"]

        def noisy(seed, noise=noise):                      # the labels flipped on this seed
            flipped = flip_labels(y_train, noise, seed)
            return supervised(as_features(x_train[flipped > 0]), as_features(x_train[flipped < 0]),
                              x_val, y_val, name=f"CIFAR-10, {noise:.0%} noise")
        h = page.run([spec], noisy)
        runs.append(h.assign(noise=noise, majority=majority, train_accuracy=1 - h.train_error,
                             val_accuracy=1 - h.test_error))
    return pd.concat(runs, ignore_index=True)


def accuracy_table(history: pd.DataFrame) -> pd.DataFrame:
    """Per noise rate, on the seeds' mean curves: the best and final validation accuracy and
    the final training accuracy (on the labels as given), beside the majority-class rate."""
    mean = history.groupby(["noise", "epoch"])[["val_accuracy", "train_accuracy"]].mean()
    table = mean.groupby("noise").agg(best_val=("val_accuracy", "max"),
                                      final_val=("val_accuracy", "last"),
                                      final_train=("train_accuracy", "last"))
    table["majority class"] = history.groupby("noise").majority.first()
    table.index = [f"{rate:.0%} noise" for rate in table.index]
    return table


def plan(s) -> list[RunSpec]:
    """PN training, one run per noise rate and seed."""
    return [RunSpec(f"noise {noise:.0%}", "pn", stacks=False, values={"noise": noise})
            for noise in s.page.noise_rates]


def memorisation(summary, history):
    """At the largest noise rate, with the seeds' mean validation accuracy: the peak of the
    first two thirds of the epochs against the mean of the last third. Reproduced when
    the fall exceeds its noise threshold — (z at 5 %/E + z at 2.5 %/√L) binomial standard
    errors of one epoch's accuracy on ``n_test`` validation points (the seeds share them, so
    their number does not enter), E the early and L the late epochs, so a flat noisy curve
    is not a fall — contradicted when the last third is
    on average at or above the early peak."""
    from scipy.stats import norm
    worst = history[history.noise == history.noise.max()]
    mean = worst.groupby("epoch")[["train_accuracy", "val_accuracy"]].mean()
    cut = mean.index.max() * 2 / 3
    early, late = mean.val_accuracy[mean.index <= cut], mean.val_accuracy[mean.index > cut]
    if early.empty or late.empty:
        return observed(f"{len(mean)} epochs: too few to compare an early peak with the last third",
                        False, False)
    peak, end = float(early.max()), float(late.mean())
    # every seed is scored on the same validation points: more seeds do not shrink this
    se = math.sqrt(peak * (1 - peak) / summary["n_test"])
    threshold = (norm.isf(0.05 / len(early)) + norm.isf(0.025) / math.sqrt(len(late))) * se
    text = (f"{worst.noise.max():.0%} noise: validation accuracy peaks at {peak:.3f} (epoch "
            f"{early.idxmax()} of {mean.index.max()}), the last third averages {end:.3f}: a fall "
            f"of {peak - end:.3f} against a noise threshold of {threshold:.3f}; training accuracy "
            f"on noisy labels ends at {mean.train_accuracy.iloc[-1]:.3f}")
    return observed(text, peak - end > threshold, end >= peak)


EXPERIMENT = Experiment(
    "memorization", dataset="memorization", sizes="cifar10", parameters=TRAINING, plan=plan,
    claims=(Claim("Memorisation: with label noise, validation accuracy peaks early, then falls "
                  "(Fig. 2)", memorisation),))
