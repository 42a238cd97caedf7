"""Figures of the evidence behind the verdicts: each reading's interval, each seed's paired
difference with the interval and ±Δ it was judged on, and the standing page's forest plots,
coloured by verdict."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from .plots import legend_name


def _far_rows(reach: pd.Series, jump: float = 4.0) -> pd.Series:
    """Rows whose reach lies beyond the largest gap (≥ ``jump``×) between sorted reaches."""
    ordered = reach[reach > 0].sort_values()
    ratios = (ordered / ordered.shift()).iloc[1:]
    if ratios.empty or ratios.max() < jump:
        return reach > reach.max()
    return reach >= ordered[ratios.idxmax()]


def paired_intervals(table: pd.DataFrame, ax=None, value: str = "aaPU − nnPU",
                     xlabel: str = "aaPU − nnPU final test error (paired over seeds; < 0: aaPU better)",
                     said: dict | None = None):
    """Forest plot: each reading's paired difference (column ``value``) and its 95 % interval,
    coloured by verdict (columns "label", ``value``, "low", "high" and the verdict;
    ``table`` from :func:`pusupport.book.experiments.readings.run_readings`, or
    :func:`pusupport.book.answer.answer_table`). A row far beyond the others is drawn at the
    edge with its value written, so the rest stay legible. ``said``: the legend's words for
    a verdict, where they are not the verdict's own."""
    ax = ax or plt.subplots(figsize=(8, 0.45 * len(table) + 1.6))[1]
    mean, low, high = table[value], table["low"].fillna(table[value]), table["high"].fillna(table[value])
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
        ax.scatter([m], [y], color=c, zorder=3, label=(said or {}).get(v, v))
    ax.set_xlim(left - 0.02 * pad, right + 0.02 * pad)
    ax.axvline(0, color="0.3", lw=1, ls="--")
    ax.set_yticks(range(len(table)), table["label"])
    ax.invert_yaxis()
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    ax.legend(unique.values(), unique.keys(), loc="lower right", fontsize=8, frameon=True)
    ax.set_xlabel(xlabel)
    return ax


def verdict_colors() -> dict:
    """A colour per verdict: green reproduced, red contradicted (pale: by less than Δ),
    orange a gain of Δ ruled out; grey for every verdict withheld."""
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


def book_evidence(output_dir):
    """:func:`paired_differences` of every comparative claim of the book judged on the
    results under ``output_dir`` (the summary page's small multiples)."""
    from .registry import book_claims, judged
    return paired_differences(judged(output_dir, book_claims()), columns=2)


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
