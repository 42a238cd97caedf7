"""The methods the book trains, each written once: its risk, whether it grows a
selected set S (Algorithm 1, lines 7–9), and whether K seeds can share one stacked
network (:mod:`pusupport.stacking`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .risks import Risk, aapu_risk, naive_risk, nnpu_risk, pn_risk, upu_risk


@dataclass(frozen=True)
class Method:
    """``risk(g_p, g_u, g_s, prior, cfg, s_mask)`` → :class:`~pusupport.risks.Risk`.

    ``supervised``: the U slot holds labelled negatives (PN training), so the loop also
    reports the error on the training labels as given (``train_error``).
    """

    name: str
    description: str
    risk: Callable[..., Risk]
    selects: bool = False
    stacks: bool = True
    supervised: bool = False


METHODS = {m.name: m for m in (
    Method("upu", "unbiased PU risk (Eq. 8)",
           lambda g_p, g_u, g_s, prior, cfg, s_mask: upu_risk(g_p, g_u, prior, cfg.loss)),
    Method("nnpu", "non-negative PU risk (Eq. 9, Kiryo et al.)",
           lambda g_p, g_u, g_s, prior, cfg, s_mask: nnpu_risk(g_p, g_u, prior, cfg.loss,
                                                               cfg.beta, cfg.gamma)),
    Method("aapu", "nnPU whose positive risk also counts S (§3.3)",
           lambda g_p, g_u, g_s, prior, cfg, s_mask: aapu_risk(g_p, g_u, g_s, prior, cfg.loss,
                                                               cfg.beta, cfg.gamma, s_mask,
                                                               cfg.s_weight),
           selects=True),
    # S joins P everywhere; its concatenation of P and S scores cannot take padded S batches.
    Method("naive", "ablation: S added to the labelled positives everywhere",
           lambda g_p, g_u, g_s, prior, cfg, s_mask: naive_risk(g_p, g_u, g_s, prior, cfg.loss,
                                                                cfg.beta, cfg.gamma),
           selects=True, stacks=False),
    Method("pn", "supervised risk on ±1 labels (Eq. 1): P = +1, the U slot = −1",
           lambda g_p, g_u, g_s, prior, cfg, s_mask: pn_risk(g_p, g_u, prior, cfg.loss),
           supervised=True),
)}


def get_method(name: str) -> Method:
    """The method called ``name`` (see :data:`METHODS`)."""
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}: use one of {list(METHODS)}") from None
