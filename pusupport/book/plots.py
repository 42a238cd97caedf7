"""Figures of the book: seaborn styling, learning curves, and saving to files."""
from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator
import pandas as pd
import seaborn as sns
import torch

from ..core.methods import METHODS
from .registry import run_labels


def legend_name(label: str) -> str:
    """The name a run labelled ``label`` has in legends: its method's, or the one its
    experiment gives it."""
    return METHODS[label].label if label in METHODS else run_labels().get(label, (label,))[0]


def palette(labels) -> dict:
    """A colour for each run label: its method's, or its experiment's (None: seaborn's)."""
    return {l: METHODS[l].color if l in METHODS else run_labels().get(l, (l, None))[1]
            for l in labels}


def set_style() -> None:
    """The book's plotting style."""
    sns.set_theme(context="notebook", style="whitegrid", font_scale=1.0)
    plt.rcParams.update({"figure.dpi": 110, "savefig.dpi": 150, "savefig.bbox": "tight"})


def learning_curves(history: pd.DataFrame, metric: str = "test_error", ax=None,
                    ylabel: str = "test error (zero-one)", title: str | None = None,
                    each_seed: bool = False):
    """Mean ± one standard deviation over seeds of ``metric`` per epoch, one line per method
    (``each_seed``: one line per method and seed instead; epochs without an evaluation, NaN,
    are left out), zoomed to the curves after their first tenth of evaluations
    (:func:`zoom_after_start`)."""
    ax = ax or plt.subplots(figsize=(7, 4))[1]
    methods = list(dict.fromkeys(history.method))
    history = history.dropna(subset=[metric]).reset_index(drop=True)
    spread = dict(units="seed", estimator=None, lw=0.9) if each_seed else dict(errorbar="sd")
    sns.lineplot(data=history, x="epoch", y=metric, hue="method", hue_order=methods,
                 palette=palette(methods), ax=ax, **spread)
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles, [legend_name(l) for l in labels], title=None)
    ax.set(ylabel=ylabel, xlabel="epoch", title=title)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    zoom_after_start(ax, history, metric)
    return ax


def zoom_after_start(ax, history: pd.DataFrame, metric: str, skip: float = 0.1) -> None:
    """Set the y-axis to the bands (mean ± SD over seeds) from the first ``skip`` of the
    evaluated epochs on, padded by a tenth: the first epochs' large errors would squash the
    curves where the methods differ (they run off the top of the axis instead)."""
    epochs = sorted(history.epoch.unique())
    start = epochs[int(len(epochs) * skip)] if epochs else None
    stats = (history[history.epoch >= start].groupby(["method", "epoch"])[metric]
             .agg(["mean", "std"]).fillna(0.0)) if start is not None else None
    if stats is None or stats.empty:
        return
    low, high = (stats["mean"] - stats["std"]).min(), (stats["mean"] + stats["std"]).max()
    pad = 0.1 * (high - low) or 0.01 * max(abs(high), 1e-3)
    ax.set_ylim(low - pad, high + pad)


def save_figure(fig, out_dir, name: str) -> list[Path]:
    """Save ``fig`` as ``out_dir/name.png`` and ``.pdf``; return the paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / f"{name}.{ext}" for ext in ("png", "pdf")]
    for p in paths:
        fig.savefig(p)
    return paths


P_COLOR, N_COLOR = "#2ca02c", "#1f77b4"


def loss_histograms(panels: dict, u_truth, top_k: int, bins: int = 100):
    """Histograms of U's losses ℓ(−g(x)), true P green and true N blue.

    ``panels`` maps a row title to ``{"losses": {epoch: tensor}, "range": (lo, hi) or None}``
    (None: the range of that row's losses); losses of U's first rows only (a dry run) are
    matched with those rows' labels. Under each panel: purity of the
    ``top_k`` largest-loss U points.
    """
    from ..core.selection import top_k_purity
    epochs = sorted({e for p in panels.values() for e in p["losses"]})
    # sized for the page's content column (~7.5 in): text stays readable at 1280 px
    fig, axes = plt.subplots(len(panels), len(epochs), figsize=(2.6 * len(epochs), 2.2 * len(panels)),
                             squeeze=False)
    positive = (u_truth > 0).cpu().numpy()
    for row, (title, panel) in zip(axes, panels.items()):
        every = [v for v in panel["losses"].values()]
        lo, hi = panel["range"] or (min(float(v.min()) for v in every), max(float(v.max()) for v in every))
        for ax, epoch in zip(row, epochs):
            losses = panel["losses"][epoch]
            values, pos = losses.numpy(), positive[:len(losses)]      # a dry run scores U's first rows
            ax.hist([values[~pos], values[pos]], bins=bins, range=(lo, hi), stacked=True,
                    color=[N_COLOR, P_COLOR], label=["true N", "true P"])
            purity = top_k_purity(losses, u_truth.cpu()[:len(losses)], top_k)
            ax.text(0.97, 0.95, f"top-{top_k}\n{purity:.0%} P", transform=ax.transAxes, ha="right",
                    va="top", fontsize=9, bbox=dict(facecolor="white", alpha=0.8, lw=0, pad=1.5))
            ax.set_yscale("log")
            ax.tick_params(which="both", labelsize=8)
        row[0].set_ylabel(f"{title}\nU points (log)", fontsize=9)
    for ax, epoch in zip(axes[0], epochs):
        ax.set_title(f"epoch {epoch}", fontsize=10)
    for ax in axes[-1]:
        ax.set_xlabel("loss ℓ(−g(x))", fontsize=9)
    axes[0][-1].legend(loc="upper left", bbox_to_anchor=(1.02, 1), fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def selection_scatter(x_u, u_truth, losses, ks=(200, 300, 400)):
    """Synthetic U points with the ``k`` largest-loss ones marked, against x₂ = sin(x₁)."""
    import numpy as np

    from ..core.selection import top_losses
    x, positive = x_u.cpu().numpy(), (u_truth > 0).cpu().numpy()
    grid = np.linspace(0, 10, 400)
    fig, axes = plt.subplots(1, len(ks), figsize=(3.0 * len(ks), 3.2), sharey=True)
    for ax, k in zip(np.atleast_1d(axes), ks):
        top = top_losses(losses, k, torch.ones(len(losses), dtype=torch.bool)).numpy()
        ax.scatter(x[:, 0], x[:, 1], s=6, c="0.8", label="U")
        sel = x[top]
        ax.scatter(sel[:, 0], sel[:, 1], s=10, c=np.where(positive[top], P_COLOR, "#d62728"),
                   label="selected")
        ax.plot(grid, np.sin(grid), color="k", lw=1.2, label="sin boundary")
        ax.set(title=f"top {k}: {positive[top].mean():.1%} truly positive", xlabel="x₁")
    np.atleast_1d(axes)[0].set_ylabel("x₂")
    fig.tight_layout()
    return fig


def memorization_curves(history: pd.DataFrame, ax=None):
    """Training (dotted) and validation (solid, band ±1 SD over seeds) accuracy per epoch,
    one colour per noise rate; the validation majority-class rate (dashed) where the
    history has it; the legend beside the axes, clear of the curves."""
    ax = ax or plt.subplots(figsize=(7, 4))[1]
    palette = dict(zip(sorted(history.noise.unique()), sns.color_palette("viridis", history.noise.nunique())))
    for noise, rows in history.groupby("noise"):
        by_epoch = rows.groupby("epoch")[["train_accuracy", "val_accuracy"]]
        mean, sd = by_epoch.mean(), by_epoch.std(ddof=1)
        ax.plot(mean.index, mean.train_accuracy, ls=":", color=palette[noise], lw=2)
        ax.plot(mean.index, mean.val_accuracy, ls="-", color=palette[noise], lw=2,
                label=f"{noise:.0%} noise")
        if rows.seed.nunique() > 1:
            ax.fill_between(mean.index, mean.val_accuracy - sd.val_accuracy,
                            mean.val_accuracy + sd.val_accuracy, color=palette[noise], alpha=0.15, lw=0)
    if "majority" in history:
        ax.axhline(history.majority.iloc[0], color="0.35", ls="--", lw=1,
                   label=f"majority class ({history.majority.iloc[0]:.2f})")
    ax.plot([], [], ls=":", color="0.3", label="training (noisy labels)")
    ax.plot([], [], ls="-", color="0.3", label="validation (clean)")
    ax.set(xlabel="epoch", ylabel="accuracy")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    return ax


def selection_growth(history: pd.DataFrame, hue: str = "method"):
    """|S| and its purity per epoch (mean over seeds), one line per ``hue`` value."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.6))
    sns.lineplot(data=history, x="epoch", y="n_selected", hue=hue, errorbar="sd", ax=a)
    sns.lineplot(data=history.dropna(subset=["purity"]), x="epoch", y="purity", hue=hue,
                 errorbar="sd", ax=b, legend=False)
    a.set(ylabel="|S|")
    b.set(ylabel="purity of S (true-P fraction)")
    fig.tight_layout()
    return fig


def image_grid(images, titles, positive=None, columns: int = 8, axes=None):
    """A grid of images (N, C, H, W in [0, 1]) with titles, green/red by ``positive``
    (on ``axes``, a 2-D array of axes, when given)."""
    import numpy as np
    n = len(images)
    rows = max(1, -(-n // columns))
    fig = None
    if axes is None:
        fig, axes = plt.subplots(rows, columns, figsize=(1.6 * columns, 1.8 * rows), squeeze=False)
    for i, ax in enumerate(axes.flat):
        ax.axis("off")
        if i >= n:
            continue
        img = images[i].float().cpu().numpy().transpose(1, 2, 0)
        ax.imshow(img.squeeze(-1) if img.shape[-1] == 1 else np.clip(img, 0, 1), cmap="gray")
        color = "black" if positive is None else (P_COLOR if positive[i] else "#d62728")
        ax.set_title(titles[i], fontsize=9, color=color)
    if fig is not None:
        fig.tight_layout()
    return fig


def curves_beside_images(history: pd.DataFrame, images=None, titles=(), positive=None,
                         columns: int = 6):
    """Test error (and AUC where it is defined) per epoch, above an image grid if given —
    one column wide (7.5 in), so that titles stay readable in the rendered page."""
    metrics = [m for m in ("test_error", "test_auc") if history[m].notna().any()]
    rows = max(1, -(-len(images) // columns)) if images is not None else 0
    fig = plt.figure(figsize=(7.5, 3.2 + 1.45 * rows), layout="constrained")
    top, bottom = (fig.subfigures(2, 1, height_ratios=[3.2, 1.45 * rows]) if rows else (fig, None))
    axes = top.subplots(1, max(1, len(metrics)), squeeze=False).flat
    for ax, metric in zip(axes, metrics):
        learning_curves(history, metric, ax=ax, ylabel=metric.replace("_", " "))
    if not metrics:
        axes[0].axis("off")
        axes[0].text(0.5, 0.5, "no labelled test split: no test curve", ha="center", va="center")
    if bottom is not None:
        image_grid(images, titles, positive, columns, bottom.subplots(rows, columns, squeeze=False))
    return fig


def paired_curves(history: pd.DataFrame, method: str = "aapu", baseline: str = "nnpu",
                  metric: str = "test_error", ax=None):
    """``method`` − ``baseline`` per evaluated epoch, paired by seed: one thin line per seed,
    their mean and its 95 % t interval (band), zero (dashed); the y axis zoomed to the
    differences, not to the curves' early range."""
    from scipy.stats import t
    ax = ax or plt.subplots(figsize=(7, 3.6))[1]
    rows = history.dropna(subset=[metric])
    wide = rows.pivot_table(index="epoch", columns=["method", "seed"], values=metric)
    seeds = sorted(set(wide[method].columns) & set(wide[baseline].columns))
    diff = (wide[method][seeds] - wide[baseline][seeds]).dropna(how="all")   # epochs both evaluated
    if diff.empty:                           # e.g. a dry run: the methods visit other epochs
        ax.axis("off")
        ax.text(0, 0.5, f"{legend_name(method)} and {legend_name(baseline)} share no evaluated "
                "epoch here (a dry run?): no paired curve.", va="center")
        return ax
    for seed in seeds:
        ax.plot(diff.index, diff[seed], color="0.6", lw=0.7, alpha=0.8)
    mean = diff.mean(axis=1)
    color = palette([method])[method]
    ax.plot(mean.index, mean, color=color, lw=2.2, label=f"mean over {len(seeds)} seeds")
    if len(seeds) > 1:
        half = t.ppf(0.975, len(seeds) - 1) * diff.std(axis=1, ddof=1) / len(seeds) ** 0.5
        ax.fill_between(mean.index, mean - half, mean + half, color=color, alpha=0.2, lw=0,
                        label="95 % interval of the mean")
    ax.axhline(0, color="0.3", ls="--", lw=1)
    low, high = float(diff.min().min()), float(diff.max().max())
    pad = 0.08 * (high - low) or 0.001
    ax.set_ylim(min(low, 0) - pad, max(high, 0) + pad)
    ax.plot([], [], color="0.6", lw=0.7, label="one seed")
    ax.set(xlabel="epoch", ylabel=f"{legend_name(method)} − {legend_name(baseline)}\n"
           f"{metric.replace('_', ' ')} (< 0: {legend_name(method)} better)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    return ax


def variant_dots(last: pd.DataFrame, baseline: str, default: str | None = None,
                 metric: str = "test_error", ax=None):
    """Final ``metric`` of each variant as a dot (mean over seeds) with its 95 % t interval
    where there are several seeds, in the plan's order, beside ``baseline``'s mean (dashed)
    and interval (band); the axis zoomed to the values, not started at zero, so that
    near-equal variants can be told apart. ``default`` marks the variant run at the page's
    default settings."""
    from scipy.stats import t
    ax = ax or plt.subplots(figsize=(7.5, 3.8))[1]
    stats = last.groupby("method", sort=False)[metric].agg(["mean", "std", "count"])
    half = (t.ppf(0.975, (stats["count"] - 1).clip(lower=1)) * stats["std"] / stats["count"] ** 0.5
            ).where(stats["count"] > 1, 0.0)
    variants = [m for m in stats.index if m != baseline]
    color = palette(["aapu"])["aapu"]
    for y, m in enumerate(variants):
        ax.errorbar(stats.loc[m, "mean"], y, xerr=half[m] or None, fmt="o", color=color, capsize=3)
    if baseline in stats.index:
        ax.axvline(stats.loc[baseline, "mean"], color=palette([baseline]).get(baseline) or "0.3",
                   ls="--", lw=1.2, label=f"{legend_name(baseline)} (mean)")
    if baseline in stats.index and half[baseline]:
        base = stats.loc[baseline]
        ax.axvspan(base["mean"] - half[baseline], base["mean"] + half[baseline], color="0.5",
                   alpha=0.15, lw=0, label="its 95 % interval")
    ax.set_yticks(range(len(variants)),
                  [f"{m} (default)" if m == default else m for m in variants])
    ax.invert_yaxis()
    n = int(stats["count"].max())
    ax.set(xlabel=f"final {metric.replace('_', ' ')} "
           + (f"(mean of {n} seeds, 95 % interval)" if n > 1 else "(one seed: no interval)"))
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    return ax
