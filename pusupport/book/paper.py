"""The paper's settings and what each profile of this book changes — as data.

Each table is sectioned like :class:`~pusupport.core.config.Settings` ("data", "model",
"train", "page") and reaches a run only through its merge, so a misspelt or
misplaced key is an error naming the valid keys.
"""
from __future__ import annotations

import pandas as pd

PROFILES = ("smoke", "cpu", "paper")
#: Whether a page's runs checkpoint (and resume) at each profile; a page's ``checkpoints``
#: parameter overrides it.
CHECKPOINTS = {"smoke": False, "cpu": False, "paper": True}

def _table1(model: dict, **train) -> dict:
    """A real data set of the paper's Table 1: 1,000 labelled positives, U the whole
    training set, 10 seeds, the given model and training settings."""
    return {"data": dict(n_labeled=1000), "model": model, "train": train, "page": dict(n_seeds=10)}


#: The paper's settings per data set (§4; Adam, logistic loss, nnPU β = 0, γ = 1).
PAPER = {
    "synthetic": {
        "data": dict(n_labeled=100, n_unlabeled=1000, n_test=10_000),
        "model": dict(name="mlp"),
        "train": dict(epochs=1000, batch_size=128, lr=1e-4, lr_schedule={100: 1e-5},
                      weight_decay=0.05, n_select=1, select_from=200),
        "page": dict(n_seeds=10)},
    "cifar10": _table1(dict(name="kiryo_cnn", width=1.0, dropout=0.5), epochs=200, batch_size=2000,
                       lr=1e-4, lr_schedule={50: 5e-5, 100: 1e-5}, weight_decay=0.017, n_select=150,
                       select_from=20),
    # Han et al.'s CNN "with a dropout parameter as 0.5" (their dropout_rate)
    "cifar100": _table1(dict(name="coteaching_cnn", width=1.0, dropout=0.5), epochs=300,
                        batch_size=1000, lr=1e-4, lr_schedule={50: 1e-6}, weight_decay=0.1,
                        n_select=160, select_from=60),
    "20news": _table1(dict(name="news_mlp", width=1.0, dropout=0.0), epochs=500, batch_size=5000,
                      lr=1e-4, lr_schedule={50: 1e-5}, weight_decay=5e-4, n_select=160,
                      select_from=60),
    # Not in the paper: our choices, with nnPU's MLP (ReLU) as for its MNIST experiment.
    "fashion_mnist": _table1(dict(name="news_mlp", activation="relu", width=1.0, dropout=0.0),
                             epochs=200, batch_size=2000, lr=1e-4, lr_schedule={50: 1e-5},
                             weight_decay=5e-4, n_select=150, select_from=20),
    # Arpit et al.'s memorisation experiment re-created for the binary CIFAR-10 task
    # (PN training with the logistic loss); the aaPU paper gives no settings for it.
    "memorization": {
        "data": dict(n_train=50_000, n_val=10_000),
        "model": dict(name="kiryo_cnn", width=1.0, dropout=0.0),
        "train": dict(epochs=100, batch_size=128, lr=1e-3, weight_decay=0.0, lr_schedule={}),
        "page": dict(n_seeds=1, noise_rates=[0.0, 0.2, 0.4])},
}

#: Settings that are this book's choice (the paper has no such experiment).
NOT_IN_PAPER = {"fashion_mnist", "memorization"}

#: `smoke` scores a sample of 1,000 test points: scoring CIFAR-10's whole test split was
#: 9/10 of a smoke run's training time on a 2-core CPU (two seeds of its page: 77 → 36 s).
_SMOKE_REAL = {"data": dict(n_labeled=100, n_unlabeled=400, n_test=1000),
               "train": dict(epochs=3, batch_size=100, lr_schedule={}, select_from=2, n_select=20),
               "page": dict(n_seeds=2)}

#: What each profile changes for a data set. `cpu`: narrower CNNs, a U sample disjoint
#: from P, fewer epochs with earlier learning-rate milestones and first selection; seeds
#: fixed before any run, at least 6 for every comparative claim (the fewest whose exact
#: test can reach p < 0.05): 10 where this machine's budget allows, 6 on CIFAR-10. n_select
#: is not scaled with the epochs; on CIFAR-10 the U sample was sized so that the picks add up
#: to the same share of U as at the paper's settings (9 × 300 of 5,000 against 180 × 150 of
#: 50,000: 54 %) — but that share is what S would hold only if no point were picked twice.
#: Under the paper's rule (re-picks allowed, the book's reading) S stays far smaller: 2,158 of
#: 50,000 points (4.3 %) after seed 0 at `paper`. Each epoch picks 6 % of U at `cpu` against
#: 0.3 % at `paper`: a faster selection than the paper's, stated on the page.
#: bf16 autocast comes from the device (pusupport.core.runtime).
PROFILE_CHANGES = {
    "synthetic": {
        "paper": {}, "cpu": {},
        "smoke": {"train": dict(epochs=12, select_from=6, lr_schedule={6: 1e-5}),
                  "page": dict(n_seeds=2), "data": dict(n_test=2000)}},
    "cifar10": {
        "paper": {},
        "cpu": {"model": dict(width=0.25), "data": dict(n_unlabeled=5000),
                "train": dict(epochs=10, batch_size=500, lr_schedule={5: 5e-5, 8: 1e-5},
                              select_from=2, n_select=300, eval_every=2),
                "page": dict(n_seeds=6)},
        "smoke": {**_SMOKE_REAL, "model": dict(width=0.125), "train": {**_SMOKE_REAL["train"]}}},
    "cifar100": {
        "paper": {},
        "cpu": {"model": dict(width=0.25), "data": dict(n_unlabeled=5000),
                "train": dict(epochs=12, batch_size=500, lr_schedule={2: 1e-6},
                              select_from=3, n_select=300, eval_every=2),
                "page": dict(n_seeds=6)},
        "smoke": {**_SMOKE_REAL, "model": dict(width=0.125), "train": {**_SMOKE_REAL["train"]}}},
    "20news": {
        "paper": {},
        "cpu": {"data": dict(max_features=20_000), "train": dict(epochs=80, eval_every=2),
                "page": dict(n_seeds=10)},
        "smoke": {**_SMOKE_REAL, "data": dict(max_features=2000, n_labeled=100, n_unlabeled=600, n_test=1000),
                  "train": {**_SMOKE_REAL["train"], "batch_size": 300}}},
    "memorization": {
        "paper": {},
        "cpu": {"model": dict(width=0.25), "data": dict(n_train=2000, n_val=2000),
                "train": dict(epochs=20), "page": dict(n_seeds=2, noise_rates=[0.0, 0.4])},
        "smoke": {"model": dict(width=0.125), "data": dict(n_train=200, n_val=200),
                  "train": dict(epochs=2, batch_size=100)}},
    "fashion_mnist": {
        "paper": {},
        "cpu": {"train": dict(epochs=30, lr_schedule={10: 1e-5}, select_from=3, n_select=750),
                "page": dict(n_seeds=10)},
        "smoke": {**_SMOKE_REAL, "data": dict(n_labeled=100, n_unlabeled=600, n_test=1000),
                  "train": {**_SMOKE_REAL["train"], "batch_size": 200}}},
}

#: A short CIFAR-10 run on a U sample (the adding-P and histogram pages at ``cpu``).
CPU_CIFAR_SHORT = {"data": dict(n_unlabeled=5000),
                   "train": dict(epochs=10, lr_schedule={5: 5e-5, 8: 1e-5}), "page": dict(n_seeds=1)}


def profile_table() -> pd.DataFrame:
    """Every data set's settings in the paper and what each profile changes."""
    rows = []
    for dataset, paper in PAPER.items():
        for profile in PROFILES:
            table = paper if profile == "paper" else PROFILE_CHANGES[dataset][profile]
            text = "; ".join(f"{s}.{k}={v}" for s, values in table.items() for k, v in values.items())
            rows.append({"data set": dataset, "profile": profile, "settings": text or "—"})
    return pd.DataFrame(rows).set_index(["data set", "profile"])
