"""Paired comparisons over seeds and the book's four verdicts.

A method and its baseline share each seed's data, so the per-seed difference
d_s = metric(method, s) − metric(baseline, s) is what is tested: its mean, a 95 %
t interval, an exact sign-flip permutation p-value (all 2ⁿ sign patterns), and the
smallest difference n seeds could detect (two-sided 5 %, power 80 %).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

REPRODUCED, CONTRADICTED, INCONCLUSIVE, NOT_RUN = (
    "reproduced", "contradicted", "inconclusive at this scale", "not run here")
VERDICTS = (REPRODUCED, CONTRADICTED, INCONCLUSIVE, NOT_RUN)


@dataclass(frozen=True)
class Paired:
    """The paired difference method − baseline over ``n`` seeds (NaN where n < 2)."""

    n: int
    mean: float
    low: float
    high: float
    p_value: float
    detectable: float

    def interval(self, digits: int = 4) -> str:
        """The mean and its 95 % interval, e.g. "-0.0123 [-0.0300, +0.0050]"."""
        if self.n < 2:
            return f"{self.mean:+.{digits}f} (single seed: no interval)"
        if not self.high > self.low:
            return f"{self.mean:+.{digits}f} at each of {self.n} seeds (no spread: no interval)"
        return f"{self.mean:+.{digits}f} [{self.low:+.{digits}f}, {self.high:+.{digits}f}]"

    def describe(self, digits: int = 4) -> str:
        """:meth:`interval` with the sign-flip p-value and the detectable difference."""
        if not self.high > self.low:
            return self.interval(digits)
        return (f"{self.interval(digits)}, sign-flip p = {self.p_value:.3f}, "
                f"detectable ≥ {self.detectable:.{digits}f}")


def _t_quantile(q: float, df: int) -> float:
    from scipy.stats import t
    return float(t.ppf(q, df))


def sign_flip_p_value(differences) -> float:
    """Two-sided exact p-value of mean 0: the share of the 2ⁿ sign patterns whose mean is at
    least as far from 0 as the observed one (n ≤ 16)."""
    d = np.asarray(differences, dtype=float)
    if len(d) > 16:
        raise ValueError(f"{len(d)} seeds: the exact test enumerates 2^n patterns; use n ≤ 16")
    observed = abs(d.mean())
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(d))))
    return float((np.abs(signs @ d / len(d)) >= observed - 1e-12).mean())


def paired_difference(method, baseline) -> Paired:
    """Paired method − baseline over seeds (sequences of equal length, in seed order)."""
    a, b = np.asarray(method, dtype=float), np.asarray(baseline, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or len(a) == 0:
        raise ValueError(f"need one value per seed for both, got shapes {a.shape} and {b.shape}")
    d = a - b
    n, mean = len(d), float(d.mean())
    if n < 2:
        return Paired(1, mean, math.nan, math.nan, math.nan, math.nan)
    se = float(d.std(ddof=1)) / math.sqrt(n) if np.ptp(d) > 1e-12 else 0.0   # equal up to rounding
    half = _t_quantile(0.975, n - 1) * se
    detectable = (_t_quantile(0.975, n - 1) + _t_quantile(0.80, n - 1)) * se
    return Paired(n, mean, mean - half, mean + half, sign_flip_p_value(d), detectable)


def verdict(paired: Paired, lower_is_better: bool = True) -> str:
    """Reproduced: the interval lies entirely on the paper's side of 0; contradicted:
    entirely on the other side; otherwise inconclusive at this scale — also with one seed,
    and when every seed's difference is the same (a zero-width interval measures no noise)."""
    if paired.n < 2 or not paired.high > paired.low:
        return INCONCLUSIVE
    better, worse = (paired.high < 0, paired.low > 0) if lower_is_better else (paired.low > 0, paired.high < 0)
    return REPRODUCED if better else CONTRADICTED if worse else INCONCLUSIVE
