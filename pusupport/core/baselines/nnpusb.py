"""nnPUSB (Kato, Teshima & Honda, ICLR 2019, "Learning from positive and unlabeled data
with a selection bias"): nnPU's risk (their logistic loss, the config's default), with the
decision threshold moved so that a fraction π of the training U is called positive — the
(1 − π)-quantile of U's scores.

It asks whether a gain of aaPU's is a shift of the threshold: nnPUSB shifts it from the
training data alone. It trains exactly as nnPU does, so it is a view of nnPU's run
(``view_of``): every nnPU run also records its final test error at this threshold — and so
does every run of another method that reads π (``views_every_run``): one label-free
threshold at which any two methods' errors compare on their ranking alone.

The authors place the quantile on the test inputs' scores instead (transductive, no labels:
MasaKat0/PUlearning, BiasedPUlearning/nnPUSB/train_nnPU.py L79, L112–117): ``nnpusb_test``
records that second view, and the book's verdicts use the first (no test input enters a
decision).
"""
from __future__ import annotations

import torch

from ..methods import Method, get_method, register
from ..risks import nnpu_risk


def quantile_threshold(g_p: torch.Tensor, g_u: torch.Tensor, prior) -> torch.Tensor:
    """θ (K,): the (1 − π)-quantile of each member's training U scores (K, n_u), so that
    g > θ calls a fraction π of U positive."""
    prior = torch.as_tensor(prior, dtype=g_u.dtype, device=g_u.device).expand(len(g_u))
    return torch.stack([torch.quantile(g_u[k], 1 - prior[k]) for k in range(len(g_u))])


register(Method("nnpusb", "nnPUSB", "nnPU with the threshold at U's (1 − π)-quantile "
                "(Kato et al., 2019)", color="#2ca02c",
                risk=lambda b: nnpu_risk(b.g_p, b.g_u, b.prior, b.config.loss, b.config.beta,
                                         b.config.gamma),
                threshold=quantile_threshold, view_of="nnpu", views_every_run=True,
                source="Kato et al., 2019: MasaKat0/PUlearning BiasedPUlearning/nnPUSB/train_nnPU.py "
                       "L112–117, on the test inputs (L79) (a0d034d)",
                departures=(("the training U's (1 − π)-quantile; the authors' test inputs' quantile "
                             "is shown beside it", "no test input enters a decision here"),
                            ("read from nnPU's run", "it trains exactly as nnPU"))))
register(Method("nnpusb_test", "nnPUSB (test inputs' quantile)", "nnPUSB with the threshold at "
                "the test inputs' (1 − π)-quantile, as its authors place it (transductive)",
                color="#98df8a", risk=get_method("nnpusb").risk, threshold=quantile_threshold,
                threshold_on="x_test", view_of="nnpu", usable=False))
