"""Eqs. 8–9 demonstrated: uPU's negative risk goes below zero, nnPU's does not (§4.1's
model and data; not an experiment of the paper)."""
from ..claims import Claim, observed
from ..experiment import TRAINING, Experiment, runs_of


def negative_risk(summary, history):
    """Reproduced when uPU's R̂_n goes below zero and nnPU's stays above half of uPU's lowest;
    contradicted when uPU's never goes below zero or nnPU's goes as low as uPU's."""
    low = history.groupby("method").risk_negative.min()
    text = f"lowest R̂_n per epoch — uPU: {low['upu']:.3f}, nnPU: {low['nnpu']:.3f}"
    return observed(text, low["upu"] < 0 and low["nnpu"] > low["upu"] / 2,
                    low["upu"] >= 0 or low["nnpu"] <= low["upu"])


EXPERIMENT = Experiment(
    "formulation", dataset="synthetic", not_in_paper="a short demonstration of Eqs. 8–9",
    changes={"paper": {"train": dict(epochs=300), "page": dict(n_seeds=1)},
             "cpu": {"train": dict(epochs=300, eval_every=5), "page": dict(n_seeds=1)},
             "smoke": {"train": dict(epochs=10), "page": dict(n_seeds=1)}},
    parameters=TRAINING,
    plan=lambda s: runs_of(["upu", "nnpu"]),
    claims=(Claim("uPU's negative risk goes below zero with a flexible model; nnPU's stays near "
                  "zero (Eqs. 8–9)", negative_risk),))
