"""Each PU method's recipe as "Where aaPU stands" lists it: its settings, where its authors
set them, and what this book changes — read from what each method declares
(:class:`~pusupport.core.methods.Method`), the paper's two baselines and counterfactuals
written out."""
from __future__ import annotations

from dataclasses import fields

import pandas as pd

from ..core.methods import get_method


def hyperparameters() -> pd.DataFrame:
    """Each method's own settings, where its authors' code sets them (file, line and commit of
    the copy read), and what this book changes. Everything else (model, optimiser, epochs,
    batch size, learning rate, U sample) is the comparison page's."""
    rows = [
        ("nnPU, aaPU", "β = 0, γ = 1, logistic loss; a negative R̂_n steps on −γ∇R̂_n",
         "the paper; Kiryo et al.: kiryor/nnPUlearning train.py L43–47, pu_loss.py L48–53 "
         "(bb49475)", "the logistic loss (Kiryo et al.'s default is the sigmoid: next row)"),
        ("nnPU (sigmoid)", "sigmoid loss, β = 0, γ = 1",
         "kiryor/nnPUlearning train.py L43–47 (bb49475)", "—"),
        ("nnPUSB", "threshold: the (1 − π)-quantile of the scores",
         "Kato et al., 2019: MasaKat0/PUlearning BiasedPUlearning/nnPUSB/train_nnPU.py "
         "L112–117, on the test inputs (L79) (a0d034d)",
         "the verdicts use the training U's (1 − π)-quantile (no test input enters a decision "
         "here); the test inputs' quantile, the authors', is shown beside it; both read from "
         "nnPU's run (it trains exactly as nnPU)"),
        ("Negative selection", "aaPU's n_select and select_from; N weighted as U's points",
         "this book (the paper's counterfactual)", "—"),
        ("aaPU, oracle S", "aaPU's settings; S from U's true positives", "this book", "—")]
    rows[3:3] = [own_row(m) for m in ("vpu", "distpu", "robustpu")]
    return pd.DataFrame(rows, columns=["method", "settings", "source", "changed here"])


def own_row(name: str) -> tuple:
    """A method's row of :func:`hyperparameters` from what it declares: its own settings
    and its authors' values per data set, their source, this book's departures and why."""
    m = get_method(name)
    values = ", ".join(f"{f.name} = {getattr(m.settings(), f.name)}" for f in fields(m.settings))
    per = "; ".join(f"{d}: " + ", ".join(f"{k} = {v}" for k, v in given.items())
                    for d, given in m.by_dataset.items())
    return (m.label, values + (f" ({per})" if per else ""), m.source,
            "; ".join(f"{what} — {why}" for what, why in m.departures) or "—")
