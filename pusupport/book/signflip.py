"""The exact tests behind the verdicts: the sign-flip test of one paired comparison over
seeds (all 2ⁿ sign patterns), the Westfall–Young max-|t| test of a family sharing its
seeds, and Holm's step-down adjustment."""
from __future__ import annotations

import itertools
import math
from functools import lru_cache

import numpy as np

from .seeds import ALPHA

#: Above this many seeds the max-|t| test draws :data:`DRAWS` sign patterns (fixed seed)
#: instead of enumerating all 2ⁿ; its p-values then resolve 1/DRAWS = 0.0001.
ENUMERATED, DRAWS = 16, 10_000


@lru_cache(maxsize=None)
def _sign_patterns(n: int) -> np.ndarray:
    """Every sign pattern of n seeds, or above :data:`ENUMERATED` the identity and
    DRAWS − 1 patterns drawn at random (the observed one counts, so p ≥ 1/DRAWS)."""
    if n <= ENUMERATED:
        patterns = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
    else:
        drawn = np.random.default_rng(0).choice((1.0, -1.0), size=(DRAWS - 1, n))
        patterns = np.vstack([np.ones((1, n)), drawn])
    patterns.flags.writeable = False
    return patterns


#: The most seeds the exact sign-flip test takes (2^(n/2) signed sums a side).
EXACT_SEEDS = 40


def _signed_sums(d: np.ndarray) -> np.ndarray:
    """The 2^len(d) sums Σ ±dᵢ."""
    sums = np.zeros(1)
    for x in d:
        sums = np.concatenate([sums + x, sums - x])
    return sums


def sign_flip_p_value(differences) -> float:
    """Two-sided exact p-value of mean 0: the share of the 2ⁿ sign patterns whose mean is at
    least as far from 0 as the observed one, counted by meeting in the middle (each half's
    2^(n/2) signed sums, one side sorted) up to :data:`EXACT_SEEDS` seeds; beyond, the share
    among :data:`DRAWS` patterns (the observed one and DRAWS − 1 drawn with a fixed seed)."""
    d = np.asarray(differences, dtype=float)
    n = len(d)
    target = abs(d.sum()) - n * 1e-12               # |mean| less the enumeration's tolerance
    if target <= 0:
        return 1.0
    if n > EXACT_SEEDS:
        return float((np.abs(_sign_patterns(n) @ d) >= target).mean())
    a, b = _signed_sums(d[: n // 2]), np.sort(_signed_sums(d[n // 2:]))
    beyond = (len(b) - np.searchsorted(b, target - a, side="left")      # a + b ≥ target
              + np.searchsorted(b, -target - a, side="right"))          # a + b ≤ −target
    return float(beyond.sum() / 2.0 ** n)


def holm(p_values) -> list[float]:
    """Holm's step-down adjusted p-values (same order as given)."""
    p = np.asarray(p_values)
    order = np.argsort(p)
    adjusted = np.maximum.accumulate(np.minimum(1.0, (len(p) - np.arange(len(p))) * p[order]))
    out = np.empty_like(p)
    out[order] = adjusted
    return out.tolist()


def _t_statistics(d: np.ndarray) -> np.ndarray:
    """Each column's mean / (SD / √n); 0 where a column is all zeros, ±inf where it has no spread."""
    n = d.shape[-2]
    mean, sd = d.mean(axis=-2), d.std(axis=-2, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / math.sqrt(n))
    return np.where(sd > 1e-12, t, np.where(mean == 0, 0.0, np.where(mean > 0, np.inf, -np.inf)))


def max_t_sign_flip(differences, alpha: float = ALPHA) -> tuple[list[float], float]:
    """Westfall–Young max-|t| test for a family sharing its seeds: ``differences`` is
    seeds × members; each seed's sign is flipped jointly across the members (keeping their
    correlation). Returns the adjusted p-values and the 1 − ``alpha`` critical value of max |t|."""
    d = np.asarray(differences)
    signs = _sign_patterns(d.shape[0])
    observed = np.nan_to_num(np.abs(_t_statistics(d)))                # ±inf: the largest float
    flipped = np.abs(_t_statistics(signs[:, :, None] * d[None]))      # patterns × members
    most = np.nan_to_num(flipped.max(axis=1))
    adjusted = [(most >= t * (1 - 1e-12)).mean() for t in observed]
    critical = float(np.quantile(most, 1 - alpha, method="higher"))
    return [float(p) for p in adjusted], math.inf if critical >= np.finfo(float).max else critical
