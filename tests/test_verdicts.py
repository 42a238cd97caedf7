"""Paired intervals and the verdict rule on constructed inputs."""
import math

import numpy as np
import pytest
from scipy import integrate, stats

from pusupport.book.verdicts import (BORDERLINE, CONTRADICTED, DESCRIPTIVE, INCONCLUSIVE,
                                     MIN_SEEDS, REPRODUCED, RULED_OUT, SMALLER_GAIN, SMALLER_LOSS,
                                     UNSTABLE, Margin, Paired, judge, judge_jointly, judge_within,
                                     paired_difference)
from pusupport.book.signflip import holm, max_t_sign_flip, sign_flip_p_value
from pusupport.book.seeds import decides, min_seeds, seeds_needed

BASE = np.array([0.120, 0.100, 0.140, 0.110, 0.130, 0.125])
NOISE = np.array([0.002, -0.001, 0.0, 0.001, -0.002, 0.0005])


def test_the_interval_and_both_p_values_by_hand():
    p = paired_difference(BASE - 0.02 + NOISE, BASE)
    d = -0.02 + NOISE
    se = d.std(ddof=1) / math.sqrt(6)
    half = stats.t.ppf(0.975, 5) * se
    assert p.n == 6 and p.mean == pytest.approx(d.mean()) and p.sd == pytest.approx(d.std(ddof=1))
    assert (p.low, p.high) == pytest.approx((d.mean() - half, d.mean() + half))
    assert p.p_t == pytest.approx(stats.ttest_1samp(d, 0).pvalue)
    assert p.p_exact == pytest.approx(2 / 64)                # only "all negative" and "all positive"
    assert p.detectable == pytest.approx((stats.t.ppf(0.975, 5) + stats.t.ppf(0.80, 5)) * se)
    assert p.differences == pytest.approx(tuple(d))


def test_the_test_sets_part_by_hand():
    """Two seeds × four points of 0/1 errors: the two-way mean squares by hand, the interval
    widened by the test set's part with Satterthwaite's degrees of freedom."""
    from pusupport.book.verdicts import shared_test_variance
    a = np.array([[1, 1, 0, 0], [1, 0, 1, 0]])
    b = np.array([[0, 1, 0, 0], [0, 0, 0, 0]])
    d = a - b                                   # [[1, 0, 0, 0], [1, 0, 1, 0]]: mean 3/8
    n, N, grand = 2, 4, 3 / 8
    ms_seed = N * ((d.mean(1) - grand) ** 2).sum() / (n - 1)          # 4 · 2 · (1/8)² = 1/8
    ms_point = n * ((d.mean(0) - grand) ** 2).sum() / (N - 1)         # 2 · (0.390625 + 0.0625 · 3 + 0.015625)/3
    ss_res = ((d - d.mean(1, keepdims=True) - d.mean(0, keepdims=True) + grand) ** 2).sum()
    ms_res = ss_res / ((n - 1) * (N - 1))
    test, whole, df = shared_test_variance(a, b)
    assert test == pytest.approx((ms_point - ms_res) / (n * N))
    assert whole == pytest.approx((ms_seed + ms_point - ms_res) / (n * N))
    parts = [(ms_seed / 8, 1), (ms_point / 8, 3), (ms_res / 8, 3)]
    assert df == pytest.approx(whole ** 2 / sum(v ** 2 / k for v, k in parts))
    p = paired_difference(a.mean(1), b.mean(1), wrong=(a, b))
    assert p.se == pytest.approx(math.sqrt(whole)) and p.test_var == pytest.approx(test)
    assert (p.low, p.high) == pytest.approx((3 / 8 - stats.t.ppf(0.975, df) * p.se,
                                             3 / 8 + stats.t.ppf(0.975, df) * p.se))
    with pytest.raises(ValueError, match="seed order"):
        paired_difference(b.mean(1), a.mean(1), wrong=(a, b))


# --- the constructed cases -------------------------------------------------------

def test_five_seeds_all_negative_are_descriptive_only():
    p = paired_difference(BASE[:5] - 0.02 + NOISE[:5], BASE[:5])
    assert p.p_t < 0.001 and p.p_exact == pytest.approx(2 / 32)   # the exact test cannot reach 0.05
    j = judge(p, margin=0.01)
    assert j.verdict == DESCRIPTIVE and "5 seeds, a verdict needs 6" in j.text()
    assert MIN_SEEDS == 6


def test_six_seeds_all_negative_are_reproduced():
    j = judge(paired_difference(BASE - 0.02 + NOISE, BASE), margin=0.01)
    assert j.verdict == REPRODUCED and j.high < 0
    assert j.text() == f"reproduced: lowers the error by {-j.high:.4f} to {-j.low:.4f}"


def test_a_t_p_of_0_0498_is_borderline():
    p = Paired(8, -0.004, -0.00799, -0.00001, 0.0498, 0.03, 0.005, 0.004, (-0.004,) * 8)
    j = judge(p, margin=0.002)
    assert j.verdict == BORDERLINE and j.text() == "borderline (p = 0.050): no verdict"


def test_one_or_two_test_points_are_not_contradicted():
    points = np.array([1, 1, 1, 1, 2]) / 10_000
    assert judge(paired_difference(points, np.zeros(5)), margin=0.01, floor=2 / 10_000).verdict != CONTRADICTED
    eight = np.array([1, 1, 1, 1, 2, 1, 2, 1]) / 10_000            # enough seeds to be "significant"
    p = paired_difference(eight, np.zeros(8))
    assert p.p_t < 0.01 and p.p_exact < 0.01 and p.low > 0
    assert judge(p, margin=0.01).verdict == SMALLER_LOSS            # with no floor: a loss, below Δ
    assert judge(p, margin=1e-4).verdict == CONTRADICTED            # Δ inside the interval
    held = judge(p, margin=0.01, floor=2 / 10_000)     # the loss within the floor: Δ still ruled out
    assert held.verdict == RULED_OUT and "loss within 0.0002 of 0" in held.text()
    assert judge(p, margin=1e-4, floor=2 / 10_000).verdict == UNSTABLE


def test_the_synthetic_numbers_with_a_margin_of_0_01_rule_the_gain_out():
    p = Paired(10, 0.0027, -0.0009, 0.0063, 0.13, 0.14, 0.006, 0.005, ())
    j = judge(p, margin=0.01)
    assert j.verdict == RULED_OUT
    assert j.ruled_out() == "gains above 0.0009 ruled out at 95 %"
    assert j.text() == "a gain of Δ ruled out: no gain of Δ = 0.0100 or more"


# --- the rest of the rule ----------------------------------------------------------------

def test_a_wide_interval_is_inconclusive_with_the_seeds_a_decision_needs():
    d = np.array([0.03, -0.04, 0.02, -0.05, 0.01, -0.03])
    p = paired_difference(d, np.zeros(6))
    j = judge(p, margin=0.01)
    assert j.verdict == INCONCLUSIVE and j.low < -0.01 and j.high > 0
    need = seeds_needed(p.sd, 0.01, 6)
    assert need > 6 and decides(need, p.sd, 0.01) >= 0.8 > decides(need - 1, p.sd, 0.01)
    assert j.needed == need and j.text() == (f"inconclusive at this scale: about {need} seeds would "
                                             "give 80% power to decide at a true gain of Δ/2 (Δ = 0.0100)")
    assert seeds_needed(0.0, 0.01, 7) == 8 and seeds_needed(1.0, 1e-6, 6) is None
    assert "more than 1,000 seeds" in judge(p, margin=1e-6).text()


def test_contradicted_and_the_higher_is_better_orientation():
    worse = paired_difference(BASE + 0.02 + NOISE, BASE)
    j = judge(worse, margin=0.01)
    assert j.verdict == CONTRADICTED and j.text().startswith("contradicted: raises the error by")
    assert j.ruled_out() == "any gain ruled out at 95 %"
    assert judge(worse, margin=0.01, lower_is_better=False).verdict == REPRODUCED
    assert judge(paired_difference(BASE - 0.02 + NOISE, BASE), 0.01, lower_is_better=False).verdict == CONTRADICTED


def test_a_verdict_within_the_floor_of_its_boundary_is_unstable():
    p = Paired(10, -0.004, -0.0075, -0.0005, 0.002, 0.002, 0.003, 0.004, ())
    assert judge(p, 0.002, floor=0.0004).verdict == REPRODUCED
    j = judge(p, 0.002, floor=0.0006)
    assert j.verdict == UNSTABLE and "within 0.0006 of its boundary, the test set's resolution" in j.text()
    ruled = Paired(10, 0.001, -0.0095, 0.011, 0.6, 0.6, 0.01, 0.01, ())   # L within 0.0005 of −Δ
    assert judge(ruled, 0.01, floor=0.0004).verdict == RULED_OUT
    assert judge(ruled, 0.01, floor=0.0006).verdict == UNSTABLE


def test_the_exact_test_gates_a_verdict():
    """A t interval off zero is not enough when the sign-flip test says p ≥ 0.05."""
    p = Paired(8, -0.01, -0.019, -0.001, 0.001, 0.07, 0.01, 0.01, ())
    assert judge(p, 0.005).verdict == INCONCLUSIVE
    assert judge(p, 0.05).verdict == RULED_OUT


def test_no_spread_gives_no_interval_and_one_seed_is_descriptive():
    same = paired_difference([0.105, 0.125], [0.100, 0.120])
    assert same.low == pytest.approx(same.high) and same.p_t == 0.0
    assert "no spread: no interval" in same.describe()
    assert judge(same, 0.01).ruled_out() == "—"
    one = paired_difference([0.10], [0.20])
    assert one.n == 1 and math.isnan(one.low) and math.isnan(one.p_exact)
    assert judge(one, 0.01).verdict == DESCRIPTIVE and "1 seed, a verdict" in judge(one, 0.01).text()
    assert "single seed: no interval" in one.describe()
    assert paired_difference([0.1, 0.1, 0.1], [0.1, 0.1, 0.1]).p_t == 1.0


def test_sign_flip_p_value_is_exact():
    assert sign_flip_p_value([1.0, 2.0, 3.0]) == pytest.approx(2 / 8)
    assert sign_flip_p_value([1.0, -1.0]) == 1.0
    assert sign_flip_p_value([3.0, 1.0, 1.0]) == pytest.approx(2 / 8)
    assert sign_flip_p_value([1.0, 1.0, 0.0]) == pytest.approx(4 / 8)   # a zero's sign is free
    assert sign_flip_p_value(np.ones(16)) == pytest.approx(2 / 2 ** 16)
    assert sign_flip_p_value(np.ones(30)) == pytest.approx(2 / 2 ** 30)     # beyond 16 seeds
    assert sign_flip_p_value(np.ones(41)) == pytest.approx(1e-4)          # drawn: p ≥ 1/DRAWS


def test_the_exact_test_counts_what_enumerating_every_pattern_counts():
    import itertools
    rng = np.random.default_rng(0)
    for n in range(1, 13):
        for d in (rng.normal(0.3, 1, n), np.round(rng.normal(0, 1, n), 1), np.zeros(n)):
            signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
            enumerated = (np.abs(signs @ d / n) >= abs(d.mean()) - 1e-12).mean()
            assert sign_flip_p_value(d) == pytest.approx(enumerated, abs=1e-15), (n, d)
    assert sign_flip_p_value(["1.0", "2.0", "3.0"]) == pytest.approx(2 / 8)


def test_mismatched_or_empty_inputs_are_refused():
    for a, b in (([0.1, 0.2], [0.1]), ([], []), ([[0.1, 0.2]], [[0.1, 0.2]])):
        with pytest.raises(ValueError, match="one value per seed"):
            paired_difference(a, b)


def test_describe_shows_both_p_values():
    p = Paired(3, -0.012345, -0.03, 0.005, 0.1, 0.25, 0.02)
    assert p.describe() == ("-0.0123 [-0.0300, +0.0050], t-test p = 0.100, sign-flip p = 0.250, "
                            "detectable ≥ 0.0200")
    assert p.interval(2) == "-0.01 [-0.03, +0.01]"


def test_the_margin_is_a_share_of_the_baseline_never_below_a_few_test_points():
    m = Margin(relative=0.1, points=3, reason="r")
    assert m.value(0.065, 10_000) == pytest.approx(0.0065)
    assert m.value(0.002, 10_000) == pytest.approx(0.0003)
    assert m.value(-0.2, None) == pytest.approx(0.02)
    assert Margin().reason


# --- families ----------------------------------------------------------------------------

def test_holm_by_hand():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.001]) == pytest.approx([0.5, 0.002])
    assert holm([0.6, 0.9]) == pytest.approx([1.0, 1.0])


def test_bonferroni_within_a_family():
    p = paired_difference(BASE - 0.02 + NOISE, BASE)
    j = judge_within(p, 0.01, 0.0, family=5)
    assert j.p_t == pytest.approx(min(1, 5 * p.p_t)) and j.p_exact == pytest.approx(5 * 2 / 64)
    c = stats.t.ppf(1 - 0.05 / 10, 5) * p.sd / math.sqrt(6)
    assert (j.low, j.high) == pytest.approx((p.mean - c, p.mean + c))
    assert j.adjustment == "Bonferroni over 5" and j.verdict == DESCRIPTIVE    # 5 × 0.031 ≥ 0.05
    assert j.text() == "descriptive only: 6 seeds; a family of 5 needs 8"
    alone = judge_within(p, 0.01, 0.0, family=1)
    assert alone.verdict == REPRODUCED and alone.adjustment == ""
    eight = paired_difference(np.r_[BASE, BASE[:2]] - 0.02 + np.r_[NOISE, NOISE[:2]], np.r_[BASE, BASE[:2]])
    assert judge_within(eight, 0.01, 0.0, family=5).verdict != DESCRIPTIVE   # 5 × 2/256 < 0.05


def test_max_t_sign_flip_by_enumeration():
    d = np.array([[1.0, 0.5], [2.0, -0.5], [3.0, 1.0]])
    p_adj, critical = max_t_sign_flip(d)
    t = lambda x: x.mean(axis=0) / (x.std(axis=0, ddof=1) / math.sqrt(3))      # noqa: E731
    observed = np.abs(t(d))
    maxima = [np.abs(t(np.array(s)[:, None] * d)).max()
              for s in [(a, b, c) for a in (1, -1) for b in (1, -1) for c in (1, -1)]]
    assert p_adj == pytest.approx([np.mean([m >= o - 1e-9 for m in maxima]) for o in observed])
    assert critical == pytest.approx(sorted(maxima)[math.ceil(0.95 * 8) - 1])


def test_a_joint_family_is_judged_on_its_simultaneous_interval():
    rng = np.random.default_rng(1)
    shared = rng.normal(0, 0.01, (10, 1))
    d = shared + rng.normal(0, 0.002, (10, 3)) + np.array([-0.02, 0.0, 0.0])
    paireds = [paired_difference(d[:, j], np.zeros(10)) for j in range(3)]
    judged = judge_jointly(paireds, [0.005] * 3, [0.0] * 3)
    p_adj, c = max_t_sign_flip(d)
    for p, j, pe, pt in zip(paireds, judged, p_adj, holm([p.p_t for p in paireds])):
        assert (j.p_exact, j.p_t) == pytest.approx((pe, pt))
        assert (j.low, j.high) == pytest.approx((p.mean - c * p.sd / math.sqrt(10), p.mean + c * p.sd / math.sqrt(10)))
        assert j.high - j.low > p.high - p.low                      # wider than one 95 % interval
        assert j.adjustment == "max-|t| sign-flip over 3"
    with pytest.raises(ValueError, match="same seeds"):
        judge_jointly([paireds[0], paired_difference([0.1, 0.2], [0.0, 0.1])], [0.01] * 2, [0.0] * 2)


# --- boundaries and edge cases, each a line of the rule ----------------------------------

def P(low, high, p_t=0.001, p_exact=0.001, n=8, sd=0.01):
    """A paired difference with the interval and p-values given (exact binary values)."""
    return Paired(n, (low + high) / 2, low, high, p_t, p_exact, 0.0, sd, ())


def test_each_threshold_of_the_rule_at_its_boundary():
    assert judge(P(-0.5, 0.25, p_t=0.05), 0.75).verdict == RULED_OUT            # p = α: nothing shown
    assert judge(P(-0.5, 0.25, p_exact=0.05), 0.75).verdict == RULED_OUT
    assert judge(P(-0.75, -0.25, p_t=0.01), 0.5).verdict == BORDERLINE           # p = 0.01: borderline
    assert judge(P(0.0, 0.5), 0.25).verdict == RULED_OUT        # an end on 0: no loss shown, Δ ruled out
    assert judge(P(-0.5, 0.0), 0.25).verdict == INCONCLUSIVE     # no gain shown, Δ not ruled out
    assert judge(P(-0.5, 0.25, p_t=0.5, p_exact=0.5), 0.5).verdict == INCONCLUSIVE   # L = −Δ: not ruled out
    assert judge(P(-0.75, -0.25), 0.5, floor=0.25).verdict == REPRODUCED         # edge = floor: kept
    assert judge(P(0.25, 0.75), 0.5, floor=0.25).verdict == CONTRADICTED
    assert judge(P(-0.75, -0.25), 0.5, floor=0.375).verdict == UNSTABLE          # within it: withheld


def test_judged_text_and_what_is_ruled_out_verbatim():
    none = judge(P(0.0, 0.5, p_t=0.5, p_exact=0.5), 0.25)
    assert none.ruled_out() == "any gain ruled out at 95 %"
    wide = judge(P(-9.0, 1.0, p_t=0.5, p_exact=0.5, sd=1.0), 1e-6)
    assert wide.text() == ("inconclusive at this scale: more than 1,000 seeds would be needed for 80% "
                           "power to decide at a true gain of Δ/2 (Δ = 0.0000)")


def test_the_t_statistics_of_columns_without_spread():
    from pusupport.book.signflip import _t_statistics
    d = np.array([[0.5, -2.0, 0.0, 1.0, 1.0], [0.5, -2.0, 0.0, 1.0, 2.0], [0.5, -2.0, 0.0, 1.0, 3.0]])
    with np.errstate(all="raise"):                   # no warning escapes, no division by zero
        t = _t_statistics(d)
    assert list(t[:4]) == [np.inf, -np.inf, 0.0, np.inf]
    assert t[4] == pytest.approx(2.0 / (1.0 / math.sqrt(3)))


@pytest.mark.filterwarnings("error")
def test_a_family_with_a_member_without_spread_warns_nothing():
    d = np.array([[1.0, 0.1], [1.0, -0.2], [1.0, 0.3], [1.0, 0.2], [1.0, 0.1], [1.0, 0.0]])
    p_adj, critical = max_t_sign_flip(d)
    assert p_adj[0] == pytest.approx(2 / 64) and critical > 0


def test_the_critical_value_is_the_higher_95_percent_quantile():
    d = np.array([[1.0, 0.3], [2.0, -0.5], [3.0, 1.2], [-0.5, 0.7], [1.5, 0.1]])
    t = lambda x: x.mean(axis=0) / (x.std(axis=0, ddof=1) / math.sqrt(5))      # noqa: E731
    maxima = sorted(np.abs(t(np.array(s)[:, None] * d)).max()
                    for s in np.array(np.meshgrid(*[[1, -1]] * 5)).T.reshape(-1, 5))
    assert max_t_sign_flip(d)[1] == pytest.approx(maxima[30])       # ⌈0.95 · 31⌉ of 32, not interpolated


def test_families_keep_each_member_s_margin_and_floor():
    p = paired_difference(BASE - 0.02 + NOISE, BASE)
    for family in (1, 2, 5):
        j = judge_within(p, 0.0123, 0.0045, family)
        assert (j.margin, j.floor) == (0.0123, 0.0045)
        assert (j.adjustment == "") == (family == 1)
    two = judge_within(paired_difference([0.1, 0.3], [0.2, 0.25]), 0.01, 0.0, family=5)
    assert two.adjustment == "Bonferroni over 5" and two.p_t == 1.0 and two.p_exact == 1.0   # capped at 1
    joint = judge_jointly([p, p], [0.0123, 0.02], [0.0045, 0.001])
    assert [(j.margin, j.floor) for j in joint] == [(0.0123, 0.0045), (0.02, 0.001)]
    pair = paired_difference([0.1, 0.3], [0.2, 0.25])
    assert len(judge_jointly([pair, pair], [0.01] * 2, [0.0] * 2)) == 2      # two seeds are enough
    assert judge_jointly([p], [0.01], [0.0])[0].adjustment == "max-|t| sign-flip over 1"
    one = judge_jointly([paired_difference([0.1], [0.2])] * 2, [0.01] * 2, [0.0] * 2, across=5)
    assert [(j.verdict, j.family) for j in one] == [(DESCRIPTIVE, 5)] * 2     # one seed: each alone
    with pytest.raises(ValueError, match="^a joint family needs the same seeds"):
        judge_jointly([paired_difference([0.1], [0.2]), pair], [0.01] * 2, [0.0] * 2)


def test_seeds_needed_at_its_edges():
    """Never ≤ n, never below the family's exact-test minimum; more seeds for a noisier
    difference; None past ``most``."""
    assert seeds_needed(0.0, 0.01, 1) == MIN_SEEDS == min_seeds(1) == 6 and min_seeds(5) == 8
    assert seeds_needed(0.001, 1.0, 2) == 6 and seeds_needed(0.001, 1.0, 6) == 7
    assert seeds_needed(0.001, 1.0, 2, family=5) == 8
    assert seeds_needed(0.05, 0.02, 2) < seeds_needed(0.08, 0.02, 2)
    need = seeds_needed(0.05, 0.02, 2)
    assert seeds_needed(0.05, 0.02, 2, most=need) == need and seeds_needed(0.05, 0.02, 2, most=need - 1) is None


def test_the_power_of_a_decision_by_hand():
    """At a true gain of Δ/2 the rule decides when the mean falls above −Δ + b·s (a gain of
    Δ ruled out, whatever else is shown; b the larger of c95 and the exact test's bound
    z·√((k − 1)/(k − z²))) or below both −c99·s and −Δ + b·s (a gain shown, Δ not ruled
    out), s the standard error the sample SD gives: the mean's normal probability, averaged
    over the SD's χ² law."""
    k, sd, margin = 20, 0.01, 0.01
    se, mu = sd / math.sqrt(k), -margin / 2
    c95, c99, z = stats.t.ppf(0.975, k - 1), stats.t.ppf(0.995, k - 1), stats.norm.ppf(0.975)
    b = max(c95, z * math.sqrt((k - 1) / (k - z ** 2)))

    def given(s):
        return (stats.norm.sf((b * s - margin - mu) / se)
                + stats.norm.cdf((min(-c99 * s, b * s - margin) - mu) / se))
    chi = stats.chi2(k - 1)
    hand, _ = integrate.quad(lambda x: given(se * math.sqrt(x / (k - 1))) * chi.pdf(x), 0, np.inf)
    assert decides(k, sd, margin) == pytest.approx(hand, abs=2e-3)
    assert decides(1000, sd, margin) == pytest.approx(1.0)


def test_one_seed_and_text_values_in_full():
    one = paired_difference([0.10], [0.20])
    assert math.isnan(one.p_t) and math.isnan(one.detectable) and one.differences == pytest.approx((-0.1,))
    p = paired_difference(["0.10", "0.20", "0.30"], ["0.20", "0.25", "0.35"])
    assert p.mean == pytest.approx(-0.0667, abs=1e-4) and p.n == 3 and len(p.differences) == 3
    p = paired_difference([0.1, 0.2, 0.3], ["0.20", "0.25", "0.35"])
    assert p.mean == pytest.approx(-0.0667, abs=1e-4)
    same = paired_difference([0.105, 0.125], [0.100, 0.120])
    assert same.describe() == same.interval() == "+0.0050 at each of 2 seeds (no spread: no interval)"
    assert Paired(3, -0.012345, -0.03, 0.005, 0.1, 0.25, 0.02).interval() == "-0.0123 [-0.0300, +0.0050]"


def test_twenty_seeds_get_a_verdict_and_more_than_forty_a_sign_flip_p_value():
    """Above 16 seeds the max-|t| test draws its sign patterns (fixed seed, p ≥ 1/10,000),
    above 40 so does the sign-flip test: no crash, the same answer twice."""
    rng = np.random.default_rng(4)
    d = -0.02 + 0.005 * rng.standard_normal((20, 3))
    judged = judge_jointly([paired_difference(d[:, j], np.zeros(20)) for j in range(3)], [0.01] * 3, [0.0] * 3)
    assert [j.verdict for j in judged] == [REPRODUCED] * 3 and judged[0].p_exact == pytest.approx(1e-4)
    many = -0.02 + 0.005 * rng.standard_normal(50)
    assert sign_flip_p_value(many) == sign_flip_p_value(many) == pytest.approx(1e-4)
    assert sign_flip_p_value(rng.standard_normal(50)) > 0.01


def test_seeds_cannot_outrun_the_test_sets_sampling():
    """The advice counts the test set's part, which more seeds do not shrink: more seeds than
    without it, and none at all once that part alone hides a gain of Δ/2."""
    alone = seeds_needed(0.004, 0.01, 6)
    assert seeds_needed(0.004, 0.01, 6, test_var=0.001 ** 2) > alone
    assert seeds_needed(0.004, 0.01, 6, test_var=0.005 ** 2) is None
