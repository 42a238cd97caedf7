"""The forest plot of the readings: verdict colours, and a far reading kept off the axis."""
import matplotlib

matplotlib.use("Agg")
import math  # noqa: E402

import pandas as pd  # noqa: E402

from pusupport.book.plots import _far_rows, paired_intervals  # noqa: E402
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
