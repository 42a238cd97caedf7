"""The verdict rule's error rates, simulated (fixed seed): what it says when nothing is there."""
import numpy as np
import pandas as pd

from pusupport.book.experiments.memorization import memorisation
from pusupport.book.verdicts import (CONTRADICTED, REPRODUCED, RULED_OUT, SMALLER_GAIN, SMALLER_LOSS,
                                     judge, judge_jointly, judge_within, paired_difference)
from pusupport.book.seeds import min_seeds, seeds_needed


def test_nine_correlated_null_readings_keep_the_family_wise_rate():
    """9 readings sharing one baseline's noise per seed (10 seeds), no true difference, 2,000
    draws: the rate of any adjusted "contradicted" stays at or below 5 %."""
    rng = np.random.default_rng(0)
    wrong = 0
    for _ in range(2000):
        d = rng.normal(0, 0.01, (10, 1)) + rng.normal(0, 0.005, (10, 9))
        judged = judge_jointly([paired_difference(d[:, j], np.zeros(10)) for j in range(9)],
                               [0.005] * 9, [0.0] * 9)
        wrong += any(j.verdict == CONTRADICTED for j in judged)
    assert wrong / 2000 <= 0.05


def test_a_collapse_mixture_gives_few_false_verdicts():
    """No true difference, each method collapsing on 20 % of seeds (error +0.3), 10 seeds:
    reproduced or contradicted in at most 3 % of 2,000 draws."""
    rng = np.random.default_rng(1)
    wrong = 0
    for _ in range(2000):
        a, b = (0.1 + rng.normal(0, 0.005, 10) + 0.3 * (rng.random(10) < 0.2) for _ in range(2))
        wrong += judge(paired_difference(a, b), 0.01).verdict in (REPRODUCED, CONTRADICTED)
    assert wrong / 2000 <= 0.03


def test_a_flat_noisy_memorisation_curve_is_not_a_fall():
    """Validation accuracy flat at 0.6 with binomial noise (2,000 points, 20 epochs, one
    seed): "reproduced" in at most 5 % of 1,000 draws; a real fall is found."""
    rng = np.random.default_rng(2)

    def curve(accuracy):
        return pd.DataFrame({"noise": 0.4, "seed": 0, "epoch": np.arange(1, 21),
                             "val_accuracy": rng.binomial(2000, accuracy) / 2000, "train_accuracy": 0.5})
    flat = sum(memorisation({"n_test": 2000}, curve(np.full(20, 0.6))).verdict == REPRODUCED
               for _ in range(1000))
    assert flat / 1000 <= 0.05
    fall = np.r_[np.linspace(0.55, 0.68, 8), np.linspace(0.66, 0.60, 12)]
    assert memorisation({"n_test": 2000}, curve(fall)).verdict == REPRODUCED


def test_the_advised_seeds_decide_at_the_stated_alternative():
    """At a true gain of Δ/2 the advised seeds reach a verdict in at least 80 % of 2,000 draws
    (normal differences, the per-seed SD the advice was given), alone and in a family of 5;
    with no true difference, a difference is shown in at most 5 % of them."""
    shown = (REPRODUCED, SMALLER_GAIN, CONTRADICTED, SMALLER_LOSS)
    rng = np.random.default_rng(3)
    for sd, family in ((0.004, 1), (0.003, 5)):
        k = seeds_needed(sd, 0.01, 6, family)
        assert k > 6 and k >= min_seeds(family)
        verdicts = [judge_within(paired_difference(rng.normal(-0.005, sd, k), np.zeros(k)), 0.01, 0.0,
                                 family).verdict for _ in range(2000)]
        assert np.isin(verdicts, [*shown, RULED_OUT]).mean() >= 0.80
        null = [judge_within(paired_difference(rng.normal(0, sd, k), np.zeros(k)), 0.01, 0.0,
                             family).verdict for _ in range(2000)]
        assert np.isin(null, shown).mean() <= 0.05


def _shared_test_set(rng, gap: float, n: int = 10, n_test: int = 7532, draws: int = 2000):
    """Each draw: a test set of ``n_test`` points sampled from a population of 100,000 (each
    point with its own error rates: the baseline's in [0.3, 0.6], the method's differing by
    a point effect of SD 0.08 centred on ``gap``), ``n`` seeds shifting the method's rates
    (SD 0.004), the two methods' errors correlated through shared uniforms. Yields each
    draw's per-point errors (seeds × points, method then baseline); the population's mean
    difference is ``gap``."""
    baseline = rng.uniform(0.35, 0.65, 100_000)
    effect = np.clip(rng.normal(0, 0.2, 100_000), -0.3, 0.3)
    method = baseline + effect - effect.mean() + gap
    for _ in range(draws):
        points = rng.integers(0, 100_000, n_test)
        shift = np.clip(rng.normal(0, 0.004, (n, 1)), -0.02, 0.02)
        u = rng.random((n, n_test))
        v = np.where(rng.random((n, n_test)) < 0.8, u, rng.random((n, n_test)))
        yield u < method[points] + shift, v < baseline[points]


def test_the_interval_covers_the_test_sets_sampling():
    """A test split shared by the seeds (7,532 points, 10 seeds, 2,000 draws): the interval
    with the test set's part covers the population's mean difference in 95 ± 1.5 % of draws;
    the seeds-only interval, which holds the test set fixed, visibly less often."""
    rng = np.random.default_rng(4)
    new = old = 0
    for a, b in _shared_test_set(rng, gap=-0.01):
        with_test = paired_difference(a.mean(1), b.mean(1), wrong=(a, b))
        seeds_only = paired_difference(a.mean(1), b.mean(1))
        new += with_test.low <= -0.01 <= with_test.high
        old += seeds_only.low <= -0.01 <= seeds_only.high
    assert 0.935 <= new / 2000 <= 0.965
    assert old / 2000 < 0.88


def test_no_difference_rarely_gives_a_verdict_on_a_shared_test_set():
    """No difference in the population, the same design: a difference shown (reproduced,
    contradicted or a smaller gain or loss) in at most 5 % of 2,000 draws."""
    shown = (REPRODUCED, SMALLER_GAIN, CONTRADICTED, SMALLER_LOSS)
    rng = np.random.default_rng(5)
    found = sum(judge(paired_difference(a.mean(1), b.mean(1), wrong=(a, b)), 0.01).verdict in shown
                for a, b in _shared_test_set(rng, gap=0.0))
    assert found / 2000 <= 0.05


def test_rounding_as_large_as_seed_noise_keeps_the_rule_s_error_rates():
    """Why the measured run-to-run spread is not a floor: let rounding (another thread count,
    bf16) move each run by as much as another seed does — per-seed differences μ + e_s + r_s,
    e_s the seed's, r_s the build's, both N(0, 0.004) — and judge two builds of the same 10
    seeds. With no true difference a difference is shown in at most 5 % of 2,000 draws; at a
    true gain of Δ "the paper's gain ruled out" in at most 5 %; and the two builds never reach
    opposite verdicts (a gain against a loss). The rounding only widens the interval."""
    shown = (REPRODUCED, SMALLER_GAIN, CONTRADICTED, SMALLER_LOSS)
    gains, losses = (REPRODUCED, SMALLER_GAIN), (CONTRADICTED, SMALLER_LOSS)
    rng = np.random.default_rng(5)
    margin, n = 0.008, 10
    for mu, wrong in ((0.0, shown), (-margin, (RULED_OUT,))):
        rate = opposite = 0
        for _ in range(2000):
            seed = rng.normal(mu, 0.004, n)
            a, b = (judge(paired_difference(seed + rng.normal(0, 0.004, n), np.zeros(n)), margin, 2e-4).verdict
                    for _ in range(2))
            rate += a in wrong
            opposite += (a in gains and b in losses) or (a in losses and b in gains)
        assert rate / 2000 <= 0.05 and opposite == 0
