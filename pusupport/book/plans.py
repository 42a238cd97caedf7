"""Each page's training runs at the ``paper`` profile, as its notebook makes them, for the
cost model (:mod:`pusupport.book.cost`) and the README's cost table
(``python -m pusupport.book.plans``)."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ..apps.own import OWN_DATA, OWN_DATA_ESTIMATOR, train_config
from ..core.config import Settings, TrainConfig, merge
from ..core.methods import get_method
from .cost import GPU, Cost, Data, Run, _bytes, _duration, _flops, data_sizes, price
from .experiments.readings import plan as readings_plan
from .paper import PRIOR_ESTIMATION
from .settings import PAGES, page_settings

#: Pages that train nothing (left out of the table).
NO_TRAINING = ("introduction", "summary")
BOOK_PAGES = Path(__file__).resolve().parents[2] / "book" / "pages.json"


def _estimator(cfg: TrainConfig, data: Data) -> Run:
    """The P-vs-U classifier behind a prior estimate: trained on half of P and of U \\ P
    (no test set), scores the other halves."""
    p, u = data.n_p // 2, data.eligible // 2
    half = Data(p, u, 0, 0, data.shape, data.nnz)
    return Run(merge(cfg, {"method": "pn", "eval_every": 0}, "train"), half,
               scored=data.n_p - p + data.eligible - u)


def page_runs(page: str, dataset: str | None = None) -> list[Run]:
    """The training runs of ``page`` (a notebook) at ``paper``, as its notebook makes them."""
    if page in NO_TRAINING:
        return []
    if page == "own_data":     # the example: CIFAR-10 as image files (50,000 + 10,000)
        s = Settings().merge(OWN_DATA["paper"])
        data = data_sizes("cifar10", s.data)
        return [_estimator(Settings().merge(OWN_DATA_ESTIMATOR["paper"]).train, data),
                Run(train_config(data.n_u, s.model, base=s.train), data)]
    dataset = dataset or PAGES[page]["dataset"]
    s, _ = page_settings(page, dataset, "paper")
    k, grid = s.page.n_seeds, s.page
    data = data_sizes(dataset, s.data)

    def runs(methods, data=data, **changes) -> list[Run]:
        """``methods`` over the page's seeds, stacked where run_methods stacks them."""
        return [Run(merge(s.train, {"method": m, **changes}, "train"), data, k,
                    k > 1 and data.nnz is None and get_method(m).stacks) for m in methods]

    if page in ("synthetic", "real_data"):
        return runs(["nnpu", "aapu"])
    if page == "readings":            # the book's pair and each reading's changed runs
        return [r for specs in readings_plan(s.train.select_from)[1].values() for spec in specs.values()
                for r in runs([spec["method"]], **{k: v for k, v in spec.items() if k != "method"})]
    if page == "formulation":
        return runs(["upu", "nnpu"])
    if page == "adding_p":
        more = data_sizes(dataset, merge(s.data, {"n_labeled": s.data.n_labeled + grid.extra_positives},
                                         "data"))
        return runs(["nnpu"]) + runs(["nnpu"], data=more)
    if page == "memorization":        # PN, one run per noise rate and seed
        return [Run(merge(s.train, {"method": "pn"}, "train"), data, k * len(grid.noise_rates))]
    if page == "histograms":          # nnPU sigmoid, uPU sigmoid, nnPU logistic; one seed
        return [Run(merge(s.train, {"method": m, "record_u_losses": grid.snapshot_epochs}, "train"),
                    data) for m in ("nnpu", "upu", "nnpu")]
    if page == "biased_selection":    # one nnPU up to the snapshot, then naive and aaPU
        snapshot = grid.snapshot_epochs[0]
        return [Run(merge(s.train, {"method": "nnpu", "epochs": snapshot,
                                    "record_u_losses": [snapshot]}, "train"), data),
                *runs(["naive", "aapu"])]
    if page == "discussion":          # nnPU, the n_select grid, the select_from grid, no re-picks
        return (runs(["nnpu"]) + [r for n in grid.n_select_grid for r in runs(["aapu"], n_select=n)]
                + [r for e in grid.select_from_grid if e != s.train.select_from
                   for r in runs(["aapu"], select_from=e)] + runs(["aapu"], allow_repick=False))
    if page == "prior":               # four estimators, then nnPU and aaPU per prior (+ BBE's)
        estimators = []
        for name, tables in PRIOR_ESTIMATION.items():
            table = tables["paper"]
            paper, _ = page_settings(page, name, "paper")
            sizes = data_sizes(name, paper.merge({"data": table.get("data", {})}).data)
            train = Settings().merge({key: v for key, v in table.items() if key != "data"}).train
            estimators.append(_estimator(train, sizes))
        return estimators + runs(["nnpu", "aapu"]) * (len(grid.prior_factors) + 1)
    raise ValueError(f"no cost model for page {page!r}: add its runs to page_runs")


def page_cost(page: str, dataset: str | None = None) -> Cost:
    """The :class:`Cost` of ``page`` (a notebook, e.g. "real_data") on ``dataset`` at ``paper``."""
    return price(page_runs(page, dataset), page)


def cost_table() -> pd.DataFrame:
    """Every page of book/pages.json that trains, in the book's order, at ``paper``."""
    rows = []
    for entry in json.loads(BOOK_PAGES.read_text()):
        if entry["notebook"] in NO_TRAINING:
            continue
        c = page_cost(entry["notebook"], entry["parameters"].get("dataset"))
        rows.append({"page": entry["page"], "runs": c.runs, "FLOPs": _flops(c.flops),
                     "peak memory": _bytes(c.peak_bytes), "largest run": c.largest,
                     f"GPU time ({GPU})": _duration(c.seconds)})
    return pd.DataFrame(rows)




if __name__ == "__main__":
    from .cost import markdown
    print(markdown(cost_table()))
