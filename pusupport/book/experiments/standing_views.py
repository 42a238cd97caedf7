"""Views of "Where aaPU stands" beside its verdicts: nnPUSB's threshold where its authors
place it, the methods whose scores rank well but whose threshold misses, and where the
oracle S could change nothing."""
from __future__ import annotations

import pandas as pd

from ...core.methods import get_method, view_column
from .standing import _final


def nnpusb_thresholds(history: pd.DataFrame) -> pd.DataFrame:
    """nnPUSB's final test error (mean ± sd over seeds) per data set, with its threshold at
    the training U's (1 − π)-quantile — the book's, which the verdicts use — and at the test
    inputs', where its authors place it (transductive, labels unread): two views of nnPU's
    run (:mod:`~pusupport.core.baselines.nnpusb`)."""
    views = {view_column("nnpusb"): "training U's quantile (the verdicts')",
             view_column("nnpusb_test"): "test inputs' quantile (the authors')"}
    final = _final(history)
    final = final[final.method == "nnpu"].dropna(subset=list(set(views) & set(final)))
    if final.empty or not set(views) <= set(final):
        return pd.DataFrame()
    spread = lambda x: f"{x.mean():.4f} ± {x.std(ddof=1):.4f}"  # noqa: E731
    table = final.groupby("dataset", sort=False)[list(views)].agg(spread).rename(columns=views)
    return table.assign(seeds=final.groupby("dataset", sort=False).seed.nunique())


def at_one_threshold(history: pd.DataFrame) -> pd.DataFrame:
    """Each method's final test error (mean over seeds) at its own threshold and at the
    common label-free one — nnPUSB's, the training U's (1 − π)-quantile, scored on every run
    that reads π — with its ROC AUC, which no threshold moves; one row per data set and
    method that ran there. A method that reads no π (VPU) has no common-threshold error: "—"."""
    column = view_column("nnpusb")
    final = _final(history)
    if final.empty or column not in final:
        return pd.DataFrame()
    final = final[[get_method(m).view_of is None for m in final.method]]
    table = (final.groupby(["dataset", "method"], sort=False)[["test_error", column, "test_auc"]].mean()
             .rename(columns={"test_error": "own threshold", column: "one threshold", "test_auc": "ROC AUC"}))
    table.index = table.index.set_levels([get_method(m).label for m in table.index.levels[1]], level=1)
    return table.round(4).astype(object).fillna("—")


def one_class_notes(history: pd.DataFrame, meta: dict, min_auc: float = 0.75,
                    share: float = 0.1) -> list[str]:
    """Methods that classify little better than calling every test point one class — their
    mean final error removes less than ``share`` of that constant rule's error (the test set's
    positive rate, or its complement) — although their scores rank the points well (mean
    ROC AUC ≥ ``min_auc``): the ranking is there, the decision threshold misses it."""
    notes = []
    final = _final(history)
    for (dataset, method), rows in final.groupby(["dataset", "method"], sort=False):
        rate = meta.get(dataset, {}).get("test_positive_rate")
        if rate is None or "test_auc" not in rows or rows.test_auc.isna().all():
            continue
        base, side = (rate, "negative") if rate <= 0.5 else (1 - rate, "positive")
        error, auc = rows.test_error.mean(), rows.test_auc.mean()
        if error >= (1 - share) * base and auc >= min_auc:
            removed = max(0.0, 1 - error / base)
            notes.append(f"{get_method(method).label} on {dataset}: test error {error:.4f}, close to "
                         f"that of calling every point {side} ({base:.4f}; it removes {removed:.0%} of "
                         f"it), yet ROC AUC {auc:.4f}: its scores rank the points well, but its "
                         "decision threshold does not separate them")
    return notes


def oracle_notes(history: pd.DataFrame) -> list[str]:
    """Each data set where aaPU with an oracle S ends with aaPU's test error on every seed:
    aaPU's own S held only true positives there (purity 1 at its last epoch), so drawing S
    from U's true positives changed nothing — said with S's sizes, so that a tie is not read
    as the oracle's bound being reached by selection in general."""
    final = _final(history)
    notes = []
    for dataset, rows in final.groupby("dataset", sort=False):
        own, oracle = (rows[rows.method == m].set_index("seed") for m in ("aapu", "aapu_oracle"))
        seeds = own.index.intersection(oracle.index)
        if seeds.empty or not own.test_error[seeds].equals(oracle.test_error[seeds]):
            continue
        sizes, purity = own.n_selected[seeds], own.purity[seeds]
        notes.append(f"{get_method('aapu_oracle').label} on {dataset} ends with aaPU's test error on "
                     f"each of its {len(seeds)} seeds: aaPU's own S held {sizes.min():.0f}–{sizes.max():.0f} "
                     f"points, {purity.min():.0%} of them true positives, so an oracle had nothing to "
                     "replace")
    return notes
