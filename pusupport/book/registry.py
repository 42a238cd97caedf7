"""The book's experiments, found in :mod:`pusupport.book.experiments` (every module there
that defines ``EXPERIMENT``), and the book's pages in the order of ``book/_toc.yml``.

Adding a page is its module in ``experiments/``, its notebook and its line in the table of
contents: this registry, the page runner (``book/execute.py``), the cost table and the
summary's claims read it from there.
"""
from __future__ import annotations

import importlib
import pkgutil
import re
from collections import Counter
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

import pandas as pd

from . import experiments
from .claims import COMPARISONS, judge_claims, reproduction_table as _table
from ..core.methods import get_method
from .cost import _bytes, _duration, _flops, markdown, price, run_seconds
from .experiment import Experiment

TOC = Path(__file__).resolve().parents[2] / "book" / "_toc.yml"


@lru_cache
def all_experiments() -> dict[str, Experiment]:
    """{name: experiment} of every module of :mod:`pusupport.book.experiments`."""
    found = {}
    for info in pkgutil.iter_modules(experiments.__path__):
        module = importlib.import_module(f"{experiments.__name__}.{info.name}")
        if hasattr(module, "EXPERIMENT"):
            found[module.EXPERIMENT.name] = module.EXPERIMENT
    return found


def run_labels() -> dict:
    """{run label: (legend name, colour)} of runs the experiments name other than by method."""
    return {label: spec for e in all_experiments().values() for label, spec in e.labels.items()}


def get(name: str) -> Experiment:
    """The experiment called ``name`` (its notebook's name)."""
    known = all_experiments()
    if name not in known:
        raise ValueError(f"unknown page {name!r}: use one of {sorted(known)} (an experiment is a "
                         "module of pusupport/book/experiments/ that defines EXPERIMENT)")
    return known[name]


def comparison_pages() -> dict[str, str]:
    """{data set: the page that judges aaPU against nnPU on it}."""
    return {c.dataset or e.dataset: e.folder(c.dataset) for e in all_experiments().values()
            for c in e.claims if c.family in COMPARISONS}


def book_pages(toc: Path = TOC) -> list[dict]:
    """Every page of the book in the table of contents' order: {"page", "notebook",
    "parameters", "title", "after"} (the notebook's data set, when it makes several pages;
    the pages whose runs or results it reads, which run before it)."""
    listed = re.findall(r"(?:root|file):\s*pages/(\w+)", Path(toc).read_text())
    compared = comparison_pages()
    entries = {page: {"page": page, "notebook": e.name,
                      "parameters": {"dataset": spec["dataset"]} if "dataset" in spec else {},
                      "title": spec.get("title"), "after": [compared[d] for d in e.reads]}
               for e in all_experiments().values() for page, spec in e.book_pages().items()}
    missing = sorted(set(listed) - set(entries))
    if missing:
        raise ValueError(f"{toc} lists pages no experiment makes: {missing}")
    for page in listed:
        if get(entries[page]["notebook"]).reads_every_page:
            entries[page]["after"] = [p for p in listed if p != page]
    return [entries[page] for page in listed]


def book_claims() -> list[tuple]:
    """(claim, results folder) for every claim of the book, in the book's order."""
    out = []
    for entry in book_pages():
        e = get(entry["notebook"])
        out += [(c, entry["page"]) for c in e.claims if e.folder(c.dataset) == entry["page"]]
    return out


def family_sizes() -> dict:
    """{family: the number of claims stated in it} over the book's claims."""
    return dict(Counter(c.family for c, _ in book_claims() if c.family))


def judged(output_dir, claims) -> list[tuple]:
    """(claim text, Judged) of each comparison among ``claims`` ((claim, results folder)
    pairs), judged on the results under ``output_dir`` with the book's families — for the
    paired-differences figures."""
    return [(c.claim, o.judged) for (c, _), (_, o) in
            zip(claims, judge_claims(output_dir, claims, family_sizes())) if o.judged]


def reproduction_table(output_dir):
    """The book's claims and their verdicts from the results under ``output_dir``."""
    return _table(output_dir, book_claims(), family_sizes())


def cost_table() -> pd.DataFrame:
    """Every page of the book that trains, in the book's order, priced at ``paper``."""
    rows = []
    for entry in book_pages():
        experiment = get(entry["notebook"])
        if experiment.plan is None:
            continue
        c = price(experiment.runs(entry["parameters"].get("dataset")), entry["page"])
        rows.append({"page": entry["page"], "runs": c.runs, "FLOPs": _flops(c.flops),
                     "peak memory": _bytes(c.peak_bytes), "largest run": c.largest,
                     "GPU time": _duration(c.seconds), "priced on": c.where()})
    return pd.DataFrame(rows)


def method_cost_table(name: str = "standing") -> pd.DataFrame:
    """GPU time at ``paper`` of each method of page ``name``'s plan on each of its data sets
    (all seeds, as the plan lays them out), "—" where the plan leaves the pair out; a view
    (nnPUSB) names the run it is read from."""
    experiment = get(name)
    specs = experiment.specs(experiment.resolve(experiment.dataset, "paper")[1])
    plan = experiment.runs()
    seconds = Counter()
    for job in plan.jobs:
        for run, priced in zip(job.runs, replace(plan, jobs=(job,)).priced()):
            seconds[run.cfg.method, run.data[0]] += run_seconds(priced)[0]
    times = {(s.method, s.dataset): f"0 ({get_method(get_method(s.method).view_of).label}'s run)"
             if get_method(s.method).view_of else _duration(seconds[s.method, s.dataset]) for s in specs}
    datasets = list(dict.fromkeys(d for _, d in times))
    return pd.DataFrame([{"method": m, **{d: times.get((m, d), "—") for d in datasets}}
                         for m in dict.fromkeys(m for m, _ in times)])


if __name__ == "__main__":          # DEVELOPING.md's cost tables
    print(markdown(cost_table()) + "\n\n" + markdown(method_cost_table()))
