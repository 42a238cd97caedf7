"""Eqs. 8–9 demonstrated: uPU's negative risk goes below zero, nnPU's does not (§4.1's
model and data; not an experiment of the paper)."""
from ..claims import Claim, observed
from ..experiment import TRAINING, Experiment, runs_of
from ..records import reading


def what_it_means(summary) -> str:
    """Markdown: the final errors read against Eqs. 8–9 — whether uPU's negative risk
    below zero cost it test error here, or showed only in the risk."""
    if not {"upu", "nnpu"} <= set(summary["methods"]):       # e.g. a dry run's other epochs
        return ""
    errors = {m: summary["methods"][m]["test_error"]["mean"] for m in ("upu", "nnpu")}
    if errors["upu"] <= errors["nnpu"]:
        meaning = ("uPU ends with the lower (or equal) test error although its negative risk went "
                   "below zero: at this scale the overfitting that nnPU's correction prevents "
                   "shows in the risk, not yet in the error. The demonstration is of Eqs. 8–9, "
                   "not of nnPU's gain in accuracy.")
    else:
        meaning = ("uPU's negative risk below zero goes with a higher final test error: the "
                   "overfitting that nnPU's correction prevents, as Eqs. 8–9 predict.")
    return f"{reading(summary, 'nnpu', 'upu')} {meaning}"


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
