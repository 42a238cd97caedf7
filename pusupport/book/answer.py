"""The book's answer, first: does aaPU's selection help, and why did the paper see a gain?

Per data set, the comparisons that answer it, paired by seed and judged as one family on
the seeds they share (:func:`~pusupport.book.verdicts.judge_jointly`, the one rule): from
the results committed at the paper's settings, aaPU − nnPU at the decision threshold 0,
aaPU − nnPU scored at nnPUSB's label-free threshold, and what that threshold alone does to
nnPU; from the readings page (the synthetic task, at ``cpu`` the paper's settings), the
clamp — max(0, ·) read as a plain clamp — in each method and in both. Each comparison also
gives its ROC AUC difference, which no threshold moves.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .claims import covers, floor_for, per_point
from .committed import committed, verdict_column
from .records import read_history
from .reference import REFERENCE
from .verdicts import (BORDERLINE, CONTRADICTED, DESCRIPTIVE, INCONCLUSIVE, REPRODUCED, RULED_OUT,
                       SMALLER_GAIN, SMALLER_LOSS, UNSTABLE, Margin, judge_jointly, paired_difference)

#: Δ of every comparison: a tenth of its baseline's error, as for the paper's claims.
MARGIN = Margin()
#: The column of each comparison's difference, named as the readings' table names it so
#: that :func:`~pusupport.book.evidence.paired_intervals` draws both.
DIFFERENCE = "difference"


@dataclass(frozen=True)
class Comparison:
    """``label``: run (method or label) and metric column − baseline run and column, at each
    run's last epoch; ``what``: what the comparison tells."""

    label: str
    run: str
    column: str
    baseline: str
    baseline_column: str
    what: str


#: aaPU − nnPU with both scored at nnPUSB's threshold (records since every run that reads π
#: is also scored there; older ones hold it for nnPU alone and skip this comparison).
BOTH_AT_ONE = "aaPU − nnPU, both at nnPUSB's threshold"
#: On a committed paper-scale record: the threshold's part of aaPU's difference.
AT_THE_PAPERS_SCALE = (
    Comparison("aaPU − nnPU", "aapu", "test_error", "nnpu", "test_error",
               "the paper's comparison, both at the threshold 0"),
    Comparison(BOTH_AT_ONE, "aapu", "test_error:nnpusb", "nnpu", "test_error:nnpusb",
               "both scored at one label-free threshold (the training U's (1 − π)-quantile): "
               "the ranking's part of the difference"),
    Comparison("aaPU − nnPU at nnPUSB's threshold", "aapu", "test_error", "nnpu", "test_error:nnpusb",
               "aaPU against nnPU scored at a label-free threshold (the training U's (1 − π)-quantile)"),
    Comparison("nnPU at nnPUSB's threshold − nnPU", "nnpu", "test_error:nnpusb", "nnpu", "test_error",
               "what moving nnPU's threshold alone does"),
)
#: The clamp's effect on nnPU with both runs scored at nnPUSB's threshold.
CLAMP_AT_ONE = "the clamp in nnPU, both at nnPUSB's threshold"
#: What S adds under the clamp with both runs scored at nnPUSB's threshold.
CLAMPED_AT_ONE = "aaPU − nnPU, both clamped, at nnPUSB's threshold"
#: What S adds under the clamp when it grows by n_select an epoch (no re-picks).
GROWN = "aaPU − nnPU, both clamped, S never re-picked"
#: (a difference, the same with both at one threshold): the pairs :func:`decomposition` splits.
SPLIT = (("aaPU − nnPU", BOTH_AT_ONE), ("the clamp in nnPU", CLAMP_AT_ONE),
         ("aaPU − nnPU, both clamped", CLAMPED_AT_ONE), (GROWN, "aaPU − nnPU never re-picked, at nnPUSB's threshold"))
#: The runs of a record with the clamp in both methods and S never re-picked, as named here.
GROWING = "correction=clamp allow_repick=False"
#: On the readings page's runs (the synthetic task): the clamp's part.
THE_CLAMP = (
    Comparison("the clamp in nnPU", "nnpu correction=clamp", "test_error", "nnpu", "test_error",
               "max(0, ·) as a clamp against Kiryo et al.'s rule, in nnPU"),
    Comparison(CLAMP_AT_ONE, "nnpu correction=clamp", "test_error:nnpusb", "nnpu", "test_error:nnpusb",
               "the same with both runs scored at one label-free threshold (the training U's "
               "(1 − π)-quantile): the ranking's part of the clamp's effect"),
    Comparison("the clamp in aaPU", "aapu correction=clamp", "test_error", "aapu", "test_error",
               "the same in aaPU"),
    Comparison("aaPU − nnPU, both clamped", "aapu correction=clamp", "test_error",
               "nnpu correction=clamp", "test_error", "what S adds under one rule"),
    Comparison(CLAMPED_AT_ONE, "aapu correction=clamp", "test_error:nnpusb", "nnpu correction=clamp",
               "test_error:nnpusb", "the same with both runs scored at one label-free threshold: "
               "the ranking's part of what S adds under one rule"),
    Comparison("aaPU clamped − nnPU", "aapu correction=clamp", "test_error", "nnpu", "test_error",
               "the comparison a literal reading of the paper makes"),
    Comparison(GROWN, f"aapu {GROWING}", "test_error", f"nnpu {GROWING}", "test_error",
               "what S adds when it grows by n_select an epoch instead of re-picking (its largest)"),
    Comparison(SPLIT[-1][1], f"aapu {GROWING}", "test_error:nnpusb", f"nnpu {GROWING}", "test_error:nnpusb",
               "the same with both runs scored at one label-free threshold: its ranking's part"),
)
#: A verdict said of a difference that is not a claim of the paper (first − second).
PLAIN = {REPRODUCED: "lower, shown", SMALLER_GAIN: "lower by less than Δ, shown",
         RULED_OUT: "no decrease of Δ or more", CONTRADICTED: "higher, shown",
         SMALLER_LOSS: "higher by less than Δ, shown", INCONCLUSIVE: "undecided at these seeds",
         BORDERLINE: "borderline", DESCRIPTIVE: "descriptive only", UNSTABLE: "unstable"}
#: The records at the paper's settings, in the summary's order, and their names.
NAMES = {"synthetic": "synthetic", "real_20news": "20 News", "real_fashion_mnist": "Fashion-MNIST",
         "real_cifar10": "CIFAR-10"}
RECORDS = tuple(NAMES)


def _finals(history: pd.DataFrame) -> pd.DataFrame:
    """Each run's row at its last epoch, indexed by (method, seed)."""
    last = history[history.epoch == history.groupby("method").epoch.transform("max")]
    return last.set_index(["method", "seed"])


def judge_family(history: pd.DataFrame, comparisons, summary: dict) -> pd.DataFrame:
    """One row per comparison that ``history`` holds both runs of: the paired difference
    of final test error over their shared seeds (covering the test set where the seeds share
    one and the runs kept their per-point errors), judged jointly with the floor and Δ of
    the page's ``summary``, and the ROC AUC and average-precision differences beside it
    (paired over the same seeds, descriptive)."""
    n_test = summary.get("n_test")
    finals = _finals(history)
    runs = set(finals.index.get_level_values("method"))
    held = [c for c in comparisons if {c.run, c.baseline} <= runs and {c.column, c.baseline_column} <= set(finals)
            and finals.loc[c.run][c.column].notna().all() and finals.loc[c.baseline][c.baseline_column].notna().all()]
    if not held:
        return pd.DataFrame()
    seeds = sorted(set.intersection(*(set(finals.loc[r].index) for c in held for r in (c.run, c.baseline))))
    paireds, margins, aucs, aps = [], [], [], []
    for c in held:
        a, b = finals.loc[c.run].loc[seeds, c.column], finals.loc[c.baseline].loc[seeds, c.baseline_column]
        wrong = per_point(finals.reset_index(), (c.run, c.baseline), seeds, summary,
                          [x.replace("test_error", "test_wrong") for x in (c.column, c.baseline_column)])
        paireds.append(paired_difference(a, b, wrong))
        margins.append(MARGIN.value(float(b.mean()), n_test))
        aucs.append(_beside(finals, c, seeds, "test_auc"))
        aps.append(_beside(finals, c, seeds, "test_ap"))
    judged = judge_jointly(paireds, margins, [floor_for(summary)] * len(paireds))
    return pd.DataFrame([{"label": c.label, "what": c.what, "seeds": len(seeds), DIFFERENCE: j.paired.mean,
                          "low": j.low, "high": j.high, "Δ": m, "verdict": j.verdict, "judged": j.text(),
                          "interval covers": covers(summary, j),
                          "AUC difference": a.mean, "ROC AUC": a.interval(),
                          "AP": ap.interval() if ap else "not recorded"}
                         for c, j, m, a, ap in zip(held, judged, margins, aucs, aps)])


def decomposition(table: pd.DataFrame) -> pd.DataFrame:
    """Per data set and difference of :data:`SPLIT` (aaPU − nnPU; the clamp in nnPU) whose
    runs are all scored at the common threshold too: the difference at each run's own
    threshold, the same with both at nnPUSB's (the ranking's part), their difference (the
    threshold's part: how much of it one label-free threshold removes), and the ROC AUC
    difference, each as its family judged it."""
    rows = []
    for (data, source), family in table.groupby(["data set", "source"], sort=False):
        for label, at_one in SPLIT:
            own, one = (family[family.label == x] for x in (label, at_one))
            if own.empty or one.empty:
                continue
            own, one = own.iloc[0], one.iloc[0]
            rows.append({"data set": data, "difference": label, "seeds": own.seeds,
                         "at each run's threshold": f"{own[DIFFERENCE]:+.4f} [{own.low:+.4f}, {own.high:+.4f}]",
                         "both at one threshold (ranking)": f"{one[DIFFERENCE]:+.4f} [{one.low:+.4f}, {one.high:+.4f}]",
                         "the threshold's part": f"{own[DIFFERENCE] - one[DIFFERENCE]:+.4f}",
                         "ROC AUC": own["ROC AUC"], "source": source})
    return pd.DataFrame(rows)


def _beside(finals: pd.DataFrame, c, seeds, column: str):
    """The paired difference of ``column`` between a comparison's runs on ``seeds``, or None
    where a run did not record it (a history from before the metric existed)."""
    if column not in finals:
        return None
    a, b = finals.loc[c.run].loc[seeds, column], finals.loc[c.baseline].loc[seeds, column]
    return None if a.isna().any() or b.isna().any() else paired_difference(a, b)


def clamped(page: str, root: Path = REFERENCE) -> pd.DataFrame | None:
    """The record of ``page`` under Kiryo et al.'s rule beside its record with max(0, ·) as a
    plain clamp (``<page>-clamp``), the latter's runs named as the readings name them
    ("nnpu correction=clamp"), where both are committed and current (and the clamp record
    with S never re-picked, ``<page>-clamp-norepick``, where committed: its runs named
    with :data:`GROWING`); else None."""
    kiryo, clamp = committed(page, "paper", root), committed(f"{page}-clamp", "paper", root)
    if not (kiryo.current and clamp.current):
        return None
    parts = [kiryo.history, clamp.history.assign(method=clamp.history.method + " correction=clamp")]
    growing = committed(f"{page}-clamp-norepick", "paper", root)
    if growing.current:
        parts.append(growing.history.assign(method=growing.history.method + f" {GROWING}"))
    return pd.concat(parts, ignore_index=True)


def answer_table(output_dir, root: Path = REFERENCE, pages=RECORDS) -> pd.DataFrame:
    """Every data set's family (of ``pages``): the committed paper-scale records (the
    threshold's part, and the clamp's where a clamp record is committed beside), else for the
    synthetic task's clamp this build's readings page, each row saying where it comes from."""
    parts = []
    for page in pages:
        found = committed(page, "paper", root)
        if not found.current:
            continue
        family = judge_family(found.history, AT_THE_PAPERS_SCALE, found.summary)
        parts.append(family.assign(data=page, **{"data set": NAMES[page]},
                                   source="committed at the paper's settings"))
        if (both := clamped(page, root)) is not None:
            family = judge_family(both, THE_CLAMP, found.summary)
            parts.append(family.assign(data=page, **{"data set": NAMES[page]},
                                       source="committed at the paper's settings, each rule"))
    readings = Path(output_dir) / "readings"
    if "synthetic" in pages and (readings / "history.csv").exists() and clamped("synthetic", root) is None:
        summary = json.loads((readings / "summary.json").read_text())
        family = judge_family(read_history(readings / "history.csv"), THE_CLAMP, summary)
        parts.append(family.assign(data="synthetic", **{"data set": NAMES["synthetic"]},
                                   source=f"the readings page, {summary['profile']} profile"))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def _row(table: pd.DataFrame, data: str, label: str) -> dict | None:
    rows = table[(table.data == data) & (table.label == label)]
    return rows.iloc[0].to_dict() if len(rows) else None


def _said(r: dict, plain: bool = True) -> str:
    said = PLAIN.get(r["verdict"], r["verdict"]) if plain else r["verdict"]
    return f"{r[DIFFERENCE]:+.4f} [{r['low']:+.4f}, {r['high']:+.4f}], {said}"


def _growing(table: pd.DataFrame, data: str) -> str:
    """The sentence on S growing by n_select an epoch (no re-picks) under the clamp, or ""."""
    r = _row(table, data, GROWN)
    return "" if r is None else (f" With S never re-picked — growing by n_select an epoch, the "
                                 f"largest S can get — aaPU − nnPU, both clamped, is {_said(r)}: "
                                 f"{_what_s_adds(r)}.")


def _clamp_at_one(table: pd.DataFrame, data: str) -> str:
    """The clamp's effect on nnPU with both runs at nnPUSB's threshold, as a clause, or ""."""
    r = _row(table, data, CLAMP_AT_ONE)
    return "" if r is None else f" (with both scored at nnPUSB's label-free threshold, {_said(r)})"


def _what_s_adds(both: dict) -> str:
    """What aaPU − nnPU under one rule allows one to say of S, in the rule's words."""
    if both["verdict"] in (REPRODUCED, SMALLER_GAIN):
        return "under one rule S still adds a gain shown"
    if both["verdict"] == RULED_OUT:
        return "no effect of S of Δ or more"
    if both["verdict"] in (CONTRADICTED, SMALLER_LOSS):
        return "under one rule S raises aaPU's error, shown"
    if both["verdict"] == INCONCLUSIVE:
        return "no gain from S is shown under one rule, nor one of Δ ruled out at these seeds"
    return f"no verdict on what S adds under one rule ({both['judged']})"


def answer_text(table: pd.DataFrame, claimed: dict) -> str:
    """Markdown: the answer in a few sentences, every number and word from ``table`` and
    ``claimed`` ({page: its aaPU-vs-nnPU claim's verdict at the paper's settings, as the
    reproduction table judges it in the paper's family})."""
    if table.empty:
        return "Nothing to answer from yet: no committed record and no readings page in this build."
    names = {**NAMES, "synthetic": "the synthetic task"}
    helps = [(d, r) for d in RECORDS if (r := _row(table, d, "aaPU − nnPU"))]
    text = ("**Does aaPU's selection help?** At the paper's settings, the claim that aaPU's final "
            "test error is lower than nnPU's by Δ (a tenth of nnPU's error) or more, judged as the "
            "paper's claims are (its four data sets' claims one family): "
            + "; ".join(f"{names[d]}: {claimed[d].split(' — ')[0]}" for d, _ in helps if d in claimed)
            + ".") if helps else ""
    clamps = [(d, _row(table, d, "aaPU clamped − nnPU"), _row(table, d, "the clamp in nnPU"),
               _row(table, d, "aaPU − nnPU, both clamped")) for d in RECORDS]
    clamps = [(d, *rows) for d, *rows in clamps if all(rows)]
    if clamps:
        text += ("\n\n**Why did the paper see a gain?** Read literally, its max(0, ·) is a plain "
                 "clamp, which changes the rule of both methods, not only S. " + " ".join(
                     f"On {names[d]} ({literal['seeds']} seeds, {literal['source']}): aaPU clamped "
                     f"against Kiryo et al.'s nnPU {_said(literal)}; the clamp alone moves nnPU by "
                     f"{_said(clamp)}" + _clamp_at_one(table, d) + f"; with both clamped, aaPU − nnPU "
                     f"is {_said(both)}: {_what_s_adds(both)}." + _growing(table, d)
                     for d, literal, clamp, both in clamps))
    threshold = [(names[d], r, _row(table, d, "nnPU at nnPUSB's threshold − nnPU"), _row(table, d, BOTH_AT_ONE))
                 for d in RECORDS if (r := _row(table, d, "aaPU − nnPU at nnPUSB's threshold"))]
    if threshold:
        auc = max(abs(r["AUC difference"]) for _, r in helps)
        text += (f"\n\n**And the threshold:** aaPU's ROC AUC, which no threshold moves, differs from "
                 f"nnPU's by {auc:.4f} at most at the paper's settings; scored at a label-free "
                 "threshold (nnPUSB's: the training U's (1 − π)-quantile), nnPU stands against aaPU "
                 "as follows (aaPU − nnPU there; the threshold's own effect on nnPU in brackets; "
                 "where the record has it, aaPU − nnPU with both at that threshold): "
                 + "; ".join(f"{d}: {_said(r)}" + (f" ({_said(t)})" if t else "")
                             + (f", both there {_said(b)}" if b else "") for d, r, t, b in threshold)
                 + ".")
    return text


def page_answer(page: str, output_dir, root: Path = REFERENCE) -> str:
    """Markdown: the summary's answer (:func:`answer_text`) for ``page``'s data set alone, in
    the summary's words and from the same records, that a comparison page opens with; "" where
    no record at the paper's settings is committed."""
    from .registry import book_claims
    table = answer_table(output_dir, root, pages=(page,))
    if table.empty:
        return ""
    claims = [p for _, p in book_claims() if p == page]
    text = answer_text(table, dict(zip(claims, verdict_column("paper", root, pages=(page,)))))
    if page == "synthetic" and _row(table, page, "the clamp in nnPU") is None:
        text += ("\n\nmax(0, ·) read as a plain clamp, the other reading of the paper's "
                 "objective, is judged on the readings page.")
    return text


#: The README's names of the records (CIFAR-100's: none is committed yet).
README_NAMES = {"synthetic": "Synthetic task (§4.1)", "real_20news": "20 Newsgroups",
                "real_fashion_mnist": "Fashion-MNIST (not in the paper)", "real_cifar10": "CIFAR-10",
                "real_cifar100": "CIFAR-100"}


def readme_answer(root: Path = REFERENCE) -> str:
    """Markdown: the README's "answer so far", every number and verdict from the committed
    paper-scale records as :func:`answer_table` judges them (`make readme` writes it)."""
    table = answer_table(Path(root) / "no build", root)

    def said(r: dict, plain: bool = False) -> str:
        planned = committed(r["data"], "paper", root).planned
        return _said(r, plain) + (f", {r['seeds']} of {planned} seeds" if r["seeds"] < planned else "")

    lines = ["Final test error, aaPU − nnPU, at the paper's settings (negative: aaPU lower; Δ: a tenth of "
             "nnPU's error; a data set's comparisons judged as one family, as the book's summary judges "
             "them; ROC AUC, which no threshold moves, in brackets):"]
    for data, name in README_NAMES.items():
        r = _row(table, data, "aaPU − nnPU")
        if r is None:
            lines.append(f"- **{name}:** no current record at the paper's settings yet.")
            continue
        both = _row(table, data, BOTH_AT_ONE)
        lines.append(f"- **{name}:** {said(r)} (Δ = {r['Δ']:.4f}; ROC AUC {r['ROC AUC']})"
                     + (f"; with both scored at one label-free threshold (nnPUSB's): {said(both)}." if both else "."))
    clamp = [(c, _row(table, d, "aaPU − nnPU, both clamped"), _row(table, d, CLAMP_AT_ONE)) for d in RECORDS
             if (c := _row(table, d, "the clamp in nnPU"))]
    if clamp:
        lines.append("- **The clamp** (the paper's max(0, ·) read as a plain clamp) changes nnPU's error: "
                     + "; ".join(f"{c['data set']} {said(c, plain=True)} (ROC AUC {c['ROC AUC']}"
                                 + (f"; both at one threshold {said(one, plain=True)})" if one else ")")
                                 for c, _, one in clamp)
                     + ". With both methods clamped, aaPU − nnPU: "
                     + "; ".join(f"{b['data set']} {said(b)}" for _, b, _ in clamp if b) + ".")
    return "\n".join(lines).replace("-0.", "−0.")
