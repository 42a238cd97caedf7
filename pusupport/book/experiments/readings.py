"""The paper's unstated choices, put to the test on the synthetic experiment (§4.1).

Each :class:`Reading` changes one choice the paper leaves open, for aaPU, for the nnPU
baseline, or for both (π), and is judged by the paired aaPU − nnPU difference of final
test error over the page's seeds (:func:`~pusupport.book.verdicts.paired_difference`). Runs
that a reading leaves unchanged are shared with the book's own reading.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ..experiment import TRAINING, Experiment, RunSpec
from ..claims import Claim, Outcome, floor_for
from ..verdicts import (CONTRADICTED, INCONCLUSIVE, REPRODUCED, RULED_OUT, SMALLER_GAIN, SMALLER_LOSS,
                        Margin, judge_jointly, paired_difference)

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..page import Page


#: Δ of every reading: a tenth of its nnPU's final test error.
MARGIN = Margin()
#: The table's verdict column.
VERDICT = "verdict on “aaPU is better”"


@dataclass(frozen=True)
class Reading:
    """One choice, the value tried and a short label; ``aapu``/``nnpu``: TrainConfig changes of that side;
    ``prior``: π given to both methods; ``select_from_factor``: aaPU's first selection
    epoch as a multiple of the page's; ``control``: the choice of the reading that makes the
    same change on both sides, where only S differs (a gain here may be the change's)."""

    choice: str
    value: str
    short: str
    aapu: dict = field(default_factory=dict)
    nnpu: dict = field(default_factory=dict)
    prior: float | None = None
    select_from_factor: float | None = None
    control: str | None = None


BOOK_READING = Reading("this book's reading", "π = 0.4387 (the generating process), re-picks "
                       "allowed, S weighted π/n_p, logistic-loss nnPU, the paper’s n_select and first "
                       "selection epoch", "as this book reads it")

READINGS = (
    Reading("class prior π", "0.4412, the value the paper states", "π = 0.4412",
            prior=0.4412),
    Reading("a point already in S", "never re-picked (the next largest loss instead)",
            "never re-pick", aapu={"allow_repick": False}),
    Reading("weight of S in R̂_p", "π/(n_p + |S|): a mean over P ∪ S",
            "S weighted π/(n_p + |S|)", aapu={"s_weight": "union"}),
    Reading("nnPU baseline's loss", "sigmoid (Kiryo et al.'s choice) instead of logistic",
            "nnPU with sigmoid loss", nnpu={"loss": "sigmoid"}),
    Reading("n_select", "5 per epoch", "n_select = 5", aapu={"n_select": 5}),
    Reading("n_select", "20 per epoch", "n_select = 20", aapu={"n_select": 20}),
    Reading("first selection epoch", "half the paper's (100 at its settings)",
            "selection from epoch {select_from}", select_from_factor=0.5),
    Reading("first selection epoch", "twice the paper's (400 at its settings)",
            "selection from epoch {select_from}", select_from_factor=2.0),
    Reading("max(0, ·) of aaPU's risk", "a plain clamp, R̂_p + max(0, R̂_n): S keeps its "
            "gradient on corrected batches (Kiryo et al.'s rule steps on −∇R̂_n alone)",
            "max(0, ·) as a clamp", aapu={"correction": "clamp"},
            control="max(0, ·) of both risks"),
    Reading("max(0, ·) of both risks", "a plain clamp in nnPU too: what S adds once the rule "
            "is the same on both sides (the reading above also changes the rule)",
            "max(0, ·) as a clamp, both", aapu={"correction": "clamp"}, nnpu={"correction": "clamp"}),
)


def _label(method: str, changes: dict) -> str:
    return method + "".join(f" {k}={v}" for k, v in sorted(changes.items()))


def _changes(reading: Reading, select_from: int) -> tuple[dict, dict]:
    aapu = dict(reading.aapu)
    if reading.select_from_factor is not None:
        aapu["select_from"] = max(1, round(select_from * reading.select_from_factor))
    return aapu, dict(reading.nnpu)


def pairs(select_from: int, readings=READINGS) -> list[tuple]:
    """(reading, its aaPU run's label, its nnPU run's label, its first selection epoch)
    for a page whose first selection epoch is ``select_from``; runs with π changed carry
    " π=<value>" in their labels."""
    out = []
    for reading in (BOOK_READING, *readings):
        aapu, nnpu = _changes(reading, select_from)
        suffix = "" if reading.prior is None else f" π={reading.prior}"
        out.append((reading, _label("aapu", aapu) + suffix, _label("nnpu", nnpu) + suffix,
                    aapu.get("select_from")))
    return out


def plan(s, readings=READINGS) -> list[RunSpec]:
    """Every run the readings need, once: the book's pair, then each reading's changed runs
    (a reading with π changed trains both methods with that π)."""
    runs = {}
    for reading in (BOOK_READING, *readings):
        group = "readings" if reading.prior is None else f"prior_{reading.prior}"
        suffix = "" if reading.prior is None else f" π={reading.prior}"
        for method, changes in zip(("aapu", "nnpu"), _changes(reading, s.train.select_from)):
            label = _label(method, changes) + suffix
            runs.setdefault(label, RunSpec(label, method, {"train": changes} if changes else {},
                                           prior=reading.prior, group=group))
    return list(runs.values())


def run_readings(page: Page, readings=READINGS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Train every run the readings need; return (tidy history, one row per reading).

    The history's ``method`` column names each run by its changes ("aapu n_select=5").
    The readings are one family on the same seeds: each is judged on its paired aaPU − nnPU
    difference of final test error with the max-|t| sign-flip adjustment and its
    simultaneous interval (:func:`~pusupport.book.verdicts.judge_jointly`).
    """
    history = page.run(plan(page.settings, readings))
    last = history.sort_values("epoch").groupby(["method", "seed"]).tail(1)   # each run's last epoch
    final = last.set_index(["method", "seed"]).test_error
    pairs_ = pairs(page.settings.train.select_from, readings)
    paireds = [paired_difference(final[a][page.seeds], final[n][page.seeds]) for _, a, n, _ in pairs_]
    n_test = page.settings.data.n_test
    margins = [MARGIN.value(final[n].mean(), n_test) for _, _, n, _ in pairs_]
    floor = floor_for({"n_test": n_test})
    judged = judge_jointly(paireds, margins, [floor] * len(paireds))
    rows = []
    for (reading, a, n, select_from), j in zip(pairs_, judged):
        rows.append({"choice": reading.choice, "reading": reading.value,
                     "label": reading.short.format(select_from=select_from),
                     "aaPU": final[a].mean(), "nnPU": final[n].mean(),
                     "aaPU − nnPU": j.paired.mean, "low": j.low, "high": j.high,
                     "p (t, Holm)": j.p_t, "p (sign-flip, max-|t|)": j.p_exact, "Δ": j.margin,
                     "ruled out": j.ruled_out(), VERDICT: j.verdict, "differences": list(j.paired.differences)})
    table = pd.DataFrame(rows)
    return history, table.assign(**{REPORTED: reported(table)})


#: The table's column of each reading's verdict as reported (:func:`reported`).
REPORTED = "reported"


def _controls(table: pd.DataFrame) -> dict:
    """{reading: its control} of the readings in ``table`` whose control is there too."""
    choices = set(table["choice"])
    return {r.choice: r.control for r in READINGS if r.choice in choices and r.control in choices}


def reported(table: pd.DataFrame) -> list[str]:
    """Each reading's verdict as reported: a reading that changes aaPU's side alone and has a
    control — the same change on both sides, where only S differs — is reported by its
    control's verdict where the two disagree: what it shows beyond its control is the
    change's, not S's."""
    verdicts, controls = dict(zip(table["choice"], table[VERDICT])), _controls(table)
    return [verdicts[controls[c]] if c in controls else v for c, v in zip(table["choice"], table[VERDICT])]


def answer(table: pd.DataFrame) -> str:
    """The section's question answered in one sentence, from the table (adjusted values),
    each reading judged against its own control where it has one (:func:`reported`)."""
    verdicts, controls = dict(zip(table["choice"], table[VERDICT])), _controls(table)
    said = reported(table)
    caveats = "".join(f" The reading “{c}” changes aaPU's side alone, and with it more than S: "
                      f"alone it reads “{verdicts[c]}”; against its control (“{controls[c]}”: nnPU "
                      f"changed the same way, only S differing) “{verdicts[controls[c]]}”, which "
                      "is what it is reported by." for c in controls if verdicts[c] != verdicts[controls[c]])
    better = table[[v in (REPRODUCED, SMALLER_GAIN) for v in said]]
    k = len(table)
    if not better.empty:
        which = "; ".join(f"{r['choice']}: {r['reading']}" for r in better.to_dict("records"))
        return (f"Yes: {len(better)} of {k} readings put aaPU's final test error below nnPU's, "
                f"adjusted for the {k} readings ({which})." + caveats)
    ruled = said.count(RULED_OUT)
    if ruled == k:
        return (f"No: every one of the {k} readings rules out a gain for aaPU of Δ (a tenth of "
                "nnPU's error) or more — each reading's interval excludes it, so all of them do at "
                "once at 95 % (an intersection–union test)." + caveats)
    worse = sum(v in (CONTRADICTED, SMALLER_LOSS) for v in said)
    return (f"No reading shows the gap: adjusted for the {k} readings, none puts aaPU's final test error below "
            f"nnPU's. A gain of Δ or more is ruled out under {ruled} of them"
            + (f", aaPU is worse under {worse}" if worse else "")
            + f", and {k - ruled - worse} cannot tell at these seeds. This is an absence "
            "of evidence for the gap, not evidence against it, except where ruled out." + caveats)


def the_baseline_loss(table: pd.DataFrame) -> str:
    """Markdown: what the baseline-loss reading says beside the book's own — how far the loss
    alone moves nnPU, against how far aaPU's selection moves it from nnPU."""
    rows = table.set_index("choice")
    if BOOK_READING.choice not in rows.index or "nnPU baseline's loss" not in rows.index:
        return ""
    book, sigmoid = rows.loc[BOOK_READING.choice], rows.loc["nnPU baseline's loss"]
    moved, gap = sigmoid["nnPU"] - book["nnPU"], book["aaPU"] - book["nnPU"]
    text = (f"The baseline's loss alone moves nnPU's mean final error from {book['nnPU']:.4f} "
            f"(logistic) to {sigmoid['nnPU']:.4f} (sigmoid), {moved:+.4f}; aaPU's selection moves "
            f"it {gap:+.4f} from logistic nnPU.")
    if sigmoid["nnPU"] < min(book["aaPU"], book["nnPU"]):
        text += (" nnPU with Kiryo et al.'s sigmoid loss has the lowest error of the three: the "
                 "paper's comparison, both under the logistic loss, leaves out the baseline a "
                 "practitioner would run. \"Where aaPU stands\" compares aaPU with it directly.")
    return text


def the_clamp(table: pd.DataFrame) -> str:
    """Markdown: what the two clamp readings say together — aaPU clamped against Kiryo's nnPU
    changes the rule and adds S at once; against nnPU clamped the same way only S differs."""
    rows = table.set_index("choice")
    if not {"max(0, ·) of aaPU's risk", "max(0, ·) of both risks"} <= set(rows.index):
        return ""
    one, both = rows.loc["max(0, ·) of aaPU's risk"], rows.loc["max(0, ·) of both risks"]
    return (f"Read as a plain clamp, max(0, ·) gives aaPU a mean final error of {one['aaPU']:.4f} "
            f"against {one['nnPU']:.4f} for Kiryo et al.'s nnPU ({one[VERDICT]}); clamped the same "
            f"way, nnPU reaches {both['nnPU']:.4f}, and aaPU − nnPU under one rule is "
            f"{both['aaPU − nnPU']:+.4f} [{both['low']:+.4f}, {both['high']:+.4f}] ({both[VERDICT]}). "
            "What the first comparison shows beyond the second is the rule's, not S's.")


def answer_for(output_dir) -> str:
    """The answer written by the readings page under ``output_dir``, or why there is none."""
    import json
    from pathlib import Path
    path = Path(output_dir) / EXPERIMENT.folder() / "summary.json"
    if not path.exists():
        return "The readings page has not run."
    summary = json.loads(path.read_text())
    return (f"{answer(pd.DataFrame(summary['readings']))} ({summary['profile']} profile, "
            f"{len(summary['seeds'])} seeds)")


def some_reading(summary: dict, history: pd.DataFrame) -> Outcome:
    """The readings page's answer as a claim of the reproduction table, from the table it
    judged (one family, :func:`run_readings`), each reading as reported (:func:`reported`): a
    gain under some reading — reproduced, or a gain smaller than Δ — else every reading's
    gain ruled out, every reading worse (contradicted), or inconclusive."""
    table = pd.DataFrame(summary.get("readings", []))
    if table.empty:
        return Outcome("no reading was judged (a dry run)", INCONCLUSIVE)
    verdicts = set(reported(table))
    verdict = next((v for v in (REPRODUCED, SMALLER_GAIN) if v in verdicts), None) or (
        RULED_OUT if verdicts == {RULED_OUT} else
        CONTRADICTED if verdicts <= {CONTRADICTED, SMALLER_LOSS} else INCONCLUSIVE)
    return Outcome(f"{answer(table)} (the page's {len(table)} readings, one family)", verdict,
                   seeds=len(summary.get("seeds", [])))


EXPERIMENT = Experiment(
    "readings", dataset="synthetic", selects=True,
    not_in_paper="one reading of a choice the paper leaves open at a time",
    changes={"paper": {"train": dict(eval_every=0)}},     # final numbers only: no per-epoch test
    parameters=TRAINING, plan=plan,
    reads=("synthetic",),       # its book reading's nnPU is the synthetic page's: trained there first
    claims=(Claim("Some reading of the paper's unstated choices gives aaPU a lower test error "
                  "than nnPU (§4.1's task; a reading judged against its own control where it has one)",
                  some_reading),))
