"""PU risk estimators on a mini-batch: uPU (Eq. 8), nnPU (Eq. 9) and aaPU (§3.3).

Scores are raw outputs ``g(x)``; the last dimension indexes samples, so a leading
dimension may index independent models (seeds). Every estimator returns a
:class:`Risk` that keeps apart the number to *report* and the number to
*differentiate* — with nnPU's non-negative correction the two differ.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .losses import get_loss


@dataclass(frozen=True)
class Risk:
    """One mini-batch evaluation of a PU risk.

    value: the risk estimate to report (and log).
    objective: the tensor to call ``backward()`` on (sum it over leading dims).
    positive: R̂_p, the positive part.
    negative: R̂_n, the negative part (may be below zero).
    corrected: True where nnPU's rule replaced the step by −γ·∇R̂_n.
    """

    value: torch.Tensor
    objective: torch.Tensor
    positive: torch.Tensor
    negative: torch.Tensor
    corrected: torch.Tensor


def check_prior(prior: float | torch.Tensor) -> float | torch.Tensor:
    """Validate a class prior π = p(y=+1); it must lie strictly between 0 and 1.

    A tensor holds one prior per leading member (vectorised seeds).
    """
    if torch.is_tensor(prior) and prior.is_floating_point() and bool(((prior > 0) & (prior < 1)).all()):
        return prior
    if not isinstance(prior, (int, float)) or not 0.0 < float(prior) < 1.0:
        raise ValueError(
            f"class prior must be a number in (0, 1), got {prior!r}: pass the "
            "positive-class fraction of the unlabelled data (e.g. prior=0.4)"
        )
    return float(prior)


def _check_scores(g_p: torch.Tensor, g_u: torch.Tensor) -> None:
    if g_p.shape[-1] == 0:
        raise ValueError("no labelled positive scores in the batch: P must not be empty")
    if g_u.shape[-1] == 0:
        raise ValueError("no unlabelled scores in the batch: U must not be empty")


def _negative_risk(g_p, g_u, prior, loss):
    """R̂_n = mean_U ℓ(−g) − π·mean_P ℓ(−g): the negative-class risk from P and U only."""
    return loss(-g_u).mean(-1) - prior * loss(-g_p).mean(-1)


def _non_negative(positive, negative, beta, gamma, correction: str = "kiryo") -> Risk:
    """Kiryo et al.'s update rule (their Algorithm 1, as in the official code).

    If R̂_n ≥ −β: report and step on R̂_p + R̂_n.
    Otherwise: report R̂_p − β and step on −γ·R̂_n alone (R̂_p's gradient is dropped).
    ``correction="clamp"`` reads Eq. 9's max literally instead: report and step on
    R̂_p + max(−β, R̂_n), so R̂_p (and aaPU's S) keeps its gradient on a corrected batch.
    """
    if beta < 0:
        raise ValueError(f"beta must be >= 0, got {beta!r} (nnPU uses beta=0)")
    if not 0 < gamma <= 1:
        raise ValueError(f"gamma must be in (0, 1], got {gamma!r} (nnPU uses gamma=1)")
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {CORRECTIONS}, got {correction!r}")
    corrected = negative < -beta
    value = torch.where(corrected, positive - beta, positive + negative)
    if correction == "clamp":
        objective = positive + torch.clamp(negative, min=-beta)
    else:
        objective = torch.where(corrected, -gamma * negative, positive + negative)
    return Risk(value.detach(), objective, positive.detach(), negative.detach(), corrected)


#: How a negative R̂_n is corrected: "kiryo" (Kiryo et al.'s step on −γ∇R̂_n, the official
#: code's and this book's reading) or "clamp" (Eq. 9's max(0, ·) as a plain clamp).
CORRECTIONS = ("kiryo", "clamp")


def upu_risk(g_p, g_u, prior: float, loss: str = "sigmoid") -> Risk:
    """Unbiased PU risk (Eq. 8): π·mean_P ℓ(g) + mean_U ℓ(−g) − π·mean_P ℓ(−g).

    Mini-batch estimator: each mean over the batch's P and U scores.
    """
    prior, ell = check_prior(prior), get_loss(loss)
    _check_scores(g_p, g_u)
    positive = prior * ell(g_p).mean(-1)
    negative = _negative_risk(g_p, g_u, prior, ell)
    total = positive + negative
    return Risk(total.detach(), total, positive.detach(), negative.detach(),
                torch.zeros_like(total, dtype=torch.bool))


def nnpu_risk(g_p, g_u, prior: float, loss: str = "logistic",
              beta: float = 0.0, gamma: float = 1.0, correction: str = "kiryo") -> Risk:
    """Non-negative PU risk (Kiryo et al. 2017; paper Eq. 9).

    R̂_p = π·mean_P ℓ(g), R̂_n = mean_U ℓ(−g) − π·mean_P ℓ(−g), combined by the
    non-negative update rule (see :func:`_non_negative`).
    """
    return aapu_risk(g_p, g_u, g_p.new_zeros(g_p.shape[:-1] + (0,)), prior, loss, beta, gamma,
                     correction=correction)


def aapu_risk(g_p, g_u, g_s, prior: float, loss: str = "logistic",
              beta: float = 0.0, gamma: float = 1.0, s_mask=None, s_weight: str = "labeled",
              correction: str = "kiryo") -> Risk:
    """aaPU risk (paper §3.3): nnPU whose positive risk also counts the selected set S.

    R̂_p = (π/n_p)·Σ_{x∈P∪S} ℓ(g(x)) — divided by the labelled P count n_p, so every
    point of S adds weight; R̂_n = mean_U ℓ(−g) − π·mean_P ℓ(−g) uses P and U only
    (S stays inside U and never enters the correction term). Mini-batch estimator:
    the batch's P and S scores over the batch's P count, batches keeping the
    P : U : S proportions. With S empty this is exactly nnPU. ``s_mask`` (same shape
    as ``g_s``) marks the real entries when S batches are padded (vectorised seeds).
    ``s_weight="union"`` is a reading the paper does not take: the sum over P ∪ S
    divided by n_p + |S| (a mean over P ∪ S), so S dilutes P instead of adding weight.
    ``correction``: see :func:`_non_negative`.
    """
    prior, ell = check_prior(prior), get_loss(loss)
    _check_scores(g_p, g_u)
    if s_weight not in S_WEIGHTS:
        raise ValueError(f"s_weight must be one of {S_WEIGHTS}, got {s_weight!r}")
    s_loss = ell(g_s) if s_mask is None else ell(g_s) * s_mask
    n_positive = g_p.shape[-1]
    if s_weight == "union":
        n_positive = n_positive + (g_s.shape[-1] if s_mask is None else s_mask.sum(-1))
    positive = prior * (ell(g_p).sum(-1) + s_loss.sum(-1)) / n_positive
    negative = _negative_risk(g_p, g_u, prior, ell)
    return _non_negative(positive, negative, beta, gamma, correction)


#: How S's losses are weighted in aaPU's positive risk: "labeled" (π/n_p, the paper's
#: Eq.) or "union" (π/(n_p + |S|)).
S_WEIGHTS = ("labeled", "union")


def pn_risk(g_p, g_n, prior: float, loss: str = "logistic") -> Risk:
    """Supervised (PN) risk (paper Eq. 1): π·mean_P ℓ(g) + (1 − π)·mean_N ℓ(−g).

    Used for ordinary training on ±1 labels (the memorisation experiment, and the
    P-vs-U classifier behind the prior estimates), with π the positive fraction.
    """
    prior, ell = check_prior(prior), get_loss(loss)
    _check_scores(g_p, g_n)
    positive = prior * ell(g_p).mean(-1)
    negative = (1 - prior) * ell(-g_n).mean(-1)
    total = positive + negative
    return Risk(total.detach(), total, positive.detach(), negative.detach(),
                torch.zeros_like(total, dtype=torch.bool))


def naive_risk(g_p, g_u, g_s, prior: float, loss: str = "logistic",
                beta: float = 0.0, gamma: float = 1.0, s_mask=None) -> Risk:
    """Ablation: S simply joins the labelled positives everywhere.

    nnPU (Eq. 9) with X_p ∪ S as the positive sample — so S enters the positive
    risk *and* the −π·ℓ(−g) correction, with means over |P ∪ S|. The paper argues
    against this (§3.3): S is biased towards easy positives. ``s_mask``: as in
    :func:`aapu_risk`; the means then count S's real entries only.
    """
    if s_mask is None:
        return nnpu_risk(torch.cat([g_p, g_s], -1), g_u, prior, loss, beta, gamma)
    prior, ell = check_prior(prior), get_loss(loss)
    _check_scores(g_p, g_u)
    n = g_p.shape[-1] + s_mask.sum(-1)
    positive = prior * (ell(g_p).sum(-1) + (ell(g_s) * s_mask).sum(-1)) / n
    negative = ell(-g_u).mean(-1) - prior * (ell(-g_p).sum(-1) + (ell(-g_s) * s_mask).sum(-1)) / n
    return _non_negative(positive, negative, beta, gamma)



def negative_selection_risk(g_p, g_u, g_n, prior: float, loss: str = "logistic",
                            beta: float = 0.0, gamma: float = 1.0, n_mask=None) -> Risk:
    """The counterpart of aaPU that the paper's title argues against: a selected set N ⊂ U
    of confident negatives counted again as negatives, at a U point's weight.

    R̂ = π·mean_P ℓ(g) + (1/n_u)·Σ_{x∈N} ℓ(−g(x)) + max(0, mean_U ℓ(−g) − π·mean_P ℓ(−g)),
    under Kiryo et al.'s rule. As S in aaPU, N stays inside U and stays out of the
    correction term; 1/n_u is the weight a negative of U carries in R̂_n, as π/n_p is a
    labelled positive's in R̂_p. Mini-batch estimator: the batch's N over its U count.
    With N empty this is exactly nnPU. N's term is the part the rule never drops, so it
    is reported inside ``positive`` (the logged ``risk_positive``), beside π·mean_P ℓ(g).
    """
    prior, ell = check_prior(prior), get_loss(loss)
    _check_scores(g_p, g_u)
    n_loss = ell(-g_n) if n_mask is None else ell(-g_n) * n_mask
    positive = prior * ell(g_p).mean(-1) + n_loss.sum(-1) / g_u.shape[-1]
    negative = _negative_risk(g_p, g_u, prior, ell)
    return _non_negative(positive, negative, beta, gamma)
