"""Results on disk: tidy per-epoch histories (CSV) and final summaries (JSON)."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pandas as pd


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file and an atomic rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


#: History columns that name a setting within one page (e.g. the prior page's π given):
#: its runs are summarised per method and setting, "aapu (×0.8)".
SETTING_COLUMNS = ("prior_label", "dataset")


#: The final-epoch metrics a summary keeps (those a history has): the error at the method's
#: threshold, and two that need none.
METRICS = ("test_error", "test_auc", "test_ap")


def summarize(history: pd.DataFrame, metrics=METRICS) -> dict:
    """Final-epoch metrics per method (and setting): mean, std over seeds (ddof=1) and
    number of seeds; a metric the history lacks (an older run's AP) is left out."""
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
        for m in (m for m in metrics if m in rows):
            out[name][m] = {"mean": float(rows[m].mean()),
                            "std": float(rows[m].std(ddof=1)) if len(rows) > 1 else 0.0}
    return out


def save_results(history: pd.DataFrame, out_dir, **meta) -> dict:
    """Write ``history.csv`` and ``summary.json`` (final metrics + ``meta``) to ``out_dir``."""
    out_dir = Path(out_dir)
    atomic_write_text(out_dir / "history.csv", history.to_csv(index=False))
    summary = {"status": "run", "methods": summarize(history), **meta}
    atomic_write_text(out_dir / "summary.json", json.dumps(summary, indent=2, default=str))
    return summary


def summary_table(summary: dict) -> pd.DataFrame:
    """Final test error, AUC and AP per method as 'mean ± std' strings, for display."""
    rows = []
    for method, m in summary["methods"].items():
        rows.append({"method": method, "seeds": m["n_seeds"], "epochs": m["epochs"],
                     **{k: f"{m[k]['mean']:.4f} ± {m[k]['std']:.4f}" for k in METRICS if k in m}})
    return pd.DataFrame(rows).set_index("method")


def shown_path(path) -> str:
    """``path`` as a page shows it: relative to the folder the page runs in (the checkout,
    for the book), else with ``~`` for the home folder — never a build machine's absolute path."""
    path = Path(path).resolve()
    if path.is_relative_to(Path.cwd()):
        return str(path.relative_to(Path.cwd())) or "."
    return str(Path("~") / path.relative_to(Path.home())) if path.is_relative_to(Path.home()) else str(path)
