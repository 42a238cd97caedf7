"""Results on disk: tidy per-epoch histories (CSV) and final summaries (JSON)."""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.atomic import atomic_write_text
from ..core.methods import get_method


#: History columns that name a setting within one page (e.g. the prior page's π given):
#: its runs are summarised per method and setting, "aapu (×0.8)".
SETTING_COLUMNS = ("prior_label", "dataset")


#: The final-epoch metrics a summary keeps (those a history has): the error at the method's
#: threshold, and two that need none.
METRICS = ("test_error", "test_auc", "test_ap")


def summarize(history: pd.DataFrame, metrics=METRICS) -> dict:
    """Final-epoch metrics per method (and setting): mean, std over seeds (ddof=1) and
    number of seeds; a metric the history lacks (an older run's AP) or holds no value of
    (data without a test split) is left out."""
    if history.empty:
        return {}
    settings = [c for c in SETTING_COLUMNS if c in history]
    keys = ["method", *settings]
    last_epoch = (history.groupby(settings, sort=False, dropna=False).epoch.transform("max")
                  if settings else history.epoch.max())     # a data set's own epochs
    last = history[history.epoch == last_epoch]
    out = {}
    for key, rows in last.groupby(keys, sort=False):
        name = key[0] + "".join(f" ({v})" for v in key[1:])
        out[name] = {"n_seeds": int(rows.seed.nunique()), "epochs": int(rows.epoch.max())}
        for m in (m for m in metrics if m in rows and rows[m].notna().any()):
            out[name][m] = {"mean": float(rows[m].mean()),
                            "std": float(rows[m].std(ddof=1)) if len(rows) > 1 else 0.0}
    return out


def history_csv(history: pd.DataFrame) -> tuple[str, list[str]]:
    """``history`` as CSV text, and the float columns written as float32 (:func:`read_history`'s
    ``float32``): those whose every value is a float32 (the loop's risks are float32 means)
    are written in float32's shortest form, about half the digits, where that reads back
    to every value exactly."""
    float32 = [c for c in history.columns[history.dtypes == np.float64]
               if np.array_equal(history[c].astype(np.float32).astype(np.float64), history[c], equal_nan=True)]
    while True:
        out = history.copy()
        for column in float32:
            out[column] = history[column].to_numpy(np.float32).astype(str)
            out.loc[history[column].isna(), column] = ""
        text = out.to_csv(index=False)
        back = read_history(io.StringIO(text), float32)
        exact = [c for c in float32 if np.array_equal(back[c], history[c], equal_nan=True)]
        if exact == float32:
            return text, float32
        float32 = exact


def read_history(path, float32=()) -> pd.DataFrame:
    """A history CSV, its columns typed from every row at once (the per-point error columns
    hold text in a run's last row only); the ``float32`` columns (:func:`history_csv`'s)
    rounded back to the float32 values they were written from."""
    history = pd.read_csv(path, low_memory=False)
    for column in float32:
        history[column] = history[column].astype(np.float32).astype(np.float64)
    return history


def save_results(history: pd.DataFrame, out_dir, **meta) -> dict:
    """Write ``history.csv`` and ``summary.json`` (final metrics + ``meta``) to ``out_dir``."""
    out_dir = Path(out_dir)
    atomic_write_text(out_dir / "history.csv", history.to_csv(index=False))
    summary = {"status": "run", "methods": summarize(history), **meta}
    atomic_write_text(out_dir / "summary.json", json.dumps(summary, indent=2, default=str))
    return summary


def summary_table(summary: dict) -> pd.DataFrame:
    """Final test error, AUC and AP per method as 'mean ± std' strings ('± —' for one
    seed, which has no spread), for display."""
    rows = []
    for method, m in summary["methods"].items():
        spread = (lambda k: f"{m[k]['std']:.4f}") if m["n_seeds"] > 1 else (lambda k: "—")
        rows.append({"method": method, "seeds": m["n_seeds"], "epochs": m["epochs"],
                     **{k: f"{m[k]['mean']:.4f} ± {spread(k)}" for k in METRICS if k in m}})
    return pd.DataFrame(rows).set_index("method")


#: How a reading names the final metrics, and whether higher is better.
READ = {"test_error": ("test error", False), "test_auc": ("ROC AUC", True),
        "test_ap": ("average precision", True)}


def reading(summary: dict, method: str = "aapu", baseline: str = "nnpu") -> str:
    """Markdown: what the final means of ``method`` and ``baseline`` say together — which is
    better on each metric and, where test error and ranking (AUC, AP) disagree, what that
    means. Means over seeds, not a verdict: the verdict says whether a gap is beyond noise."""
    if not {method, baseline} <= set(summary.get("methods", {})):
        return ""
    a, b = summary["methods"][method], summary["methods"][baseline]
    labels = {m: get_method(m).label for m in (method, baseline)}
    shown = {k: (round(a[k]["mean"], 4), round(b[k]["mean"], 4)) for k in READ if k in a and k in b}
    better = {k: (x > y) == READ[k][1] for k, (x, y) in shown.items() if x != y}
    if not better:
        return ""
    said = "; ".join(f"{'better' if better[k] else 'worse'} {READ[k][0]} ({shown[k][0]:.4f} "
                     f"against {shown[k][1]:.4f})" for k in better)
    text = (f"On the seeds' means (not a verdict: the verdict says whether a gap is beyond "
            f"noise), {labels[method]} has, against {labels[baseline]}: {said}.")
    error, ranking = better.get("test_error"), {better[k] for k in ("test_auc", "test_ap") if k in better}
    if error is not None and ranking == {not error}:
        text += (f" Error and ranking disagree: {labels[method if error else baseline]}'s lower "
                 "error comes from where its threshold falls, not from ordering the test points "
                 "better.")
        if method == "aapu":
            text += (" Whether aaPU's gain is only a shifted threshold is what nnPUSB tests on "
                     "\"Where aaPU stands\".")
    elif error is not None and ranking == {error}:
        text += (f" Error and ranking agree: {labels[method if error else baseline]} both orders "
                 "the test points better and thresholds them better.")
    return text


def shown_path(path) -> str:
    """``path`` as a page shows it: relative to the folder the page runs in (the checkout,
    for the book), else with ``~`` for the home folder — never a build machine's absolute path."""
    path = Path(path).resolve()
    if path.is_relative_to(Path.cwd()):
        return str(path.relative_to(Path.cwd())) or "."
    return str(Path("~") / path.relative_to(Path.home())) if path.is_relative_to(Path.home()) else str(path)
