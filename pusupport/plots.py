"""Figures of the book: seaborn styling, learning curves, and saving to files."""
from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

#: One colour per method, the same on every page.
METHOD_COLORS = {"upu": "#7f7f7f", "nnpu": "#1f77b4", "aapu": "#d62728", "nnpu+p": "#2ca02c",
                 "naive": "#9467bd"}
METHOD_LABELS = {"upu": "uPU", "nnpu": "nnPU", "aapu": "aaPU", "nnpu+p": "nnPU + extra P",
                 "naive": "S added to P everywhere"}


def set_style() -> None:
    """The book's plotting style."""
    sns.set_theme(context="notebook", style="whitegrid", font_scale=1.0)
    plt.rcParams.update({"figure.dpi": 110, "savefig.dpi": 150, "savefig.bbox": "tight"})


def learning_curves(history: pd.DataFrame, metric: str = "test_error", ax=None,
                    ylabel: str = "test error (zero-one)", title: str | None = None):
    """Mean ± one standard deviation over seeds of ``metric`` per epoch, one line per method."""
    ax = ax or plt.subplots(figsize=(7, 4))[1]
    methods = list(dict.fromkeys(history.method))
    sns.lineplot(data=history, x="epoch", y=metric, hue="method", hue_order=methods,
                 palette={m: METHOD_COLORS.get(m, None) for m in methods},
                 errorbar="sd", ax=ax)
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles, [METHOD_LABELS.get(l, l) for l in labels], title=None)
    ax.set(ylabel=ylabel, xlabel="epoch", title=title)
    return ax


def save_figure(fig, out_dir, name: str) -> list[Path]:
    """Save ``fig`` as ``out_dir/name.png`` and ``.pdf``; return the paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / f"{name}.{ext}" for ext in ("png", "pdf")]
    for p in paths:
        fig.savefig(p)
    return paths
