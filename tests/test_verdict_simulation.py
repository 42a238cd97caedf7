"""The verdict rule's error rates, simulated (fixed seed): what it says when nothing is there."""
import numpy as np
import pandas as pd

from pusupport.book.experiments.memorization import memorisation
from pusupport.book.verdicts import (CONTRADICTED, REPRODUCED, judge, judge_jointly,
                                     paired_difference)


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
