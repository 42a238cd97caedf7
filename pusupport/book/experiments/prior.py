"""Beyond the paper: estimating π (BBE, Elkan–Noto) and what a misspecified π costs."""
from __future__ import annotations

import warnings
from dataclasses import replace

import pandas as pd

from ...core.methods import get_method
from ...core.progress import progress
from ..claims import Claim, Outcome, floor_for, observed
from ..verdicts import (CONTRADICTED, DESCRIPTIVE, MIN_SEEDS, SMALLER_LOSS, Margin,
                        judge_jointly, paired_difference)
from ..experiment import TRAINING, Experiment, RunSpec, runs_of
from ..sources import data_for

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..page import Page

#: The P-vs-U classifier behind the prior estimates (this book's choice; not in the paper):
#: settings per data set at "paper" (also used by `cpu`) and at "smoke".
ESTIMATORS = {
    "synthetic": {"paper": {"model": dict(name="mlp"), "train": dict(epochs=20, batch_size=128)},
                  "smoke": {"model": dict(name="mlp"), "train": dict(epochs=3, batch_size=128)}},
    "cifar10": {
        "paper": {"model": dict(name="kiryo_cnn", width=0.25), "data": dict(n_unlabeled=10_000),
                  "train": dict(epochs=5, batch_size=256)},
        "smoke": {"model": dict(name="kiryo_cnn", width=0.125), "data": dict(n_unlabeled=1000),
                  "train": dict(epochs=1, batch_size=256)}},
    "20news": {
        "paper": {"model": dict(name="news_mlp"), "data": dict(max_features=20_000),
                  "train": dict(epochs=10, batch_size=256)},
        "smoke": {"model": dict(name="news_mlp"), "data": dict(max_features=2000),
                  "train": dict(epochs=2, batch_size=256)}},
    "fashion_mnist": {
        "paper": {"model": dict(name="news_mlp", activation="relu"), "train": dict(epochs=5, batch_size=256)},
        "smoke": {"model": dict(name="news_mlp", activation="relu"), "data": dict(n_unlabeled=2000),
                  "train": dict(epochs=1, batch_size=256)}},
}


#: Δ of the claim: a tenth of nnPU's final test error at the true π.
MARGIN = Margin()

#: The run labels of the prior given: the true π times a factor, or the BBE estimate.
ESTIMATE = "BBE estimate"


def factor_label(factor: float) -> str:
    return f"×{factor:g}"


def plan(s, profile: str = "paper") -> list[RunSpec]:
    """The P-vs-U classifier behind each data set's estimate, then nnPU and aaPU for each
    prior given (the true π × each factor, and the BBE estimate: π left to the driver)."""
    estimators = [RunSpec(f"estimator {name}", "pn", tables["smoke" if profile == "smoke" else "paper"],
                          dataset=name, estimator=True) for name, tables in ESTIMATORS.items()]
    groups = [(factor_label(f), {"factor": f}) for f in s.page.prior_factors] + [(ESTIMATE, {})]
    return estimators + [replace(spec, group=f"prior {label}", values={"prior_label": label, **values})
                         for label, values in groups for spec in runs_of(["nnpu", "aapu"])]


def estimate_priors(page: Page) -> pd.DataFrame:
    """BBE and Elkan–Noto estimates of π for each data set (its Table 1 PU problem).

    Returns a table (data set, method, estimate, interval, true π, seconds, note); a data
    set that is not available gets a row saying so, and a degenerate P-vs-U classifier a
    note in its rows (instead of a warning).
    """
    from ...data.files import DatasetNotFoundError
    from ...apps.prior import PriorWarning, estimate_prior
    rows = []
    specs = [spec for spec in plan(page.settings, page.profile) if spec.estimator]
    for spec in progress(specs, desc="prior estimates"):
        name = spec.dataset
        paper, _ = EXPERIMENT.resolve(name, "paper")
        settings = paper.merge({"data": spec.changes.get("data", {})})
        estimator = replace(spec.train(paper.train), dry_run=page.settings.train.dry_run)
        try:
            data = data_for(name, settings.data, page.data_dir)(page.seeds[0])
        except DatasetNotFoundError:
            rows.append({"data set": name, "method": "—", "estimate": None, "low": None,
                         "high": None, "true prior": None, "seconds": None,
                         "note": "not run: data not available"})
            continue
        x_u = data.x_u[~data.u_in_p] if data.u_in_p.any() else data.x_u
        true_prior = float((data.u_truth[~data.u_in_p] > 0).float().mean())
        with warnings.catch_warnings():                       # the note column carries it
            warnings.simplefilter("ignore", PriorWarning)
            estimates = estimate_prior(data.x_p, x_u, estimator, seed=page.seeds[0],
                                       device=page.device, trainer=page.train)
        for est in estimates.values():
            rows.append({"data set": name, **est.as_dict(), "true prior": true_prior})
            del rows[-1]["splits"]                            # one halving each here
    return pd.DataFrame(rows)


def run_prior_sensitivity(page: Page, make_data, estimate: float) -> pd.DataFrame:
    """nnPU and aaPU trained with π × each of the page's prior factors and with ``estimate``.

    Each prior is its own group of runs (and of checkpoints).
    """
    truth = make_data(page.seeds[0]).prior
    specs = [spec for spec in page.plan() if not spec.estimator]
    for i, spec in enumerate(specs):
        specs[i] = replace(spec, prior=truth * spec.values["factor"] if "factor" in spec.values else estimate)
    runs = []
    for group in dict.fromkeys(spec.group for spec in specs):
        members = [spec for spec in specs if spec.group == group]
        h = page.run(members, make_data)
        prior = members[0].prior
        runs.append(h.assign(prior_label=members[0].values["prior_label"], prior_used=prior,
                             prior_error=prior / truth - 1))
    return pd.concat(runs, ignore_index=True)


def sensitivity(summary, history):
    """Per seed and misspecified π (the true π × each factor ≠ 1), the extra final test
    error it costs aaPU minus the extra it costs nnPU, judged jointly over the factors
    (:func:`~pusupport.book.verdicts.judge_jointly`, Δ a tenth of nnPU's error at the true π).
    Contradicted when aaPU's extra cost is shown larger at some factor (beyond the floor of
    two test points); else reproduced ("no more than") when every factor's interval lies
    below +Δ."""
    last = history[history.epoch == history.epoch.max()]
    err = last.set_index(["method", "prior_label", "seed"]).test_error
    true = factor_label(1)
    seeds = sorted(set(err["aapu"][true].index) & set(err["nnpu"][true].index))
    scaled = sorted({c for c in last.prior_label if c.startswith("×") and c != true})
    extra = {m: {f: err[m][f][seeds] - err[m][true][seeds] for f in scaled} for m in ("aapu", "nnpu")}
    paireds = [paired_difference(extra["aapu"][f], extra["nnpu"][f]) for f in scaled]
    margin = MARGIN.value(float(err["nnpu"][true][seeds].mean()), summary.get("n_test"))
    floor = floor_for(summary)
    judged = judge_jointly(paireds, [margin] * len(paireds), [floor] * len(paireds))
    parts = [f"π {f}: {j.paired.mean:+.4f} [{j.low:+.4f}, {j.high:+.4f}]" for f, j in zip(scaled, judged)]
    mean = last.groupby(["method", "prior_label"]).test_error.mean()
    text = (f"aaPU's extra error − nnPU's, paired over {len(seeds)} seeds ({judged[0].adjustment or 'one seed'}; "
            f"Δ = {margin:.4f}): " + "; ".join(parts) + f"; with the BBE estimate: aaPU "
            f"{mean['aapu', ESTIMATE]:.4f}, nnPU {mean['nnpu', ESTIMATE]:.4f}")
    if len(seeds) < MIN_SEEDS:
        return Outcome(text, DESCRIPTIVE, len(seeds))
    worse = any(j.verdict in (CONTRADICTED, SMALLER_LOSS) for j in judged)
    return observed(text, not worse and all(j.high < margin - floor for j in judged), worse)


def what_it_means(history) -> str:
    """Markdown: where each method's mean final error is lowest among the priors given, and,
    where that is not the true π, what it means (a threshold effect, not a better prior)."""
    last = history[history.epoch == history.groupby("method").epoch.transform("max")]
    mean = last.groupby(["method", "prior_label"]).test_error.mean().dropna()
    true, parts, lower = factor_label(1), [], {}
    for method in ("aapu", "nnpu"):
        if method not in mean or true not in mean[method]:        # a dry run: nothing to read
            return ""
        errors = mean[method]
        best = errors.idxmin()
        given = f"π {best}" if best.startswith("×") else f"the {best}"
        parts.append(f"{get_method(method).label} {errors[best]:.4f} with {given} "
                     f"({errors[true]:.4f} with the true π)")
        if best != true and errors[best] < errors[true]:
            lower[get_method(method).label] = best
    text = "Lowest mean final test error among the priors given: " + "; ".join(parts) + "."
    if lower:
        factors = {float(b[1:]) for b in lower.values() if b.startswith("×")}
        how = ("a smaller π weights the positive risk less and calls fewer points positive"
               if factors and max(factors) < 1 else
               "a larger π weights the positive risk more and calls more points positive"
               if factors and min(factors) > 1 else "the classifier's threshold moves with π")
        text += (f" For {' and '.join(lower)} a wrong π gives a lower error than the true one. "
                 "The risk is unbiased only at the true π, but the error is taken at the "
                 f"threshold g(x) = 0, which π moves: {how}. A wrong π that helps is a threshold "
                 "correction on this task, not evidence for misstating π; nnPUSB's threshold, on "
                 "\"Where aaPU stands\", corrects it from the data.")
    return text


EXPERIMENT = Experiment(
    "prior", dataset="synthetic", selects=True,
    not_in_paper="prior estimation and misspecified priors",
    changes={
        "paper": {"page": dict(prior_factors=[0.8, 0.9, 1.0, 1.1, 1.2]),
                  "train": dict(eval_every=0)},           # final numbers only: no per-epoch test
        "cpu": {"train": dict(epochs=300, select_from=100),
                "page": dict(prior_factors=[0.8, 1.0, 1.2], n_seeds=10)},
        "smoke": {"page": dict(prior_factors=[0.8, 1.0, 1.2])}},
    parameters=TRAINING, plan=plan,
    claims=(Claim("Beyond the paper: a misspecified π (±20 %) costs aaPU no more than nnPU "
                  "(synthetic)", sensitivity),))
