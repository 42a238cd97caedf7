"""Class-prior estimation from P and U data: BBE and Elkan–Noto.

Both train a classifier to tell labelled positives from unlabelled points on one half
of the data and score the other half. BBE (Garg et al., 2021, "Mixture proportion
estimation and PU learning: a modern approach") looks for the top bin of scores
where U is (almost) purely positive: for a threshold t, q_p(t) and q_u(t) are the
fractions of held-out P and U scoring above t, and π̂ = q_u(t̂)/q_p(t̂) at the t̂
that minimises the upper confidence bound of that ratio. Elkan & Noto (2008)
average the classifier's output over held-out positives instead.
"""
from __future__ import annotations

import math
import time
from statistics import median
import warnings
from dataclasses import dataclass, field, replace

import torch


#: Where an estimate is usable as a prior: π must lie strictly inside (0, 1).
USABLE = (0.01, 0.99)
#: An interval wider than this says too little about π to train with.
TOO_WIDE = 0.5


class PriorWarning(UserWarning):
    """An estimate of π that should not be used as it is (its ``note`` says why)."""


@dataclass(frozen=True)
class PriorEstimate:
    """A class-prior estimate with its confidence interval and the time it took.

    ``estimate`` always lies inside :data:`USABLE`; ``note`` says when the raw estimate
    was outside and had to be clipped, or came from a degenerate classifier (then
    ``unusable`` is True); ``too_wide``: the interval is wider than :data:`TOO_WIDE`;
    ``splits``: the P-vs-U halvings it is the median of (:func:`combined`).
    """

    method: str
    estimate: float
    low: float
    high: float
    seconds: float = field(default=0.0, compare=False)    # the time taken: not the estimate
    note: str = ""
    unusable: bool = False
    splits: int = 1

    def __post_init__(self):
        low, high = USABLE
        if not low <= self.estimate <= high:
            clipped = min(max(self.estimate, low), high)
            side = "1: U looks purely positive" if self.estimate > high else "0: U looks purely negative"
            note = (f"the raw {self.method} estimate {self.estimate:.3f} is near {side} to the "
                    f"P-vs-U classifier, which could not tell P from U; it is clipped to "
                    f"{clipped:.2f}. Pass the prior yourself if you know it.")
            warnings.warn(note, PriorWarning, stacklevel=3)
            object.__setattr__(self, "estimate", clipped)
            object.__setattr__(self, "low", min(self.low, clipped))
            object.__setattr__(self, "high", max(self.high, clipped))
            object.__setattr__(self, "note", note)
            object.__setattr__(self, "unusable", True)

    @property
    def too_wide(self) -> bool:
        return self.high - self.low > TOO_WIDE

    def as_dict(self) -> dict:
        return {"method": self.method, "estimate": self.estimate, "low": self.low,
                "high": self.high, "seconds": self.seconds, "note": self.note,
                "unusable": self.unusable, "splits": self.splits}


def degenerate(scores) -> str:
    """What is wrong with a classifier whose ``scores`` g(x) do not separate anything:
    constant scores, or every point on one side of 0 ("" when neither)."""
    s = torch.as_tensor(scores).float().reshape(-1)
    if len(s) == 0:
        return ""
    if float(s.max() - s.min()) <= 1e-6 * max(1.0, float(s.abs().max())):
        return f"its scores are constant ({float(s[0]):.3g}): it learned nothing"
    if bool((s > 0).all()):
        return "it calls every point positive"
    if bool((s <= 0).all()):
        return "it calls every point negative"
    return ""


def _check_scores(scores_p, scores_u):
    scores_p, scores_u = torch.as_tensor(scores_p).float(), torch.as_tensor(scores_u).float()
    for name, s in (("positive", scores_p), ("unlabelled", scores_u)):
        if s.dim() != 1:
            raise ValueError(f"{name} scores must be one score per point (shape (n,)), "
                             f"got shape {tuple(s.shape)}: pass g(x).reshape(-1)")
        if len(s) == 0:
            raise ValueError(f"no {name} scores: P and U must both be non-empty")
        if not torch.isfinite(s).all():
            raise ValueError(f"{name} scores contain NaN or inf: check the classifier")
    return scores_p, scores_u


def bbe_from_scores(scores_p, scores_u, delta: float = 0.1, gamma: float = 0.01) -> PriorEstimate:
    """BBE on held-out scores of a P-vs-U classifier (higher = more P-like).

    Thresholds are taken at every held-out positive score; the chosen one minimises
    q_u/q_p + (1 + γ)/q_p · (ε_p + ε_u), with ε = √(log(4/δ)/(2n)) (DKW bounds).
    The interval is π̂ ± (ε_p + ε_u)/q_p(t̂), clipped to [0, 1].
    """
    sp, su = _check_scores(scores_p, scores_u)
    n_p, n_u = len(sp), len(su)
    eps_p, eps_u = (math.sqrt(math.log(4 / delta) / (2 * n)) for n in (n_p, n_u))
    thresholds = torch.sort(sp, descending=True).values
    q_p = torch.arange(1, n_p + 1, dtype=torch.float64) / n_p            # fraction of P ≥ t
    su_sorted = torch.sort(su).values
    q_u = (n_u - torch.searchsorted(su_sorted, thresholds, right=False)).double() / n_u
    bound = q_u / q_p + (1 + gamma) / q_p * (eps_p + eps_u)
    best = int(torch.argmin(bound))
    estimate = float(min(1.0, q_u[best] / q_p[best]))
    width = float((eps_p + eps_u) / q_p[best])
    return PriorEstimate("BBE", estimate, max(0.0, estimate - width), min(1.0, estimate + width))


def elkan_noto_from_scores(probs_p, n_p_train: int, n_u_train: int) -> PriorEstimate:
    """Elkan & Noto's estimator e₁, case-control form, from held-out P probabilities.

    With c = mean of P(labelled | x) over held-out positives and the classifier trained
    on n_p labelled vs n_u unlabelled points, π̂ = (n_p/n_u)·(1 − c)/c. The interval
    propagates a 95 % normal interval of c.
    """
    probs_p, _ = _check_scores(probs_p, probs_p)
    ratio = n_p_train / n_u_train

    def prior(c):
        c = min(max(c, 1e-6), 1.0)
        return min(1.0, max(0.0, ratio * (1 - c) / c))
    c = float(probs_p.mean())
    se = float(probs_p.std()) / math.sqrt(len(probs_p)) if len(probs_p) > 1 else 0.0
    lo, hi = sorted((prior(c + 1.96 * se), prior(c - 1.96 * se)))
    return PriorEstimate("Elkan-Noto", prior(c), lo, hi)


#: The P-vs-U classifier's defaults (this book's choice), in the book's table shape: the
#: §4.1 MLP, PN training.
ESTIMATOR = {"model": dict(name="mlp"),
             "train": dict(method="pn", epochs=20, batch_size=256, lr=1e-3, weight_decay=1e-4,
                           lr_schedule={}, progress=False)}


def estimate_prior(x_p, x_u, config=None, delta: float = 0.1, trainer=None, select_epoch: bool = False,
                   splits: int = 1, **overrides) -> dict:
    """Estimate π from labelled positives ``x_p`` and unlabelled ``x_u`` with BBE and Elkan–Noto.

    Half of P and of U train a P-vs-U classifier (method ``"pn"`` of the training loop,
    logistic loss, P = +1 and U = −1, the two classes weighted equally so that a small P
    is not drowned by U; ``config``/``overrides``: its TrainConfig, default
    :data:`ESTIMATOR`); the other halves are scored. BBE reads the scores' ranking;
    Elkan–Noto's probabilities are those of the actual P : U ratio, σ(g + log(n_p/n_u)). Returns
    ``{"BBE": PriorEstimate, "Elkan-Noto": PriorEstimate}``. ``trainer(data, config)``
    trains the classifier (default :func:`~pusupport.core.training.train`; the book's
    pages pass one that reads it from their run store, :meth:`~pusupport.book.page.Page.train`,
    called with ``keeps=()`` for a run whose history alone is read). ``select_epoch``: train it first
    with the scored halves as a P-vs-U test set, then again to the epoch whose held-out
    P-vs-U ROC AUC was highest (only P/U labels enter; the same halves are then scored):
    with few labelled positives the classifier memorises them, held-out positives then look
    unlabelled and both estimates drift up (scikit-learn's digits as a table, 150 labelled:
    BBE 0.46 after 2 epochs, 0.58 after 28, against π = 0.456). ``splits``: that many
    halvings, the i-th drawn and trained with seed + i; each estimate and its interval's
    ends are the median over them (:func:`combined`): with few labelled positives one
    halving's estimate spreads widely (the digits folder: SD 0.050 from one, 0.035 from
    the median of 4); a bar counts them, with the time left, where ``config.progress``.
    """
    from ..core.config import Settings, merge
    from ..core.progress import progress
    if len(x_p) < 2 or len(x_u) < 2:
        raise ValueError("need at least two labelled positives and two unlabelled points "
                         "(half of each trains the P-vs-U classifier, half is scored)")
    if isinstance(splits, bool) or not isinstance(splits, int) or splits < 1:
        raise ValueError(f"splits={splits!r}: give the number of P-vs-U halvings, an integer ≥ 1")
    cfg = merge(config or Settings().merge(ESTIMATOR).train, {**overrides, "method": "pn"}, "train")
    bar = progress(range(splits), cfg.progress and splits > 1, desc="π: P-vs-U halvings",
                   unit="halving", leave=False, mininterval=0)
    cfg = merge(cfg, {"eval_every": 0, "progress": False}, "train")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        each = [_one_halving(x_p, x_u, merge(cfg, {"seed": cfg.seed + i}, "train"), delta, trainer,
                             select_epoch) for i in bar]
    found = {name: combined([e[name] for e in each]) for name in each[0]}
    unusable = any(e.unusable for e in found.values())
    for w in dict((str(w.message), w) for w in caught).values():
        if unusable or not issubclass(w.category, PriorWarning):  # a halving left out: unsaid
            warnings.warn(w.message, w.category, stacklevel=2)
    return found


def combined(estimates: list[PriorEstimate]) -> PriorEstimate:
    """One estimate from those of several halvings: the median of the usable estimates (all,
    if none is) and of each end of their intervals, their seconds summed; the note says how
    many were left out, and why."""
    if len(estimates) == 1:
        return estimates[0]
    usable = [e for e in estimates if not e.unusable] or estimates
    notes = list(dict.fromkeys(e.note for e in usable if e.note))
    if len(usable) < len(estimates):
        notes.append(f"{len(estimates) - len(usable)} of {len(estimates)} halvings left out: their "
                     "P-vs-U classifier was degenerate or their raw estimate lay outside (0, 1).")
    return PriorEstimate(estimates[0].method, median(e.estimate for e in usable),
                         median(e.low for e in usable), median(e.high for e in usable),
                         round(sum(e.seconds for e in estimates), 2), " ".join(notes),
                         usable[0].unusable, len(usable))


def _one_halving(x_p, x_u, cfg, delta, trainer, select_epoch) -> dict:
    """BBE and Elkan–Noto from one halving of P and U (:func:`estimate_prior`), drawn and
    trained with ``cfg.seed``."""
    from ..core.config import DRY_RUN_ROWS, merge
    from ..core.problem import supervised
    from ..core.models import predict
    from ..core.training import train
    gen = torch.Generator().manual_seed(cfg.seed)
    perm_p, perm_u = torch.randperm(len(x_p), generator=gen), torch.randperm(len(x_u), generator=gen)
    p1, p2 = perm_p[: len(x_p) // 2], perm_p[len(x_p) // 2:]
    u1, u2 = perm_u[: len(x_u) // 2], perm_u[len(x_u) // 2:]
    if cfg.dry_run:                 # a dry run scores the first rows, as the training loop does:
        p2, u2 = p2[:DRY_RUN_ROWS // 2], u2[:DRY_RUN_ROWS // 2]      # half of them P, half U
    data = replace(supervised(x_p[p1], x_u[u1], name="P vs U"), prior=0.5)
    if select_epoch:
        held = replace(data, x_test=torch.cat([x_p[p2], x_u[u2]]),
                       y_test=torch.cat([torch.ones(len(p2)), -torch.ones(len(u2))]).long())
        probe_cfg = merge(cfg, {"eval_every": 1}, "train")    # its history alone is read
        probe = (trainer(held, probe_cfg, keeps=()) if trainer else train(held, probe_cfg)).history
        cfg = merge(cfg, {"epochs": int(probe.epoch[probe.test_auc.idxmax()])}, "train")
    trained = (trainer or train)(data, cfg)
    net, start = trained.model, time.perf_counter()
    dev = next(net.parameters()).device
    # scored in float32, whatever the training's precision: BBE reads the ranking's top,
    # and bfloat16's 8-bit mantissa ties hundreds of scores there (scikit-learn's digits
    # as images: 299 distinct scores among 824 pool images, BBE 0.393 against 0.455 in float32)
    g_p = predict(net, x_p[p2].to(dev)).cpu()
    g_u = predict(net, x_u[u2].to(dev)).cpu()
    # the classifier's training time (as recorded when it was trained) and the scoring's
    elapsed = float(trained.history.wall_time.iloc[-1]) + time.perf_counter() - start
    bbe = bbe_from_scores(g_p, g_u, delta)
    en = elkan_noto_from_scores(torch.sigmoid(g_p + math.log(len(p1) / len(u1))), len(p1), len(u1))
    problem = degenerate(torch.cat([g_p, g_u]))
    if problem:
        note = (f"the P-vs-U classifier is degenerate ({problem}), so this estimate says nothing "
                "about π: train it longer, or pass the prior yourself")
        warnings.warn(note, PriorWarning, stacklevel=3)
        bbe, en = (replace(e, note=f"{e.note} {note}".strip(), unusable=True) for e in (bbe, en))
    return {e.method: replace(e, seconds=round(elapsed, 2)) for e in (bbe, en)}
