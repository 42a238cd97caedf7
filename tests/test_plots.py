"""The forest plot of the readings: verdict colours, and a far reading kept off the axis."""
import matplotlib

matplotlib.use("Agg")
import io  # noqa: E402
import math  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from pusupport.book.evidence import _far_rows, paired_intervals  # noqa: E402
from pusupport.book.verdicts import CONTRADICTED, INCONCLUSIVE  # noqa: E402

VERDICT = "verdict on “aaPU is better”"


def table(rows):
    return pd.DataFrame(rows, columns=["label", "aaPU − nnPU", "low", "high", VERDICT])


def test_a_far_reading_is_an_arrow_at_the_edge_and_the_rest_set_the_axis():
    t = table([("book", 0.003, -0.001, 0.006, INCONCLUSIVE),
               ("sigmoid", 0.034, 0.025, 0.043, CONTRADICTED),
               ("never re-pick", 0.30, 0.286, 0.313, CONTRADICTED)])
    assert _far_rows(pd.Series([0.006, 0.043, 0.313])).tolist() == [False, False, True]
    ax = paired_intervals(t)
    low, high = ax.get_xlim()
    assert low < -0.001 and 0.043 < high < 0.1                 # the far reading does not set it
    notes = [c.get_text() for c in ax.texts]
    assert notes == ["+0.3000 [+0.2860, +0.3130], off the axis"]
    assert sorted(t.get_text() for t in ax.get_legend().get_texts()) == sorted({INCONCLUSIVE, CONTRADICTED})


def test_close_readings_and_a_single_seed_are_all_on_the_axis():
    t = table([("a", 0.003, -0.001, 0.006, INCONCLUSIVE), ("b", -0.002, math.nan, math.nan, INCONCLUSIVE),
               ("c", 0.010, 0.004, 0.016, CONTRADICTED)])
    assert not _far_rows(pd.Series([0.006, 0.002, 0.016])).any()
    ax = paired_intervals(t)
    assert len(ax.texts) == 0 and ax.get_xlim()[0] < -0.002 and ax.get_xlim()[1] > 0.016


def test_zero_width_intervals_still_give_an_axis():
    t = table([("a", 0.0, 0.0, 0.0, INCONCLUSIVE), ("b", 0.005, 0.005, 0.005, INCONCLUSIVE)])
    assert not _far_rows(pd.Series([0.0, 0.005])).any()
    low, high = paired_intervals(t).get_xlim()
    assert low < 0 < 0.005 < high


def test_the_paired_differences_figure_has_a_zoomed_panel_per_claim():
    from pusupport.book.evidence import paired_differences
    from pusupport.book.verdicts import judge, paired_difference
    gain = judge(paired_difference(np.array([0.10, 0.12, 0.11, 0.13, 0.12, 0.11]),
                                   np.array([0.12, 0.13, 0.13, 0.15, 0.13, 0.13])), 0.005)
    null = judge(paired_difference(np.array([0.30, 0.31, 0.29, 0.30, 0.32, 0.30]),
                                   np.array([0.30, 0.30, 0.30, 0.31, 0.31, 0.29])), 0.03)
    fig = paired_differences([("a", gain), ("b", null), ("c", gain)])
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == 3 and len(fig.axes) == 4                     # 2 × 2, the last one hidden
    assert axes[0].get_title().startswith("a\nreproduced (n = 6)")
    low, high = axes[0].get_xlim()
    assert low <= min(gain.paired.differences) and high >= gain.margin and high < 0.02   # zoomed
    low, high = axes[1].get_xlim()
    assert low <= -0.03 and high >= 0.03                              # ±Δ in view
    dots = next(c for c in axes[0].collections if len(c.get_offsets()) == 6).get_offsets()[:, 0]
    assert np.allclose(sorted(dots), sorted(gain.paired.differences))
    empty = paired_differences([])
    assert "No comparison was judged" in empty.axes[0].texts[0].get_text()


def test_the_paired_curves_plot_each_seed_s_gap_and_zoom_to_it():
    """Errors 0.50, 0.40 (nnPU) and 0.49, 0.41 (aaPU) at epoch 2 for two seeds: the gaps
    are −0.01 and +0.01, the mean line 0, and the axis spans the gaps, not the errors."""
    from pusupport.book.plots import paired_curves
    rows = [(m, s, e, err) for m, errs in (("nnpu", {(0, 1): 0.6, (1, 1): 0.6, (0, 2): 0.50, (1, 2): 0.40}),
                                            ("aapu", {(0, 1): 0.58, (1, 1): 0.61, (0, 2): 0.49, (1, 2): 0.41}))
            for (s, e), err in errs.items()]
    h = pd.DataFrame(rows, columns=["method", "seed", "epoch", "test_error"])
    ax = paired_curves(h)
    seeds, mean = ax.lines[0], ax.lines[2]
    assert np.allclose(seeds.get_ydata(), [-0.02, -0.01]) and np.allclose(mean.get_ydata(), [-0.005, 0.0])
    low, high = ax.get_ylim()
    assert -0.03 < low < -0.02 and 0.01 < high < 0.02


def test_the_paired_curves_say_so_when_the_methods_share_no_evaluated_epoch():
    from pusupport.book.plots import paired_curves
    h = pd.DataFrame([("nnpu", 0, 1, 0.5), ("aapu", 0, 2, 0.4)],
                     columns=["method", "seed", "epoch", "test_error"])
    ax = paired_curves(h)
    assert "share no evaluated epoch" in ax.texts[0].get_text()


def test_variant_dots_keep_the_plan_order_mark_the_default_and_zoom_to_the_values():
    from pusupport.book.plots import variant_dots
    rows = [("nnpu", s, 0.101 + s / 1000) for s in range(3)] + [
        (f"n_select={n}", s, 0.094 + n / 100_000 + s / 1000) for n in (40, 80, 160, 320) for s in range(3)]
    last = pd.DataFrame(rows, columns=["method", "seed", "test_error"])
    ax = variant_dots(last, "nnpu", default="n_select=80")
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["n_select=40", "n_select=80 (default)", "n_select=160", "n_select=320"]
    low, high = ax.get_xlim()
    assert 0.08 < low < 0.094 and 0.102 < high < 0.12          # not started at zero
    assert "mean of 3 seeds, 95 % interval" in ax.get_xlabel()
    one = variant_dots(last[last.seed == 0], "nnpu")
    assert "one seed: no interval" in one.get_xlabel()
    matplotlib.pyplot.close("all")


def test_an_unbounded_interval_too_few_seeds_is_a_dotted_line_not_a_305_digit_label():
    t = table([("a", -0.0005, -9e304, 9e304, INCONCLUSIVE), ("b", 0.0015, 0.0015, 0.0015, INCONCLUSIVE)])
    ax = paired_intervals(t)
    low, high = ax.get_xlim()
    assert -0.01 < low < -0.0005 and 0.0015 < high < 0.01
    assert [x.get_text() for x in ax.texts] == ["interval unbounded at these seeds"]
    ax.figure.savefig(io.BytesIO(), bbox_inches="tight")
    assert ax.figure.get_tightbbox().width < 12          # inches, not 88
