"""The verdict rule's less travelled lines, on exact binary values: a gain or a loss
smaller than Δ and how close it may sit to the floor, each verdict's text verbatim, the
standard error from the seeds alone and with a shared test set's part, and families of
one or two seeds; and that worse evidence never gets a weaker verdict."""
import math
from dataclasses import replace

import numpy as np
import pytest

from pusupport.book.signflip import max_t_sign_flip, sign_flip_p_value
from pusupport.book.verdicts import (BORDERLINE, CONTRADICTED, DESCRIPTIVE, INCONCLUSIVE,
                                     REPRODUCED, RULED_OUT, SMALLER_GAIN, SMALLER_LOSS, UNSTABLE,
                                     Paired, judge, judge_jointly, judge_within, paired_difference,
                                     shared_test_variance)


def P(low, high, n=8, sd=0.5, **kw):
    """A paired difference with the interval given and both p-values at 0.001."""
    return Paired(n, (low + high) / 2, low, high, 0.001, 0.001, 0.0, sd, (), **kw)


def test_a_gain_or_loss_smaller_than_delta_and_its_distance_to_the_floor():
    """Deciding ends: a smaller gain rests on U against 0 and on L against −Δ, whichever is
    nearer; a loss on L against 0 alone (with a gain of Δ ruled out either way, where its
    interval's top falls beside Δ describes it); L = −Δ (U = Δ) is still the full verdict."""
    assert judge(P(-0.75, -0.25), 0.75).verdict == REPRODUCED                  # L = −Δ
    assert judge(P(0.25, 0.75), 0.75).verdict == CONTRADICTED                   # U = Δ
    small_gain = P(-0.625, -0.5)                                               # edges 0.5 and 0.125
    assert judge(small_gain, 0.75, floor=0.125).verdict == SMALLER_GAIN
    assert judge(small_gain, 0.75, floor=0.25).verdict == UNSTABLE
    small_loss = P(0.5, 0.625)                                                 # edges 0.5 and 0.125
    assert judge(small_loss, 0.75, floor=0.25).verdict == SMALLER_LOSS
    held = judge(small_loss, 0.75, floor=0.625)          # the loss within the floor of 0
    assert held.verdict == RULED_OUT and "a loss within 0.6250 of 0" in held.text()


def test_each_verdict_s_text_verbatim():
    assert judge(P(-0.75, -0.25), 0.5).text() == "reproduced: lowers the error by 0.2500 to 0.7500"
    assert judge(P(-0.625, -0.5), 0.75).text() == ("a gain smaller than Δ: lowers the error by 0.5000 "
                                                  "to 0.6250, less than Δ = 0.7500")
    assert judge(P(0.25, 0.75), 0.5).text() == "contradicted: raises the error by 0.2500 to 0.7500"
    assert judge(P(0.5, 0.625), 0.75).text() == ("a loss smaller than Δ: raises the error by 0.5000 "
                                                 "to 0.6250, less than Δ = 0.7500")
    one = paired_difference([0.25], [0.5])
    assert judge_within(one, 0.125, 0.0, family=2).text() == "descriptive only: 1 seed; a family of 2 needs 7"
    assert judge(one, 0.125).text() == "descriptive only: 1 seed, a verdict needs 6"
    two = paired_difference([0.25, 0.5], [0.5, 0.5])
    assert judge_within(two, 0.125, 0.0, family=2).text() == "descriptive only: 2 seeds; a family of 2 needs 7"


def test_inconclusive_says_when_no_number_of_seeds_decides_on_this_test_set():
    """The advice is None both beyond 1,000 seeds and where the test set's part alone hides
    a gain of Δ/2; the text tells them apart by that part (0: seeds would, at some number)."""
    wide = dict(p_t=0.5, p_exact=0.5, detectable=0.0, differences=())
    hidden = Paired(8, 0.0, -1.0, 1.0, sd=0.5, se=0.5, df=7.0, test_var=0.25, **wide)
    assert judge(hidden, 0.125).verdict == INCONCLUSIVE
    assert judge(hidden, 0.125).text() == ("inconclusive at this scale: no number of seeds on this test "
                                           "set gives 80% power to decide at a true gain of Δ/2 (Δ = 0.1250)")
    seeds = Paired(8, 0.0, -9.0, 1.0, sd=1.0, se=0.5, df=7.0, test_var=0.0, **wide)
    assert judge(seeds, 1e-6).text().startswith("inconclusive at this scale: more than 1,000 seeds would be")
    family = judge(Paired(8, 0.0, -1.0, 1.0, sd=0.5, **wide), 0.5, family=4)
    assert family.text().endswith("at a true gain of Δ/2 (Δ = 0.5000, a family of 4)")


def test_the_seeds_alone_give_the_standard_error_and_n_minus_1_degrees():
    four = Paired(4, 0.0, -1.0, 1.0, 0.5, 0.5, 0.0, sd=0.5)
    assert (four.se, four.df) == (0.25, 3)
    two = Paired(2, 0.0, -1.0, 1.0, 0.5, 0.5, 0.0, sd=0.5)
    assert (two.se, two.df) == (0.5 / math.sqrt(2), 1)
    assert math.isnan(Paired(1, 0.0, math.nan, math.nan, math.nan, math.nan, math.nan).se)


@pytest.mark.parametrize("a, b, se, test_var, df", [
    ([[1, 1], [0, 0]], [[0, 0], [0, 0]], 0.5, 0.0, 1.0),        # the seeds differ, the points do not
    ([[1, 0], [1, 0]], [[0, 0], [0, 0]], 0.5, 0.25, 1.0),       # the points differ, the seeds do not
    ([[1, 0], [0, 0]], [[0, 0], [0, 0]], 0.25, 0.0, 1.0),       # MS_point = MS_res: no test-set part
    ([[1, 0], [0, 1]], [[1, 0], [0, 1]], 0.0, 0.0, 1.0),        # the same errors: no spread at all
])
def test_the_standard_error_by_hand_on_two_seeds_and_two_points(a, b, se, test_var, df):
    a, b = np.array(a, dtype=bool), np.array(b, dtype=bool)     # as the runs keep them
    p = paired_difference(a.mean(1), b.mean(1), wrong=(a, b))
    assert (p.se, p.test_var, p.df) == (se, test_var, df)


def test_the_two_way_mean_squares_on_three_seeds():
    """n = 3 (the two-seed cases cannot tell n − 1 from 1): MS_seed = N·Σ(seed mean − grand)²/(n − 1)."""
    d = np.array([[1, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]])   # only the seeds differ
    test, whole, df = shared_test_variance(d, np.zeros_like(d))
    ms_seed = 4 * ((1 - 1 / 3) ** 2 + 2 * (1 / 3) ** 2) / 2
    assert (test, df) == (0.0, 2) and whole == pytest.approx(ms_seed / 12)
    assert shared_test_variance(np.ones((3, 4)), np.ones((3, 4))) == (0.0, 0.0, 2)


def test_per_point_errors_must_give_the_values_to_rounding():
    a = np.array([[1, 1, 0, 0], [1, 1, 1, 0]])
    with pytest.raises(ValueError, match="^the per-point errors do not give the per-seed values: pass "
                                         "each seed's errors in the values' seed order$"):
        paired_difference(a.mean(1) + 5e-9, a.mean(1), wrong=(a, a))     # 0 given as 5e-9: refused
    p = paired_difference(a.mean(1), np.zeros(2), wrong=(a, np.zeros_like(a)))
    assert p.mean == 0.625


def test_families_of_one_and_two_seeds():
    """One seed: each member judged alone with its own Δ and floor, at the family's seed
    minimum; two seeds go through the joint test (its critical value is unbounded there)."""
    one = [paired_difference([0.25], [0.5]), paired_difference([0.5], [0.25])]
    judged = judge_jointly(one, [0.125, 0.25], [0.0625, 0.03125], across=3)
    assert [(j.margin, j.floor, j.family, j.verdict) for j in judged] == [
        (0.125, 0.0625, 3, DESCRIPTIVE), (0.25, 0.03125, 3, DESCRIPTIVE)]
    assert judge_within(one[0], 0.125, 0.0, family=5).family == 5
    two = [paired_difference([0.25, 0.5], [0.5, 0.75]), paired_difference([0.25, 0.5], [0.5, 0.5])]
    judged = judge_jointly(two, [0.125] * 2, [0.0] * 2, across=2)
    assert judged[0].adjustment == "max-|t| sign-flip over 2, Bonferroni over 2 families"
    assert (judged[0].low, judged[0].high) == (-math.inf, math.inf)     # no spread, unbounded


def test_a_family_among_others_is_judged_at_alpha_over_their_number():
    rng = np.random.default_rng(7)
    d = -0.02 + 0.01 * rng.standard_normal((10, 2)) + np.array([0.0, 0.02])
    paireds = [paired_difference(d[:, j], np.zeros(10)) for j in range(2)]
    judged = judge_jointly(paireds, [0.01] * 2, [0.0] * 2, across=3)
    critical = max_t_sign_flip(d, 0.05 / 3)[1]
    assert critical != max_t_sign_flip(d)[1]
    for p, j in zip(paireds, judged):
        assert (j.low, j.high) == pytest.approx((p.mean - critical * p.se, p.mean + critical * p.se))
        assert 0 < j.p_exact <= 1.0 and 0 < j.p_t <= 1.0 and j.family == 3
    assert judged[1].p_exact == 1.0 and judged[1].p_t == 1.0          # a null member, capped at 1
    six = [paired_difference(d[:6, 0], np.zeros(6))]
    assert judge_jointly(six, [0.01], [0.0], across=4)[0].text() == ("descriptive only: 6 seeds; a "
                                                                      "family of 4 needs 8")


#: The order of the verdicts on "the method is better by Δ", from for to against it; the
#: verdicts withheld (no verdict) sit between a gain shown and a gain of Δ ruled out.
AGAINST = {REPRODUCED: 0, BORDERLINE: 1, INCONCLUSIVE: 1, UNSTABLE: 1, SMALLER_GAIN: 2,
           RULED_OUT: 3, SMALLER_LOSS: 4, CONTRADICTED: 4}


def shifted(p: Paired, by: float) -> Paired:
    """``p`` with every seed's difference moved by ``by`` (its spread and test-set part kept)."""
    from scipy import stats
    d = np.asarray(p.differences) + by
    mean = p.mean + by
    return replace(p, mean=mean, low=p.low + by, high=p.high + by, differences=tuple(d),
                   p_t=float(2 * stats.t.sf(abs(mean) / p.se, p.df)), p_exact=sign_flip_p_value(d))


def test_worse_evidence_never_gets_a_weaker_verdict_against_the_claim():
    """Fashion-MNIST's committed paper-scale differences (aaPU − nnPU, the interval covering
    the test set) moved by −0.0005, 0 and +0.0005, and on a finer grid: the verdict on "aaPU
    is better by Δ" never moves towards the claim as the evidence gets worse for aaPU. (Under
    rule 5 they read "ruled out", "borderline, no verdict", "contradicted".)"""
    from pusupport.book import registry
    from pusupport.book.claims import floor_for, judge_claims
    from pusupport.book.reference import REFERENCE
    claim = [(c, page) for c, page in registry.book_claims() if page == "real_fashion_mnist"]
    summary, outcome = judge_claims(REFERENCE / "paper", claim, registry.family_sizes())[0]
    p, judged = outcome.paired, outcome.judged
    assert p.n == 10 and p.test_var > 0
    verdicts = {by: judge_within(shifted(p, by), judged.margin, floor_for(summary), judged.family)
                for by in (-0.0005, 0.0, 0.0005)}
    assert [verdicts[by].verdict for by in (-0.0005, 0.0)] == [RULED_OUT, RULED_OUT]
    assert "a loss borderline" in verdicts[0.0].text()
    assert AGAINST[verdicts[0.0005].verdict] >= AGAINST[RULED_OUT]
    grid = [judge_within(shifted(p, by), judged.margin, floor_for(summary), judged.family).verdict
            for by in np.linspace(-0.02, 0.02, 161)]
    ranks = [AGAINST[v] for v in grid]
    assert ranks == sorted(ranks) and {ranks[0], ranks[-1]} == {0, 4}
