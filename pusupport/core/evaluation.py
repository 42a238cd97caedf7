"""What the loop measures after an epoch: eval-mode scores, each member's decision
threshold, the test metrics (and each view's error), the final per-point test errors, and
U's losses for the selection."""
from __future__ import annotations

import math

import torch

from .methods import METHODS, view_column, views_of
from .risks import nnpu_risk
from .metrics import average_precision, pack_rows, roc_auc, wrong_rows, zero_one_error
from .selection import negative_losses


def thresholds(groups: list, scored) -> torch.Tensor | None:
    """Each member's decision threshold (K,): its method's, from its training P scores and
    the unlabelled scores it reads (``scored``: eval mode); None when no method has one
    (the sign of g)."""
    if all(g.method.threshold is None for g in groups):
        return None
    g_p = scored("x_p")
    return torch.cat([g_p.new_zeros(g.stop - g.start) if g.method.threshold is None else
                      g.method.threshold(g_p[g.rows], scored(g.method.threshold_on)[g.rows], g.prior)
                      for g in groups])


def test_metrics(g_test: torch.Tensor, y_test: torch.Tensor, threshold=None) -> list:
    """[test error, test ROC AUC, test average precision] of each member from its test scores
    ``g_test`` (K, n; a dry run's first n rows); the error counts g > ``threshold`` (K,) as
    positive (AUC and AP do not depend on a threshold)."""
    y_test = y_test[:, :g_test.shape[1]]
    decided = g_test if threshold is None else g_test - threshold[:, None]
    ranked = [torch.stack([metric(g_test[k], y_test[k]) for k in range(len(g_test))])
              for metric in (roc_auc, average_precision)]
    return torch.stack([zero_one_error(decided, y_test), *ranked], 1).tolist()


def final_wrong(g_test: torch.Tensor, y_test: torch.Tensor, threshold=None) -> list[str]:
    """Each member's final per-test-point errors, packed (:func:`~pusupport.core.metrics.pack_rows`),
    at its method's threshold: the points behind ``test_error``, for intervals that cover the
    test set's sampling."""
    decided = g_test if threshold is None else g_test - threshold[:, None]
    return [pack_rows(w) for w in wrong_rows(decided, y_test[:, :g_test.shape[1]])]


def view_errors(groups: list, scored, g_test: torch.Tensor, y_test: torch.Tensor) -> list[dict]:
    """Each member's test error at the threshold of each view of its method
    (:attr:`~pusupport.core.methods.Method.view_of`, e.g. nnPUSB of nnPU): {column: error};
    the loop records it at the last epoch."""
    out = [{} for _ in range(len(g_test))]
    y_test = y_test[:, :g_test.shape[1]]
    for g in groups:
        for view in views_of(g.cfg.method):
            theta = view.threshold(scored("x_p")[g.rows], scored(view.threshold_on)[g.rows], g.prior)
            wrong = wrong_rows(g_test[g.rows] - theta[:, None], y_test[g.rows])
            for k, w in zip(range(g.start, g.stop), wrong):
                out[k][view_column(view.name)] = w.double().mean().item()
                out[k][view_column(view.name, "test_wrong")] = pack_rows(w)
    return out



def validation_risks(groups: list, scored) -> list[float]:
    """Each member's label-free model selection criterion on the held-out PU split (lower is
    better): its method's own (:attr:`~pusupport.core.methods.Method.validation`), else the
    non-negative PU estimate of the sigmoid risk (Eq. 9 with ℓ_sig, bounded like the
    zero-one loss) at its π; NaN for a method that has neither (no π, no criterion)."""
    g_p, g_u = scored("x_val_p"), scored("x_val_u")
    out = []
    for g in groups:
        if g.method.validation:
            value = g.method.validation(g_p[g.rows], g_u[g.rows], g.prior, g.state)
        elif g.method.needs_prior:
            value = nnpu_risk(g_p[g.rows], g_u[g.rows], g.prior, "sigmoid").value
        else:
            value = g_p.new_full((g.stop - g.start,), math.nan)
        out.extend(value.double().tolist())
    return out


def at_own_choice(history, by=("method", "seed")):
    """Each run's row at its own label-free choice of epoch: where its method's recipe stops
    and restores (:attr:`~pusupport.core.methods.Method.stop`), else the evaluated epoch
    with the lowest ``val_risk`` (the first of equals; :func:`validation_risks`), read
    from the validation split alone — no test label enters the choice. Runs without one are
    left out."""
    if "val_risk" not in history:
        return history.iloc[:0]
    chosen = []
    for _, run in history.dropna(subset=["val_risk"]).groupby(list(by), sort=False):
        method = METHODS.get(run.method.iloc[0])            # a label that names no method: none
        run, stop = run.sort_values("epoch", kind="stable"), method and method.stop
        chosen.append(run.index[stop(run.val_risk.to_numpy())] if stop else run.val_risk.idxmin())
    return history.loc[chosen]


class Scored:
    """Eval-mode scores (K, n) of the rows called ``name`` ("x_p", "x_u", "x_test") after an
    epoch, each scored once on first use; a dry run scores the first ``rows``."""

    def __init__(self, members, batch_size: int, amp: bool, rows: int | None):
        self.members, self.batch_size, self.amp, self.rows, self.done = members, batch_size, amp, rows, {}

    def __call__(self, name: str) -> torch.Tensor:
        if name not in self.done:
            self.done[name] = self.members.scores(name, self.batch_size, self.amp, self.rows)
        return self.done[name]


class ULosses:
    """U's losses as negatives (K, n_u) after an epoch under a selection loss, from U's
    scores (:class:`Scored`); a dry run scores U's first rows (``n``) and leaves the
    others at ``-inf`` (never picked)."""

    def __init__(self, scored: Scored, n_u: int, device):
        self.scored, self.n_u, self.device, self.losses, self.n = scored, n_u, device, {}, None

    def __call__(self, loss: str) -> torch.Tensor:
        scores = self.scored("x_u")
        self.n = scores.shape[1]
        if loss not in self.losses:
            losses = torch.full((len(scores), self.n_u), -math.inf, device=self.device)
            losses[:, :self.n] = negative_losses(scores, loss)
            self.losses[loss] = losses
        return self.losses[loss]
