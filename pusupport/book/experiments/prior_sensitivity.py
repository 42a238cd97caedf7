"""Beyond the paper: estimating π (BBE, Elkan–Noto) and what a misspecified π costs."""
from __future__ import annotations

import warnings
from dataclasses import replace

import pandas as pd

from ...core.config import Settings
from ..paper import PRIOR_ESTIMATION
from ...core.progress import progress
from ..runs import data_for, run_methods

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..pages import Page


def estimate_priors(page: Page, datasets=("synthetic", "cifar10", "20news", "fashion_mnist")):
    """BBE and Elkan–Noto estimates of π for each data set (its Table 1 PU problem).

    Returns a table (data set, method, estimate, interval, true π, seconds, note); a data
    set that is not available gets a row saying so, and a degenerate P-vs-U classifier a
    note in its rows (instead of a warning).
    """
    from ...data.datasets import DatasetNotFoundError
    from ..settings import page_settings
    from ...apps.prior import estimate_prior
    rows = []
    for name in progress(datasets, desc="prior estimates"):
        table = PRIOR_ESTIMATION[name]["smoke" if page.profile == "smoke" else "paper"]
        paper, _ = page_settings("prior", name, "paper")
        settings = paper.merge({k: v for k, v in table.items() if k == "data"})
        estimator = replace(Settings().merge({k: v for k, v in table.items() if k != "data"}).train,
                            dry_run=page.settings.train.dry_run)
        try:
            data = data_for(replace(page, dataset=name, settings=settings))(page.seeds[0])
        except DatasetNotFoundError:
            rows.append({"data set": name, "method": "—", "estimate": None, "low": None,
                         "high": None, "true prior": None, "seconds": None,
                         "note": "not run: data not available"})
            continue
        x_u = data.x_u[~data.u_in_p] if data.u_in_p.any() else data.x_u
        true_prior = float((data.u_truth[~data.u_in_p] > 0).float().mean())
        with warnings.catch_warnings():                       # the note column carries it
            warnings.filterwarnings("ignore", "the P-vs-U classifier is degenerate")
            estimates = estimate_prior(data.x_p, x_u, estimator, seed=page.seeds[0], device=page.device)
        for est in estimates.values():
            rows.append({"data set": name, **est.as_dict(), "true prior": true_prior})
    return pd.DataFrame(rows)


def run_prior_sensitivity(page: Page, make_data, estimate: float) -> pd.DataFrame:
    """nnPU and aaPU trained with π × each of the page's prior factors and with ``estimate``.

    Each prior is its own group of runs (and of checkpoints at the ``paper`` profile).
    """
    truth = make_data(page.seeds[0]).prior
    priors = {f"×{f:g}": truth * f for f in page.settings.page.prior_factors}
    priors["BBE estimate"] = estimate
    runs = []
    for label, prior in priors.items():
        h = run_methods(page, ["nnpu", "aapu"], lambda seed, p=prior: replace(make_data(seed), prior=p),
                        group=f"prior {label}")
        runs.append(h.assign(prior_label=label, prior_used=prior, prior_error=prior / truth - 1))
    return pd.concat(runs, ignore_index=True)
