"""Which pages the book has, the papermill parameters each takes, and a page's settings
resolved from the tables of :mod:`pusupport.book.paper`: the paper's settings for the
page's data set, what the page's experiment adds in the paper, what the profile changes,
what the page changes at that profile (each merged by
:meth:`~pusupport.core.config.Settings.merge`)."""
from __future__ import annotations

import pandas as pd

from ..core.config import Settings
from .paper import PAGE_CHANGES, PAPER, PROFILE_CHANGES, PROFILES

COMMON = {"profile": str, "device": str, "seeds": (list, type(None)), "data_dir": (str, type(None)),
          "output_dir": str, "dry_run": int}
OPT_INT = (int, type(None))

#: Each page: the data set whose settings it starts from, its own papermill parameters
#: (None = "the profile decides"), whether it trains a selecting method, and the name
#: of its results folder when it is not the page's.
PAGES = {
    "introduction": {"dataset": None, "parameters": {}},
    "synthetic": {"dataset": "synthetic", "selects": True,
                  "parameters": {"epochs": OPT_INT, "n_select": OPT_INT, "select_from": OPT_INT}},
    "readings": {"dataset": "synthetic", "selects": True, "parameters": {"epochs": OPT_INT}},
    "formulation": {"dataset": "synthetic", "parameters": {"epochs": OPT_INT}},
    "adding_p": {"dataset": "cifar10", "parameters": {"epochs": OPT_INT, "extra_positives": OPT_INT}},
    "memorization": {"dataset": "memorization", "parameters": {"epochs": OPT_INT}},
    "histograms": {"dataset": "cifar10", "parameters": {"epochs": OPT_INT, "top_k": OPT_INT}},
    "biased_selection": {"dataset": "synthetic", "selects": True, "parameters": {"epochs": OPT_INT}},
    "discussion": {"dataset": "cifar10", "selects": True,
                   "parameters": {"dataset": (str, type(None)), "epochs": OPT_INT}},
    "prior": {"dataset": "synthetic", "selects": True, "parameters": {"epochs": OPT_INT}},
    "own_data": {"dataset": None,
                 "parameters": {"image_folder": (str, type(None)), "features": (str, type(None)),
                                "label_column": (str, type(None)),
                                "positive_classes": (list, type(None)),
                                "image_size": (int, list, type(None)),
                                "prior": (float, type(None)), "model": (str, dict, type(None)),
                                "n_labeled": OPT_INT, "epochs": OPT_INT}},
    "summary": {"dataset": None, "parameters": {}},
    "real_data": {"dataset": "cifar10", "selects": True, "results": "real_{dataset}",
                  "parameters": {"dataset": str, "epochs": OPT_INT, "n_select": OPT_INT,
                                 "select_from": OPT_INT, "n_unlabeled": OPT_INT}},
}

#: Pages whose experiment the paper does not run (what they show instead).
NOT_IN_PAPER_PAGES = {"formulation": "a short demonstration of Eqs. 8–9",
                      "prior": "prior estimation and misspecified priors",
                      "readings": "one reading of a choice the paper leaves open at a time",
                      "own_data": "your own images or features"}

def page_parameters(page: str) -> dict:
    return {**COMMON, **PAGES[page]["parameters"]}


def page_settings(page: str, dataset: str | None, profile: str) -> tuple[Settings, Settings]:
    """(the paper's settings, this profile's settings) of ``page`` on ``dataset``."""
    paper = Settings()
    for table in (PAPER.get(dataset, {}), PAGE_CHANGES.get(page, {}).get("paper", {})):
        paper = paper.merge(table)
    ours = paper
    for table in (PROFILE_CHANGES.get(dataset, {}).get(profile, {}),
                  PAGE_CHANGES.get(page, {}).get(profile, {})):
        ours = ours.merge(table)
    return paper, ours


def profile_table() -> pd.DataFrame:
    """Every data set's settings in the paper and what each profile changes."""
    rows = []
    for dataset, paper in PAPER.items():
        for profile in PROFILES:
            table = paper if profile == "paper" else PROFILE_CHANGES[dataset][profile]
            text = "; ".join(f"{s}.{k}={v}" for s, values in table.items() for k, v in values.items())
            rows.append({"data set": dataset, "profile": profile, "settings": text or "—"})
    return pd.DataFrame(rows).set_index(["data set", "profile"])
