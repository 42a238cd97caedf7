"""Beyond the paper: where aaPU stands among the PU methods people use today, each trained
beside aaPU on a comparison page's data, seeds, model and schedule, judged paired by seed
on test error, ROC AUC and average precision."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pandas as pd

from ...apps.own import STOP_SPLIT
from ...core.evaluation import at_own_choice
from ...core.problem import hold_out
from ...core.methods import get_method
from ...data.sizes import SIZES
from ..claims import Claim, Outcome, floor_for, per_point
from ..experiment import Experiment, RunSpec
from ..reference import record_runs
from ..verdicts import (CONTRADICTED, INCONCLUSIVE, REPRODUCED, RULED_OUT, SMALLER_GAIN, SMALLER_LOSS,
                        Margin, judge_jointly, paired_difference)

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..page import Page

#: The methods run beside aaPU: the paper's baseline, today's methods, then the paper's two
#: counterfactuals (not methods one can use: they stand apart in the verdicts).
COMPARED = ("nnpu", "nnpu_sigmoid", "nnpusb", "vpu", "distpu", "robustpu", "negsel", "aapu_oracle")
#: The data sets, each at its comparison page's settings.
DATASETS = ("synthetic", "fashion_mnist", "20news", "cifar10")
#: What each profile leaves out of the `paper` plan, and why. `cpu`: what this machine's
#: budget takes — today's methods on the synthetic task (the paper's own settings; a stacked
#: MLP: the record's runs, :func:`_run`), on the real data nnPUSB, read from nnPU's run. `smoke`: the plumbing,
#: every method but on CIFAR-10 (whose every method the `paper` dry run covers).
LEFT_OUT = {
    "cpu": ({"synthetic": ["nnpu", "nnpusb", "vpu", "distpu", "robustpu"],
             **{d: ["nnpu", "nnpusb"] for d in ("fashion_mnist", "20news", "cifar10")}},
            "`make book` must fit in an hour on a 2-core CPU: each further method on a real data "
            "set costs about half its comparison page (3–7 minutes of the book's time), and each "
            "of the paper's two counterfactuals 2 minutes on the synthetic task. At `cpu` the "
            "real data sets get nnPUSB, read from nnPU's run at no cost — whether aaPU's gain is a "
            "shifted threshold; nnPU with Kiryo et al.'s default loss, the sigmoid, is a reading "
            "of the readings page on the synthetic task (the same runs). "
            "The `paper` profile plans every method on every data set"),
    "smoke": ({**{d: list(COMPARED) for d in DATASETS}, "cifar10": ["nnpu", "nnpusb"]},
              "the smoke profile checks the plumbing; the `paper` dry run in the tests runs "
              "every method on CIFAR-10")}
#: The metrics compared; each is oriented so that a negative difference favours aaPU.
METRICS = {"test_error": "test error", "test_auc": "ROC AUC", "test_ap": "average precision"}
HIGHER_IS_BETTER = {"test_auc", "test_ap"}
#: Δ: a tenth of the compared method's shortfall (its error, or 1 − its AUC / AP), as for the
#: paper's claims, never below 3 test points.
MARGIN = Margin()
WIN, LOSE, TIE, OPEN = "aaPU better", "aaPU worse", "tie (within ±Δ)", "undecided"


#: The page's record at the paper's scale: every method on the synthetic task (the data set
#: whose every run a 2-core CPU trains at the paper's settings within an hour), its runs
#: committed under ``results/reference/paper/<RECORD>/runs`` and read, never trained, by
#: every build of the page.
RECORD = "standing-synthetic"
RECORD_COMPARED = {"synthetic": list(COMPARED)}
RECORD_COMMAND = "make standing-record"
#: Where the record's runs are committed (:func:`~pusupport.book.pages.record_of`).
RECORD_RUNS = record_runs("paper", RECORD)
#: Why the record is not shown where its runs are not all committed.
RECORD_MISSING = ("its runs are not committed for these settings, this device and this training "
                  f"code: `{RECORD_COMMAND}` trains them")

#: The PU validation split held out of the training P and U where a compared method's recipe
#: reads one (VPU's choice of epoch, Robust-PU's early stop): VPU's authors' share, 5,000 of
#: Fashion-MNIST's 60,000 rows, the one your own data are given too. Every method of that data
#: set then trains without it and is reported both at its last epoch and at its own
#: label-free choice.
VALIDATION = STOP_SPLIT


def held_out(methods) -> dict:
    """The data changes of a data set whose ``methods`` read a PU split in their recipe."""
    reads = any(get_method(m).validation or get_method(m).stop for m in methods)
    return {"data": {"validation": VALIDATION}} if reads else {}


def mixes_on_sparse(method: str, dataset: str) -> bool:
    """Whether ``method`` mixes input rows (MixUp) and ``dataset``'s rows are sparse."""
    return get_method(method).mixes_inputs and SIZES[dataset].words is not None


def check_compared(compared) -> None:
    """Refuse a ``compared`` that is not {data set: [methods]} over :data:`DATASETS` and
    :data:`COMPARED`, naming them."""
    ok = (isinstance(compared, dict) and compared and set(compared) <= set(DATASETS) and all(
        isinstance(ms, list) and set(ms) <= set(COMPARED) for ms in compared.values()))
    if not ok:
        raise ValueError(f"compared={compared!r}: give {{data set: [methods]}} with data sets from "
                         f"{list(DATASETS)} and methods from {list(COMPARED)}, e.g. "
                         "{'synthetic': ['nnpu', 'vpu']} (aaPU always runs)")


def plan(s) -> list[RunSpec]:
    """aaPU and the methods compared on each data set (one group each); a method that mixes
    inputs is left out where the rows are sparse (:func:`not_run` says so)."""
    check_compared(s.page.compared)
    runs = {d: [m for m in ["aapu", *methods] if not mixes_on_sparse(m, d)]
            for d, methods in s.page.compared.items()}
    return [RunSpec(m, m, group=d, dataset=d, changes={**_authors(m, d), **held_out(methods)})
            for d, methods in runs.items() for m in methods]


def _authors(method: str, dataset: str) -> dict:
    """The method's own settings its authors give for ``dataset``, as a run's changes."""
    given = get_method(method).by_dataset.get(dataset)
    return {"train": {"method_settings": given}} if given else {}


def datasets_table(pages: dict) -> pd.DataFrame:
    """Where each data set's runs come from: its page, seeds, epochs, network and the
    fingerprint of its settings (the same as that page's)."""
    return pd.DataFrame([{"data set": d, "settings of the page": p.name, "seeds": len(p.seeds),
                          "epochs": p.settings.train.epochs, "network": p.settings.model.name,
                          "fingerprint": p.fingerprint()} for d, p in pages.items()]
                        ).set_index("data set")


def not_run_text(s, profile: str) -> str:
    """Markdown: what ``profile`` (settings ``s``) leaves out of the `paper` plan, and why."""
    left = not_run(s, profile)
    if not left:
        return "Every method ran on every data set."
    planned = EXPERIMENT.changes[profile]["page"]["compared"]
    reason = (LEFT_OUT[profile][1] if profile in LEFT_OUT else "") if s.page.compared == planned \
        else "the page's `compared` parameter leaves them out"
    why = (f"\n\nNot at this profile because {reason}."
           if reason and any(line.endswith(": not at this profile") for line in left) else "")
    return "**Not run here:**\n\n" + "\n".join(f"- {line}" for line in left) + why


def outcome_colors() -> dict:
    """A colour per outcome: green aaPU better, red worse, orange a tie, grey undecided."""
    import seaborn as sns
    deep = sns.color_palette("deep")
    return {WIN: deep[2], LOSE: deep[3], TIE: deep[1], OPEN: "0.55"}


def not_run(s, profile: str) -> list[str]:
    """The method × data set pairs of the `paper` plan ``profile`` leaves out, and why."""
    out = []
    for d in DATASETS:
        skipped = [m for m in COMPARED if mixes_on_sparse(m, d)]
        if skipped:
            out.append(f"{', '.join(get_method(m).label for m in skipped)} on {d}: MixUp mixes "
                       "input rows and 20 News rows are sparse tf-idf vectors (a dense batch at "
                       "the paper's vocabulary would not fit)")
        if d not in s.page.compared:
            out.append(f"{d}: not in this page's plan")
        elif set(COMPARED) - set(s.page.compared[d]):
            left = [get_method(m).label for m in COMPARED if m not in s.page.compared[d]
                    and not mixes_on_sparse(m, d)]
            if left:
                out.append(f"{', '.join(left)} on {d}: not at this profile")
    return out


def run_standing(page: Page, pages: dict, missing: str | None = None) -> tuple[pd.DataFrame, dict]:
    """Train the plan on each data set at its comparison page's settings (``pages``: data
    set → that page, resolved at this page's profile): aaPU and nnPU are read from the run
    store when that page has run, unless a validation split is held out there
    (:func:`held_out`). ``missing`` given: read every run, train none — a data set with a
    run the store lacks (not committed, or by other training code) is not run, for that
    reason. Returns the history (a ``dataset`` column) and, per data set, what the verdicts
    need or why it did not run."""
    from ...data.files import DatasetNotFoundError
    from ..runs import NotHeld
    histories, meta = [], {}
    for dataset, there in pages.items():
        # checkpoints and the store under this page
        here = replace(there, name=page.name, sources=[], committed=page.committed)
        specs = [spec for spec in page.plan() if spec.dataset == dataset]
        try:
            make = here.data()
        except DatasetNotFoundError:                       # its own page says how to provide it
            meta[dataset] = {"status": "not run", "reason": "data not available on this machine: "
                             f"the {there.name} page says how to provide it"}
            continue
        try:
            histories.append(_run(here, specs, make, missing).assign(dataset=dataset))
        except NotHeld:
            meta[dataset] = {"status": "not run", "reason": missing}
            continue
        page.sources += [(f"{label} ({dataset})", t) for label, t in here.sources]
        data = make(here.seeds[0])
        # the split as the runs hold it out (none where no method of theirs reads one)
        split = next(({"data": s.changes["data"]} for s in specs if s.changes.get("data")), {})
        trained = hold_out(data, split["data"]["validation"], here.seeds[0]) if split else data
        positive_rate = float((data.y_test > 0).double().mean()) if len(data.y_test) else None
        meta[dataset] = {"status": "run", "seeds": here.seeds, "n_test": there.n_test,
                         "validation": bool(split), "fingerprint": there.fingerprint(),
                         "trained_fingerprint": replace(there, settings=there.settings.merge(split)).fingerprint(),
                         "trained_p": len(trained.x_p), "trained_u": len(trained.x_u),
                         "page_p": len(data.x_p), "page_u": len(data.x_u), "profile": page.profile,
                         "test_positive_rate": positive_rate}
    history = pd.concat(histories, ignore_index=True) if histories else pd.DataFrame()
    return history, meta


def _run(here: Page, specs: list[RunSpec], make, missing: str | None) -> pd.DataFrame:
    """The history of ``specs`` on ``here``'s data: read from the page's record where it
    holds every one of these runs — at `cpu` the synthetic task is at the paper's settings,
    so its runs are the record's (the same keys), trained once — else trained or read as
    the page's runs are (``missing``: read only, :func:`run_standing`)."""
    from ..runs import NotHeld
    if (missing is None and not here.settings.train.dry_run and RECORD_RUNS.is_dir()
            and {spec.dataset for spec in specs} <= set(RECORD_COMPARED)):
        recorded = replace(here, committed=RECORD_RUNS, sources=[])
        try:
            history = recorded.run(specs, make, train=False)
        except NotHeld:
            pass
        else:
            here.sources += recorded.sources
            return history
    return here.run(specs, make, train=missing is None)


def data_trained(meta: dict) -> pd.DataFrame:
    """What each data set's runs trained on: its comparison page's P and U, less the PU
    validation split where one is held out (:func:`held_out`), and that data's fingerprint
    (the page's settings with the split) beside the page's own."""
    rows = [{"data set": d, "P, U of the page": f"{m['page_p']:,}, {m['page_u']:,}",
             "P, U trained on": f"{m['trained_p']:,}, {m['trained_u']:,}",
             "held out": (f"{m['page_p'] - m['trained_p']:,}, {m['page_u'] - m['trained_u']:,} "
                          f"(1/{round(1 / VALIDATION)})" if m["validation"] else "none"),
             "fingerprint of the page": m["fingerprint"], "fingerprint trained": m["trained_fingerprint"]}
            for d, m in meta.items() if m.get("status") == "run" and "trained_p" in m]
    return pd.DataFrame(rows).set_index("data set") if rows else pd.DataFrame()


def _final(history: pd.DataFrame) -> pd.DataFrame:
    """Each run's final model: its last epoch's, or the one its recipe's stop restores
    (Robust-PU: :attr:`~pusupport.core.methods.Method.stop`) where a split was scored."""
    runs = ["dataset", "method", "seed"]
    last = history[history.epoch == history.groupby(runs).epoch.transform("max")]
    restored = own_choice(history[history.method.map(lambda m: bool(get_method(m).stop))])
    replaced = last.set_index(runs).index.isin(restored.set_index(runs).index)
    return pd.concat([last[~replaced], restored]).sort_index()


def own_choice(history: pd.DataFrame) -> pd.DataFrame:
    """Each run at its own label-free choice (:func:`~pusupport.core.evaluation.at_own_choice`);
    a view of another run (nnPUSB) has its error at the last epoch only, so it has none."""
    trained = history[[get_method(m).view_of is None for m in history.method]] if not history.empty else history
    return at_own_choice(trained, by=("dataset", "method", "seed"))


#: The label-free choice of a method that declares none of its own (:attr:`~pusupport.core.methods.Method.criterion`).
BOOK_CRITERION = "the book's: the non-negative PU sigmoid risk, the lowest"

#: Where each run is read: its last epoch (a recipe that stops: the model it restores), or
#: its own label-free choice.
AT = {"last epoch": _final, "own choice": own_choice}


def chosen_epochs(history: pd.DataFrame) -> pd.DataFrame:
    """Per data set and method, the epochs chosen on the validation split (median, range over
    seeds) and by which criterion: its authors' (VPU's variational loss) or the book's."""
    chosen = own_choice(history)
    table = chosen.groupby(["dataset", chosen.method.map(lambda m: get_method(m).label)],
                           sort=False).epoch.agg(["median", "min", "max"])
    methods = {get_method(m).label: get_method(m) for m in chosen.method}
    table["criterion"] = [methods[m].criterion or BOOK_CRITERION for _, m in table.index]
    return table.rename_axis(["data set", "method"])


def standings(history: pd.DataFrame, meta: dict, at=_final) -> pd.DataFrame:
    """Every method against aaPU on each data set and metric: the paired difference method −
    aaPU over shared seeds, judged under the verdict rule with aaPU's side as the claim,
    jointly over a data set's methods and metrics (they share its seeds: a max-|t|
    sign-flip test), Bonferroni over the data sets (the page's sentence states them
    together), Δ a tenth of the method's shortfall. ``difference``, ``low`` and ``high`` are
    method − aaPU. ``at``: where each run is read (:data:`AT`; default its last epoch)."""
    final = at(history) if not history.empty else history
    if final.empty:
        return pd.DataFrame()
    rows = []
    families = final.dataset.nunique()           # the sentence states them together
    for dataset, here in final.groupby("dataset", sort=False):
        info = meta[dataset]
        by = here.set_index(["method", "seed"])
        seeds = sorted(set.intersection(*(set(g.seed) for _, g in here.groupby("method"))))
        members = []
        for method in [m for m in COMPARED if m in set(here.method)]:
            # a view (nnPUSB: nnPU's run at another threshold) ranks as its run does: judged
            # on error alone, its AUC and AP are no members of their own
            for metric in ["test_error"] if get_method(method).view_of else METRICS:
                ours, theirs = by.loc["aapu", metric][seeds], by.loc[method, metric][seeds]
                sign = -1 if metric in HIGHER_IS_BETTER else 1
                points = per_point(here, ("aapu", method), seeds, {"dataset": dataset}) if metric == "test_error" else None
                paired = paired_difference(sign * ours.to_numpy(), sign * theirs.to_numpy(), points)
                shortfall = float(1 - theirs.mean() if metric in HIGHER_IS_BETTER else theirs.mean())
                members.append((method, metric, paired, MARGIN.value(shortfall, info["n_test"]),
                                float(theirs.mean() - ours.mean())))
        floor = floor_for({"n_test": info["n_test"]})
        paireds = [m[2] for m in members]
        judged = judge_jointly(paireds, [m[3] for m in members], [floor] * len(members), families)
        for (method, metric, paired, margin, shown), j in zip(members, judged):
            oriented = -1 if metric in HIGHER_IS_BETTER else 1       # back to method − aaPU
            low, high = sorted((-oriented * j.high, -oriented * j.low))
            rows.append({"dataset": dataset, "method": method, "metric": metric, "seeds": len(seeds),
                         "difference": shown, "low": low, "high": high, "Δ": margin,
                         "verdict": j.verdict, "outcome": outcome(j), "adjustment": j.adjustment,
                         "usable": get_method(method).usable})
    return pd.DataFrame(rows)


def outcome(j) -> str:
    """A verdict in the page's words: aaPU better or worse (a difference shown), a tie (no
    difference shown and the interval inside ±Δ), else undecided."""
    if j.verdict in (REPRODUCED, SMALLER_GAIN):
        return WIN
    if j.verdict in (CONTRADICTED, SMALLER_LOSS):
        return LOSE
    if j.verdict == RULED_OUT and j.high < j.margin - j.floor:      # inside ±Δ on both sides
        return TIE
    return OPEN


def ranking(history: pd.DataFrame, table: pd.DataFrame, at=_final) -> pd.DataFrame:
    """Per data set, the methods ranked by mean test error (aaPU included) where each run is
    read (``at``, :data:`AT`): error, AUC and AP as mean ± sd over seeds, seconds a run, and
    the error verdict against aaPU."""
    final = at(history)
    out = []
    for (dataset, method), rows in final.groupby(["dataset", "method"], sort=False):
        verdict = table[(table.dataset == dataset) & (table.method == method) &
                        (table.metric == "test_error")].outcome
        row = {"data set": dataset, "method": get_method(method).label
               + ("" if get_method(method).usable else " †"),
               "seeds": rows.seed.nunique(), "_error": rows.test_error.mean()}
        for metric, name in METRICS.items():
            if metric in rows:
                row[name] = f"{rows[metric].mean():.4f} ± {rows[metric].std(ddof=1):.4f}"
        if at is _final:
            row["s / run"] = f"{rows.wall_time.median():.0f}"
        row["vs aaPU (error)"] = verdict.iloc[0] if len(verdict) else "—"
        out.append(row)
    ranked = pd.DataFrame(out).sort_values(["data set", "_error"], key=lambda c: c.map(
        {d: i for i, d in enumerate(DATASETS)}) if c.name == "data set" else c)
    ranked.insert(1, "rank", ranked.groupby("data set").cumcount() + 1)
    return ranked.drop(columns="_error").set_index(["data set", "rank"])


def sentence(table: pd.DataFrame, meta: dict | None = None, metric: str = "test_error") -> str:
    """The page's answer: against which usable methods aaPU wins, loses or ties on
    ``metric``, per data set; then the counterfactuals, and the data sets that did not run
    (``meta``: per data set, its status and reason)."""
    missing = [f"{d} ({m['reason']})" for d, m in (meta or {}).items() if m.get("status") != "run"]
    absent = f" Not run: {'; '.join(missing)}." if missing else ""
    if table.empty:
        return "No comparison was judged here (no data set ran, or a dry run)." + absent
    rows = table[table.metric == metric]

    def listed(part, outcome):
        found = part[part.outcome == outcome]
        groups = found.groupby("method", sort=False).dataset.agg(list)
        return "; ".join(f"{get_method(m).label} ({', '.join(ds)})" for m, ds in groups.items())

    usable = rows[rows.usable]
    said = [f"{verb} {listed(usable, o)}" for verb, o in (
        ("aaPU beats", WIN), ("loses to", LOSE), ("ties with", TIE)) if listed(usable, o)]
    rest = int((usable.outcome == OPEN).sum())
    low, high = rows.seeds.min(), rows.seeds.max()
    seeds = f"{low} seeds" if low == high else f"{low}–{high} seeds"
    text = (f"On {METRICS[metric]}, " + ("; ".join(said) if said else "aaPU is shown neither better "
            "nor worse than any method") + f"; {rest} of {len(usable)} comparisons are undecided "
            f"at this scale ({seeds} a data set, each judged by a "
            f"{rows.adjustment.iloc[0] or 'test of its own'}).")
    counter = rows[~rows.usable]
    if not counter.empty:
        text += " Counterfactuals: " + "; ".join(
            f"{get_method(r.method).label} on {r.dataset}: {r.outcome}" for r in counter.itertuples()) + "."
    return text + absent


def answer_for(output_dir) -> str:
    """The sentence written by this page under ``output_dir``, or why there is none."""
    path = Path(output_dir) / EXPERIMENT.folder() / "summary.json"
    if not path.exists():
        return "The page 'Where aaPU stands' has not run."
    summary = json.loads(path.read_text())
    return f"{summary['standing']} ({summary['profile']} profile)"


def beats_todays_methods(summary: dict, history: pd.DataFrame) -> Outcome:
    """The page's answer as a claim of the reproduction table, judged again from its results
    by :func:`standings`: aaPU's test error below every usable method's on every data set run
    — reproduced when it beats each, contradicted when it loses to one, ruled out when it
    ties with one (within ±Δ), else inconclusive."""
    meta = summary.get("datasets", {})
    table = standings(history, meta) if not history.empty else pd.DataFrame()
    if table.empty:
        return Outcome("no comparison was judged (a dry run)", INCONCLUSIVE)
    outcomes = set(table[(table.metric == "test_error") & table.usable].outcome)
    verdict = (REPRODUCED if outcomes == {WIN} else CONTRADICTED if LOSE in outcomes else
               RULED_OUT if TIE in outcomes else INCONCLUSIVE)
    return Outcome(sentence(table, meta), verdict, seeds=int(table.seeds.max()))


EXPERIMENT = Experiment(
    "standing",
    not_in_paper="aaPU against the PU methods people use today",
    changes={"paper": {"page": dict(compared={d: list(COMPARED) for d in DATASETS})},
             **{p: {"page": dict(compared=table)} for p, (table, _) in LEFT_OUT.items()}},
    # ``compared``: {data set: [methods]} run instead of the profile's (e.g. one data set)
    parameters={"compared": (dict, type(None))},
    plan=plan, reads=DATASETS,
    claims=(Claim("aaPU has a lower test error than every PU method people use today (nnPU with "
                  "either loss, nnPUSB, VPU, Dist-PU, Robust-PU) on each data set run",
                  beats_todays_methods),))
