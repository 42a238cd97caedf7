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
    for ax, metric in zip(top.subplots(1, max(1, len(metrics)), squeeze=False).flat, metrics):
        learning_curves(history, metric, ax=ax, ylabel=metric.replace("_", " "))
    if bottom is not None:
        image_grid(images, titles, positive, columns, bottom.subplots(rows, columns, squeeze=False))
    return fig


def _far_rows(reach: pd.Series, jump: float = 4.0) -> pd.Series:
    """Rows whose reach lies beyond the largest gap (≥ ``jump``×) between sorted reaches."""
    ordered = reach[reach > 0].sort_values()
    ratios = (ordered / ordered.shift()).iloc[1:]
    if ratios.empty or ratios.max() < jump:
        return reach > reach.max()
    return reach >= ordered[ratios.idxmax()]


def paired_intervals(table: pd.DataFrame, ax=None):
    """Forest plot: each reading's paired aaPU − nnPU difference and its 95 % interval,
    coloured by verdict (columns "label", "aaPU − nnPU", "low", "high" and the verdict;
    ``table`` from :func:`pusupport.book.experiments.readings.run_readings`). A reading far
    beyond the others is drawn at the edge with its value written, so the rest stay legible."""
    ax = ax or plt.subplots(figsize=(8, 0.45 * len(table) + 1.6))[1]
    mean, low, high = table["aaPU − nnPU"], table["low"].fillna(table["aaPU − nnPU"]), \
        table["high"].fillna(table["aaPU − nnPU"])
    # too few seeds for the joint critical value: the interval spans everything (dotted)
    unbounded = pd.concat([low.abs(), high.abs()], axis=1).max(axis=1) >= 1e3
    low, high = low.where(~unbounded, mean), high.where(~unbounded, mean)
    far = _far_rows(pd.concat([low.abs(), high.abs()], axis=1).max(axis=1))
    left, right = min(0.0, low[~far].min()), max(0.0, high[~far].max())
    pad = 0.08 * (right - left) or 0.01
    left, right = left - pad, right + pad
    colors = verdict_colors()
    verdicts = table[[c for c in table.columns if c.startswith("verdict")][0]]
    for y, (m, lo, hi, v, out) in enumerate(zip(mean, low, high, verdicts, far)):
        c = colors.get(v, "0.5")
        if out:
            side, edge = (1, right) if m > 0 else (-1, left)
            ax.scatter([edge], [y], marker=">" if side > 0 else "<", color=c, s=60, zorder=3, clip_on=False)
            ax.annotate(f"{m:+.4f} [{lo:+.4f}, {hi:+.4f}], off the axis", (edge, y),
                        xytext=(-8 * side, 8), textcoords="offset points", fontsize=8,
                        ha="right" if side > 0 else "left", color=c)
            continue
        if unbounded.iloc[y]:
            ax.hlines(y, left, right, color=c, lw=1.2, ls=":")
            ax.annotate("interval unbounded at these seeds", (m, y), xytext=(0, 6),
                        textcoords="offset points", fontsize=8, ha="center", color=c)
        else:
            ax.hlines(y, lo, hi, color=c, lw=2.5)
        ax.scatter([m], [y], color=c, zorder=3, label=v)
    ax.set_xlim(left - 0.02 * pad, right + 0.02 * pad)
    ax.axvline(0, color="0.3", lw=1, ls="--")
    ax.set_yticks(range(len(table)), table["label"])
    ax.invert_yaxis()
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    ax.legend(unique.values(), unique.keys(), loc="lower right", fontsize=8, frameon=True)
    ax.set_xlabel("aaPU − nnPU final test error (paired over seeds; < 0: aaPU better)")
    return ax


def verdict_colors() -> dict:
    """A colour per verdict: green reproduced, red contradicted (pale: by less than Δ),
    orange the paper's gain ruled out; grey for every verdict withheld."""
    from .verdicts import CONTRADICTED, REPRODUCED, RULED_OUT, SMALLER_GAIN, SMALLER_LOSS, VERDICTS
    deep = sns.color_palette("deep")
    return {**dict.fromkeys(VERDICTS, "0.45"), REPRODUCED: deep[2], CONTRADICTED: deep[3],
            RULED_OUT: deep[1], SMALLER_GAIN: sns.color_palette("pastel")[2],
            SMALLER_LOSS: sns.color_palette("pastel")[3]}


def paired_differences(judged: list, columns: int = 2, axes=None):
    """The evidence behind comparative verdicts, one panel per (title, Judged) of ``judged``:
    each seed's paired difference (a dot), the mean and the interval it was judged on, the
    zero line and the ±Δ band, the axis zoomed to the data. Returns the figure."""
    if not judged:
        fig, ax = plt.subplots(figsize=(6, 0.6)) if axes is None else (axes.figure, axes)
        ax.axis("off")
        ax.text(0, 0.5, "No comparison was judged on these results (e.g. a dry run).", va="center")
        return fig
    rows = -(-len(judged) // columns) if len(judged) > 1 else 1
    columns = min(columns, len(judged))
    if axes is None:
        fig, axes = plt.subplots(rows, columns, figsize=(max(4.5 * columns, 7.5), 2.0 * rows + 0.7),
                                 squeeze=False)
    axes = list(axes.ravel()) if hasattr(axes, "ravel") else [axes]
    colors = verdict_colors()
    for ax, (title, j) in zip(axes, judged):
        d, c = list(j.paired.differences), colors.get(j.verdict, "0.45")
        ax.axvspan(-j.margin, j.margin, color="0.9", zorder=0, label="±Δ")
        ax.axvline(0, color="0.3", lw=1, ls="--")
        jitter = [0.12 * ((i * 0.618) % 1 - 0.5) for i in range(len(d))]
        ax.scatter(d, jitter, s=22, color="0.25", zorder=3, label="one seed")
        if j.high > j.low:
            ax.hlines(-0.3, j.low, j.high, color=c, lw=3)
        ax.scatter([j.paired.mean], [-0.3], color=c, s=45, zorder=4, marker="D", label=j.verdict)
        ends = [x for x in d + [j.low, j.high, -j.margin, j.margin] if x == x]
        pad = 0.08 * (max(ends) - min(ends)) or 0.001
        ax.set_xlim(min(ends) - pad, max(ends) + pad)
        ax.set_ylim(-0.55, 0.3)
        ax.set_yticks([])
        ax.set_title(f"{title}\n{j.verdict} (n = {j.paired.n})", fontsize=9, color=c)
        ax.tick_params(axis="x", labelsize=8)
    for ax in axes[len(judged):]:
        ax.set_visible(False)
    axes[0].figure.supxlabel("method − baseline, final test error, paired by seed (< 0: the method is "
                             "better)\nbar: the interval the verdict was judged on; grey band: ±Δ", fontsize=9)
    axes[0].figure.tight_layout()
    return axes[0].figure


def book_evidence(output_dir, profile: str = "cpu"):
    """:func:`paired_differences` of every comparative claim of the book judged on the
    results under ``output_dir`` (the summary page's small multiples)."""
    from .registry import book_claims, judged
    return paired_differences(judged(output_dir, book_claims(), profile), columns=2)


def forest(table: pd.DataFrame, metrics: dict, outcomes: dict):
    """One forest plot per data set (rows) and metric (columns): each method's mean
    difference method − aaPU over paired seeds with the interval it was judged on, coloured
    by ``outcomes`` ({outcome: colour}), zero (dashed) and each row's ±Δ (grey). ``table``:
    rows of (dataset, method, metric, difference, low, high, Δ, outcome, usable), † marking
    a counterfactual."""
    datasets = list(dict.fromkeys(table.dataset))
    height = 0.42 * table.method.nunique() * len(datasets) + 1.6
    fig, axes = plt.subplots(len(datasets), len(metrics), squeeze=False,
                             figsize=(3.0 * len(metrics), height))
    for row, dataset in zip(axes, datasets):
        for ax, (metric, name) in zip(row, metrics.items()):
            part = table[(table.dataset == dataset) & (table.metric == metric)].reset_index(drop=True)
            y = list(range(len(part)))[::-1]
            for yi, r in zip(y, part.itertuples()):
                ax.add_patch(plt.Rectangle((-r.Δ, yi - 0.3), 2 * r.Δ, 0.6, color="0.9", zorder=0, lw=0))
                c = outcomes.get(r.outcome, "0.45")
                if r.high > r.low:
                    ax.hlines(yi, r.low, r.high, color=c, lw=2.5, zorder=2)
                ax.scatter([r.difference], [yi], color=c, s=36, marker="D", zorder=3)
            ax.axvline(0, color="0.3", lw=1, ls="--")
            names = [legend_name(m) + ("" if u else " †") for m, u in zip(part.method, part.usable)]
            ax.set_yticks(y, names, fontsize=8)
            ax.set_ylim(-0.7, len(part) - 0.3)
            ax.tick_params(axis="x", labelsize=8)
            ax.set_title(f"{dataset}: {name}", fontsize=9)
            if ax is not row[0]:
                ax.set_yticklabels([])
    for ax, (metric, name) in zip(axes[-1], metrics.items()):
        better = "> 0" if metric == "test_error" else "< 0"
        ax.set_xlabel(f"method − aaPU ({better}: aaPU better)", fontsize=8)
    handles = [plt.Line2D([], [], color=c, marker="D", lw=2.5, label=o) for o, c in outcomes.items()]
    fig.legend(handles=handles, loc="upper center", ncol=len(handles), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
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
