"""How many seeds a paired comparison needs: the fewest whose exact sign-flip test can
decide in a family, and the seeds that decide with a stated power
(:func:`pusupport.book.verdicts.judge`'s rule)."""
from __future__ import annotations

import numpy as np

#: Significance level, and the level below which a shown difference is a verdict.
ALPHA, STRONG = 0.05, 0.01
#: The power and the true gain (a share of Δ) at which :func:`seeds_needed` advises.
POWER, ALTERNATIVE = 0.80, 0.5
#: Seed counts :func:`seeds_needed` tries at once.
TRIED = 64


def min_seeds(family: int = 1) -> int:
    """The fewest seeds whose exact sign-flip test can reach p < ALPHA once multiplied by
    ``family`` (Bonferroni): its smallest p is 2/2ⁿ (6 seeds alone, 8 in a family of 5)."""
    return next(n for n in range(1, 64) if family * 2 / 2 ** n < ALPHA)


def decides(k, sd: float, margin: float, family: int = 1, gain: float = ALTERNATIVE,
            test_var: float = 0.0):
    """The chance that ``k`` seeds reach a verdict when the true difference is a gain of
    ``gain`` × Δ with per-seed SD ``sd``, in a family of ``family`` (Bonferroni): the mean
    falls where the rule decides — a gain of Δ ruled out, whatever else is shown (the
    interval above −Δ, and the exact test of d + Δ, whose bound in standard errors is
    z·√((k − 1)/(k − z²)) in its normal approximation: the sign flips' spread holds the
    mean), or a gain shown at the strong level with −Δ inside the interval (reproduced; the
    band between the strong level and ALPHA is borderline, no verdict). Normal differences:
    the mean is normal and independent of the sample SD, whose χ² distribution is
    integrated over 256 quantiles. ``test_var``: the mean's variance from sampling a test
    set the seeds share, which more seeds do not shrink."""
    from scipy.stats import chi2, norm, t
    k = np.asarray(k, dtype=float)[..., None]
    q = (np.arange(256) + 0.5) / 256
    s = np.sqrt(sd ** 2 * chi2.ppf(q, k - 1) / (k - 1) / k + test_var)   # the SE each draw sees
    mu, se = -gain * margin, np.sqrt(sd ** 2 / k + test_var)
    c95, c99 = t.ppf(1 - ALPHA / (2 * family), k - 1), t.ppf(1 - STRONG / (2 * family), k - 1)
    z = norm.ppf(1 - ALPHA / (2 * family))
    bound = np.maximum(c95, z * np.sqrt((k - 1) / np.clip(k - z ** 2, 1e-12, None)))
    ruled = norm.sf((bound * s - margin - mu) / se)                       # a gain of Δ ruled out
    shown = norm.cdf((np.minimum(-c99 * s, bound * s - margin) - mu) / se)  # U₉₉ < 0, not ruled out
    return (ruled + shown).mean(axis=-1)


def seeds_needed(sd: float, margin: float, n: int, family: int = 1, most: int = 1000,
                 test_var: float = 0.0) -> int | None:
    """The fewest seeds, more than ``n`` and at least :func:`min_seeds` of the family, that
    decide with :data:`POWER` at a true gain of Δ/2 (:func:`decides`, the family's critical
    values) at this per-seed SD and test-set variance; None beyond ``most``. The seeds are
    tried :data:`TRIED` at a time, fewest first (each count's chance is its own: the same in
    any batch), so that an answer of a few dozen costs one batch, not a thousand."""
    k = np.arange(max(n + 1, min_seeds(family), 2), most + 1)
    if not sd > 0 and not test_var > 0:
        return int(k[0]) if len(k) else None
    for batch in np.split(k, range(TRIED, len(k), TRIED)):
        enough = np.flatnonzero(decides(batch, sd, margin, family, test_var=test_var) >= POWER)
        if len(enough):
            return int(batch[enough[0]])
    return None
