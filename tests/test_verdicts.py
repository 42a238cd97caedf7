"""Paired intervals and verdicts on constructed inputs."""
import math

import numpy as np
import pytest
from scipy import stats

from pusupport.book.verdicts import (CONTRADICTED, INCONCLUSIVE, REPRODUCED, paired_difference,
                                sign_flip_p_value, verdict)

BASE = np.array([0.120, 0.100, 0.140, 0.110, 0.130])


def test_a_known_improvement_is_reproduced():
    noise = np.array([0.002, -0.001, 0.0, 0.001, -0.002])
    p = paired_difference(BASE - 0.02 + noise, BASE)
    assert p.n == 5 and p.mean == pytest.approx(-0.02)
    d = -0.02 + noise
    half = stats.t.ppf(0.975, 4) * d.std(ddof=1) / math.sqrt(5)
    assert (p.low, p.high) == pytest.approx((-0.02 - half, -0.02 + half))
    assert p.high < 0 and verdict(p) == REPRODUCED
    assert p.p_value == pytest.approx(2 / 32)           # only "all negative" and "all positive"
    assert verdict(p, lower_is_better=False) == CONTRADICTED


def test_no_difference_is_inconclusive_never_not_reproduced():
    noise = np.array([0.01, -0.01, 0.005, -0.005, 0.0])
    p = paired_difference(BASE + noise, BASE)
    assert p.mean == pytest.approx(0.0, abs=1e-12) and p.low < 0 < p.high
    assert verdict(p) == INCONCLUSIVE and p.p_value == 1.0
    assert p.detectable > p.high - p.mean                # it could not see a difference this small


def test_a_known_worsening_is_contradicted():
    p = paired_difference(BASE + np.array([0.03, 0.031, 0.029, 0.03, 0.032]), BASE)
    assert p.low > 0 and verdict(p) == CONTRADICTED


def test_one_seed_gives_no_interval():
    p = paired_difference([0.10], [0.20])
    assert p.n == 1 and p.mean == pytest.approx(-0.10)
    assert math.isnan(p.low) and math.isnan(p.high) and math.isnan(p.p_value)
    assert verdict(p) == INCONCLUSIVE and "single seed: no interval" in p.describe()


def test_identical_differences_give_no_verdict():
    """Two seeds whose errors differ by the same quantum (e.g. one test point) are no evidence."""
    p = paired_difference([0.105, 0.125], [0.100, 0.120])
    assert p.low == pytest.approx(p.high) and verdict(p) == INCONCLUSIVE
    assert "no spread: no interval" in p.describe()
    assert verdict(p, lower_is_better=False) == INCONCLUSIVE


def test_pairing_matters_where_seeds_differ_a_lot():
    """A constant gain under large seed-to-seed variation: unpaired it is noise, paired it is not."""
    base = np.array([0.05, 0.30, 0.12, 0.22, 0.08, 0.18])
    p = paired_difference(base - 0.01, base + np.array([0, 1e-3, -1e-3, 0, 5e-4, -5e-4]))
    assert verdict(p) == REPRODUCED
    assert stats.ttest_ind(base - 0.01, base).pvalue > 0.5


def test_sign_flip_p_value_is_exact():
    assert sign_flip_p_value([1.0, 2.0, 3.0]) == pytest.approx(2 / 8)
    assert sign_flip_p_value([1.0, -1.0]) == 1.0
    assert sign_flip_p_value([3.0, 1.0, 1.0]) == pytest.approx(2 / 8)
    assert sign_flip_p_value([1.0, 1.0, 0.0]) == pytest.approx(4 / 8)   # a zero's sign is free
    assert sign_flip_p_value(np.ones(16)) == pytest.approx(2 / 2 ** 16)
    with pytest.raises(ValueError, match="n ≤ 16"):
        sign_flip_p_value(np.ones(17))
    assert sign_flip_p_value(["1.0", "2.0", "3.0"]) == pytest.approx(2 / 8)   # values read as text


def test_mismatched_or_empty_inputs_are_refused():
    with pytest.raises(ValueError, match="one value per seed"):
        paired_difference([0.1, 0.2], [0.1])
    with pytest.raises(ValueError, match="one value per seed"):
        paired_difference([], [])
    with pytest.raises(ValueError, match="one value per seed"):
        paired_difference([[0.1, 0.2]], [[0.1, 0.2]])


def test_two_seeds_already_give_an_interval_and_a_verdict():
    p = paired_difference([0.10, 0.20], [0.2001, 0.30])
    assert p.n == 2 and p.high < 0 and verdict(p) == REPRODUCED
    assert p.describe().startswith("-0.1000 [")
    assert p.p_value == pytest.approx(2 / 4)


def test_the_detectable_difference_is_the_80_percent_power_bound():
    d = np.array([0.01, -0.02, 0.005, 0.0, 0.015, -0.01])
    p = paired_difference(d, np.zeros(6))
    se = d.std(ddof=1) / math.sqrt(6)
    assert p.detectable == pytest.approx((stats.t.ppf(0.975, 5) + stats.t.ppf(0.80, 5)) * se)
    assert math.isnan(paired_difference([0.1], [0.2]).detectable)


def test_an_interval_touching_zero_is_inconclusive():
    from pusupport.book.verdicts import Paired
    touching_above, touching_below = Paired(5, -0.1, -0.2, 0.0, 0.1, 0.05), Paired(5, 0.1, 0.0, 0.2, 0.1, 0.05)
    for p in (touching_above, touching_below):
        assert verdict(p) == INCONCLUSIVE and verdict(p, lower_is_better=False) == INCONCLUSIVE


def test_values_held_as_python_objects_are_read_as_numbers():
    import pandas as pd
    p = paired_difference(pd.Series([0.1, 0.2, 0.3], dtype=object), pd.Series([0.2, 0.25, 0.35], dtype=object))
    assert p.mean == pytest.approx(-0.0667, abs=1e-4) and p.low < p.high


def test_higher_is_better_metrics_reverse_the_sides():
    from pusupport.book.verdicts import Paired
    gain = Paired(5, 0.7, 0.5, 0.9, 0.06, 0.1)                   # e.g. an AUC gain of 0.5 to 0.9
    assert verdict(gain, lower_is_better=False) == REPRODUCED and verdict(gain) == CONTRADICTED


def test_values_read_as_text_are_numbers():
    p = paired_difference(["0.10", "0.20", "0.30"], ["0.20", "0.25", "0.35"])
    assert p.mean == pytest.approx(-0.0667, abs=1e-4) and p.n == 3


def test_describe_shows_four_decimals():
    from pusupport.book.verdicts import Paired
    assert Paired(3, -0.012345, -0.03, 0.005, 0.25, 0.02).describe() == (
        "-0.0123 [-0.0300, +0.0050], sign-flip p = 0.250, detectable ≥ 0.0200")
