"""Results committed at a profile — the paper's settings — in parts, with their provenance.

``make results PAGES=… PROFILE=paper [SEEDS=2,3]`` (``book/results.py``) trains a page's
runs on some seeds and adds them as one part to ``results/reference/<profile>/<page>/``:
``parts/seeds-<s…>/`` holds the part's ``history.csv`` and ``provenance.json`` (commit,
settings, their fingerprint, the data's checksum, training-code version, the reference suite's digests, device, torch,
precision, layout, date, wall time, command). Parts combine when their settings, data and
device choices agree and their training code does — or, from other training code, when the
reference suite's runs the page uses give the same numbers at both commits
(:mod:`~pusupport.book.suite`; :func:`joinable` refuses another, naming what differs,
before any training); the folder's ``history.csv`` and ``summary.json`` are their union,
which the page's "At the paper's settings" section and the summary's column judge. Results
whose settings no longer match the code's for that page and profile are stale: shown as
such, never as current.
"""
from __future__ import annotations

import json
import os
import subprocess
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path

import pandas as pd

from ..core.atomic import atomic_write_text
from ..core.identity import code_version
from ..core.methods import get_method
from . import registry, suite
from .claims import AT_PAPER, reproduction_table, verdict_text
from .pages import Page, resolve_page
from .plan import as_trained
from .paper import NOT_IN_PAPER
from .records import read_history, save_results
from .reference import REFERENCE, code_commit, fingerprint
from .same_numbers import older
from .store import FRESH
from .verdicts import RULE, RULE_CHANGES

#: What a page's section shows where nothing is committed.
NOT_RUN = "not run at the paper's settings"
#: Records of a page with one of its choices changed, committed beside its own as
#: ``<page>-<variant>`` (``make results PAGES=real_fashion_mnist-clamp``): "clamp", both
#: methods' max(0, ·) read as a plain clamp (the readings page's reading, at the paper's scale).
VARIANTS = {"clamp": {"correction": "clamp"},
            "clamp-norepick": {"correction": "clamp", "allow_repick": False}}


def records(pages) -> list[str]:
    """The records ``pages`` can be committed as: each page, and each with every variant."""
    return [f"{p}{suffix}" for p in pages for suffix in ("", *(f"-{v}" for v in VARIANTS))]


def page_at(page: str, profile: str, **given) -> Page:
    """The book's page ``page`` (a results folder, or a record ``<page>-<variant>`` of
    :data:`VARIANTS`) resolved at ``profile`` with its defaults (``given``: other values of
    its common parameters, e.g. ``seeds``)."""
    page, _, variant = page.partition("-")
    if variant and variant not in VARIANTS:
        raise ValueError(f"no variant {variant!r} of a page: use one of {sorted(VARIANTS)}")
    given = {**VARIANTS.get(variant, {}), **given}
    entry = next((e for e in registry.book_pages() if e["page"] == page), None)
    if entry is None:
        raise ValueError(f"no page {page!r} in the book: use one of "
                         f"{[e['page'] for e in registry.book_pages()]}")
    experiment = registry.get(entry["notebook"])
    given = {"profile": profile, "device": "auto", "seeds": None, "data_dir": None,
             "output_dir": "results", "dry_run": 0, "checkpoints": None, "runner": None,
             **{k: None for k in experiment.parameters}, **entry["parameters"], **given}
    return resolve_page(entry["notebook"], **given)


def command(page: str, profile: str) -> str:
    return f"make results PAGES={page} PROFILE={profile}"


def seeds_text(seeds) -> str:
    return ", ".join(map(str, sorted(seeds)))


@dataclass(frozen=True)
class Committed:
    """The results of ``page`` committed at ``profile`` under ``root``; ``status`` is
    "current", "stale" (made with other settings than the code's) or "missing"."""

    page: str
    profile: str
    root: Path
    status: str

    @property
    def folder(self) -> Path:
        return self.root / self.profile / self.page

    @property
    def current(self) -> bool:
        return self.status == "current"

    @cached_property
    def summary(self) -> dict:
        return json.loads((self.folder / "summary.json").read_text())

    @cached_property
    def parts(self) -> dict[str, dict]:
        """{part: its provenance}, in the order they were added."""
        return parts_of(self.folder)

    @cached_property
    def history(self) -> pd.DataFrame:
        return read_history(self.folder / "history.csv")

    @cached_property
    def planned(self) -> int:
        """The number of seeds the page plans at this profile."""
        return len(page_at(self.page, self.profile).seeds)

    def line(self) -> str:
        """Where these results come from — each part's provenance — or why none are shown."""
        if self.status == "missing":
            return f"{NOT_RUN.capitalize()} (`{command(self.page, self.profile)}` runs them)."
        if self.status == "stale":
            return (f"Stale: the results committed under `results/reference/{self.profile}/"
                    f"{self.page}` were made with other settings than this code's; not shown. "
                    f"Recompute with `{command(self.page, self.profile)}`.")
        seeds = self.summary["seeds"]
        few = len(seeds) < self.planned
        ours = (" The paper has no experiment on this data set: these settings are this book's, "
                "at the paper's scale." if self.profile == "paper"
                and page_at(self.page, self.profile).dataset in NOT_IN_PAPER else "")
        parts = " ".join(f"Seed{'s' * (len(p['seeds']) > 1)} {seeds_text(p['seeds'])}: {_made(p)}"
                         for p in self.parts.values())
        more = (f" The other seeds: `{command(self.page, self.profile)} SEEDS=…` adds them, a "
                "few at a time." if few else "")
        return (f"Committed results, profile `{self.profile}`, **{len(seeds)} of {self.planned} "
                f"seeds** (settings {next(iter(self.parts.values()))['fingerprint']}). {parts}"
                f"{more}{ours}")

    def figure(self):
        """The committed runs' test error per epoch: every seed's curve where the page has
        under half its seeds, else mean ± one SD over seeds."""
        import matplotlib.pyplot as plt
        from .plots import learning_curves
        fig, ax = plt.subplots(figsize=(7, 4))
        learning_curves(self.history, ax=ax, each_seed=2 * len(self.summary["seeds"]) < self.planned,
                        title=f"{self.page} at the '{self.profile}' profile")
        return fig

    def verdict(self) -> str:
        """Markdown: this page's claims judged on the committed results (by today's rule,
        saying so where the record was judged under another when committed)."""
        claims = [(c, self.page) for c, folder in registry.book_claims() if folder == self.page]
        said = verdict_text(self.root / self.profile, claims, registry.family_sizes())
        again = {self.rejudged(c.claim) for c, _ in claims} - {""}
        return said + "".join(f"\n\n{line}" for line in sorted(again))

    def rejudged(self, claim: str) -> str:
        """Where the record was judged under another rule than today's (:data:`RULE`) when
        committed: that it is judged again, and what the older rule said; else ""."""
        judged = self.summary.get("judged")
        if judged is None:
            return (f"Judged under rule {RULE} of the verdicts; committed before records kept the "
                    "rule that judged them.")
        if judged["rule"] == RULE:
            return ""
        said = judged["verdicts"]
        was = said.get(claim) or (next(iter(said.values())) if len(said) == 1 else "no verdict")
        return (f"Re-judged under rule {RULE} of the verdicts ({RULE_CHANGES[-1][1]}); under rule "
                f"{judged['rule']}, when it was judged: {was.split(':')[0]}.")


def _made(p: dict) -> str:
    """One part's provenance in a sentence."""
    where = p["gpu"] or f"{p['cpu']}, {p['cores']} cores"
    ended = f" (at its end {p['commit_at_end'][:12]})" if "commit_at_end" in p else ""
    return (f"commit {p['commit'][:12]}{ended}, training code {p['training_code']}, {where}, "
            f"torch {p['torch']}, {p['precision']}, {p['layout']}, {p['date']}, "
            f"{p['wall_seconds'] / 3600:.2f} h: `{p['command']}`.")


def parts_of(folder: Path) -> dict[str, dict]:
    """{part: provenance} of the parts committed under ``folder``, oldest first."""
    found = {p.parent.name: json.loads(p.read_text()) for p in Path(folder).glob("parts/*/provenance.json")}
    return dict(sorted(found.items(), key=lambda kv: (kv[1]["date"], kv[0])))


def committed(page: str, profile: str = "paper", root: Path = REFERENCE) -> Committed:
    """The committed results of ``page`` at ``profile``, checked against the code's settings."""
    found = parts_of(Path(root) / profile / page)
    if not found:
        return Committed(page, profile, Path(root), "missing")
    code = page_at(page, profile).fingerprint(seeds=False)
    current = all(p["fingerprint"] == code for p in found.values())
    return Committed(page, profile, Path(root), "current" if current else "stale")


def stale(root: Path = REFERENCE) -> list[str]:
    """"<profile>/<page>" of every committed result made with other settings than the code's."""
    return [f"{s.parent.parent.name}/{s.parent.name}" for s in sorted(Path(root).glob("*/*/parts"))
            if committed(s.parent.name, s.parent.parent.name, root).status == "stale"]


def with_paper_settings(table: pd.DataFrame, root: Path = REFERENCE) -> pd.DataFrame:
    """``table`` (one row per book claim, :func:`~pusupport.book.registry.reproduction_table`)
    with the column :data:`~pusupport.book.claims.AT_PAPER`: each claim's verdict on the
    results committed at ``paper``, or why there is none."""
    return table.assign(**{AT_PAPER: verdict_column("paper", root)})


def verdict_column(profile: str = "paper", root: Path = REFERENCE, pages=None) -> list[str]:
    """For each of the book's claims (of ``pages``, default all), its verdict on the results
    committed at ``profile`` ("n of N seeds" where fewer than the page plans), or why there is none."""
    out = []
    for claim, page in registry.book_claims():
        if pages is not None and page not in pages:
            continue
        found = committed(page, profile, root)
        if not found.current:
            out.append(NOT_RUN if found.status == "missing" else f"stale: recompute with "
                       f"`{command(page, profile)}`")
            continue
        row = reproduction_table(found.root / profile, [(claim, page)], registry.family_sizes())
        n = len(found.summary["seeds"])
        again = found.rejudged(claim.claim)
        out.append(row.verdict.iloc[0] + (f" ({n} of {found.planned} seeds)" if n < found.planned else "")
                   + (f" — {again}" if again else ""))
    return out


def judgements(folder: Path) -> dict:
    """{claim: verdict} of the claims judged on the results committed in ``folder``
    (``<root>/<profile>/<page>``), under today's rule."""
    claims = [(c, folder.name) for c, page in registry.book_claims() if page == folder.name]
    if not claims:                                  # a variant's record: judged beside its page's
        return {}
    table = reproduction_table(folder.parent, claims, registry.family_sizes())
    return dict(zip(table.claim, table.verdict))


def _differs(old: dict, new: dict) -> list[str]:
    return sorted(k for k in {**old, **new} if old.get(k) != new.get(k))


def joinable(page: str, profile: str, seeds, made: dict, root: Path = REFERENCE) -> dict:
    """``made`` (a part's provenance: ``commit``, ``training_code``, ``data_source``, ``suite``,
    …) for ``page``'s plan at ``profile`` on ``seeds``, completed with the code's settings and
    their fingerprint. Refused, with what differs, where its settings, data or device choices
    are not the committed parts', its numbers are not shown to be theirs (other training code
    whose reference suite differs: :func:`_same_numbers`) or a seed is committed already —
    checked before any training (``book/results.py``) and again by :func:`add_part`."""
    seeds = sorted(int(s) for s in seeds)
    code = page_at(page, profile, seeds=seeds)
    settings = json.loads(json.dumps(code.identity(seeds=False)["settings"], default=str))
    made = {**made, "seeds": seeds, "settings": settings,
            "fingerprint": code.fingerprint(seeds=False)}
    folder = Path(root) / profile / page
    for name, other in parts_of(folder).items():
        settings = _differs(other["settings"], made["settings"])
        if settings or other["fingerprint"] != made["fingerprint"]:
            raise ValueError(f"{page}: this part's settings differ from part {name}'s in "
                             f"{settings or ['page or data set']}: parts combine only at the same "
                             f"settings; recompute the whole page with `{command(page, profile)}` "
                             f"after removing {folder / 'parts'}")
        if other["data_source"] != made["data_source"]:
            raise ValueError(f"{page}: this part's data ({made['data_source']}) are not part {name}'s "
                             f"({other['data_source']}): another copy of the data set (e.g. the "
                             "official archive against a re-encoded one); train on the copy the "
                             "other parts used")
        if other["training_code"] != made["training_code"]:
            _same_numbers(page, profile, name, other, made, _uses(code))
        if "precision" in made and other["precision"] != made["precision"]:
            raise ValueError(f"{page}: this part ran with other device choices ({made['precision']}) "
                             f"than part {name} ({other['precision']}): parts combine only at the "
                             "same precision, dropout streams and memory format")
        if set(other["seeds"]) & set(seeds):
            raise ValueError(f"{page}: seeds {sorted(set(other['seeds']) & set(seeds))} are committed "
                             f"already (part {name}); remove {folder / 'parts' / name} to replace them")
    return made


def _uses(code: Page) -> set:
    """What a page's runs use, in the reference suite's words (:data:`~pusupport.book.suite.RUNS`):
    their methods (and those they train as before their first selection), models, the clamp
    and a held-out PU split."""
    cfgs = [code.config(spec) for spec in as_trained(code.plan())[0]]
    methods = {c.method for c in cfgs}
    return ({*methods, *(get_method(m).before_selection for m in methods)} - {None}
            | {c.model.name for c in cfgs} | {"clamp" for c in cfgs if c.correction == "clamp"}
            | ({"validation"} if code.settings.data.validation else set()))


def _suite_of(part: dict, recorded_first: bool) -> dict:
    """A part's reference-suite digests: run here at its commit — on one machine, so that two
    parts' digests differ only where their code does — else as its provenance recorded them
    (``recorded_first``: a part made in this process, whose record was run here)."""
    if recorded_first and part.get("suite"):
        return part["suite"]
    try:
        return suite.at(part["commit"])
    except (RuntimeError, subprocess.CalledProcessError):
        if part.get("suite"):
            return part["suite"]
        raise


def _same_numbers(page: str, profile: str, name: str, other: dict, made: dict, uses: set) -> None:
    """Refuse ``made`` (a part from other training code than part ``name``'s, ``other``) unless
    the reference suite's runs that ``uses`` reaches give the same numbers at both commits
    (:func:`_suite_of`), naming the first that does not."""
    try:
        old, new = _suite_of(other, False), _suite_of(made, True)
    except (RuntimeError, subprocess.CalledProcessError) as err:
        raise ValueError(f"{page}: part {name} is from other training code ({other['training_code']}, "
                         f"commit {other['commit'][:12]}) and the reference suite could not be run "
                         f"at its commit ({err}): fetch that commit, or recompute the whole page "
                         f"with `{command(page, profile)}`") from None
    found = suite.first_difference(old, new, uses)
    if found:
        run, why = found
        raise ValueError(f"{page}: this part was trained by other training code ({made['training_code']}, "
                         f"commit {made['commit'][:12]}) than part {name} ({other['training_code']}, "
                         f"commit {other['commit'][:12]}), and their numbers differ: the reference "
                         f"suite's run {run!r} — {why}. `git diff {other['commit'][:12]} "
                         f"{made['commit'][:12]} -- pusupport/core` shows what changed; "
                         "parts combine only where every suite run the page uses agrees")


def add_part(history: pd.DataFrame, page: str, profile: str, made: dict,
             root: Path = REFERENCE) -> Path:
    """Add ``history`` — the page's plan at ``profile`` trained on some seeds, every run to
    its last epoch — as one part of its committed results, with ``made`` (its provenance:
    :func:`~pusupport.book.reference.provenance`, plus ``training_code`` and ``data_source``),
    checked by :func:`joinable`, and rewrite their union. Refused where a run did not finish."""
    seeds = sorted(int(s) for s in history.seed.unique())
    code = page_at(page, profile, seeds=seeds)
    plan = {spec.label for spec in code.plan()}
    last = history.groupby(["method", "seed"]).epoch.max()
    epochs = code.settings.train.epochs
    unfinished = [f"{m} seed {s} (epoch {e} of {epochs})" for (m, s), e in last.items() if e < epochs]
    missing = [f"{m} seed {s}" for m in sorted(plan) for s in seeds if (m, s) not in last.index]
    if unfinished or missing:
        raise ValueError(f"{page}: not committed — runs unfinished {unfinished or 'none'}, missing "
                         f"{missing or 'none'}: run `{command(page, profile)} SEEDS="
                         f"{','.join(map(str, seeds))}` again (it resumes from its checkpoints)")
    made = joinable(page, profile, seeds, made, root)
    folder = Path(root) / profile / page
    part = folder / "parts" / f"seeds-{'_'.join(map(str, seeds))}"
    part.mkdir(parents=True, exist_ok=True)
    atomic_write_text(part / "history.csv", history.to_csv(index=False))
    atomic_write_text(part / "provenance.json", json.dumps(made, indent=2, default=str) + "\n")
    _write_union(folder, code)
    return part


def _write_union(folder: Path, code: Page) -> None:
    """The folder's ``history.csv`` and ``summary.json``: every part's runs, as the page
    itself would save them on their seeds, and their verdicts under today's rule with its
    version (``judged``: :meth:`Committed.rejudged` reads it)."""
    found = parts_of(folder)
    history = pd.concat([read_history(folder / "parts" / name / "history.csv") for name in found],
                        ignore_index=True)
    seeds = sorted(int(s) for p in found.values() for s in p["seeds"])
    union = page_at(folder.name, code.profile, seeds=seeds)
    meta = dict(page=union.page, dataset=union.dataset, profile=union.profile, seeds=seeds,
                fingerprint=union.fingerprint(seeds=False), n_test=union.n_test, parts=list(found),
                wall_seconds=round(sum(p["wall_seconds"] for p in found.values()), 1))
    summary = save_results(history, folder, **meta)
    summary["judged"] = {"rule": RULE, "commit": code_commit(), "verdicts": judgements(folder)}
    atomic_write_text(folder / "summary.json", json.dumps(summary, indent=2, default=str))


def runs_index(profile: str, pages=None) -> dict:
    """What the book's committed runs at ``profile`` were trained for: per page of ``pages``
    (default: every page of the book), its fingerprint
    (:meth:`~pusupport.book.page.Page.fingerprint`), its plan (its runs as specified, less
    their labels: a choice outside the page's settings, such as the number of P-vs-U
    halvings behind π, moves it) and the training code of each method it trains (a view's,
    nnPUSB's, is its run's: :func:`~pusupport.core.identity.code_version`) at the time."""
    names = [e["page"] for e in registry.book_pages() if pages is None or e["page"] in pages]
    return {"pages": {name: _trained_for(page_at(name, profile)) for name in names}}


def _trained_for(page) -> dict:
    plan = page.plan()
    return {"fingerprint": page.fingerprint(),
            "plan": fingerprint([{k: v for k, v in asdict(r).items() if k != "label"} for r in plan]),
            "training_code": {m: code_version(methods=[m]) for m in sorted({r.method for r in plan})
                              if get_method(m).view_of is None}}    # a view's code is its run's


def pages_committed(profile: str, root: Path = REFERENCE) -> set:
    """The pages whose runs the committed runs at ``profile`` hold as today's code and
    settings would train them — each method's code today's or shown to train the same
    numbers (:func:`~pusupport.book.same_numbers.older`) — (a build reads them instead of
    training: what a projection leaves out); empty where there are none or
    ``$PUSUPPORT_FRESH`` is set."""
    folder = root / profile / "runs"
    if os.environ.get(FRESH) or not (folder / "index.json").exists():
        return set()
    index = json.loads((folder / "index.json").read_text())
    now = runs_index(profile, index["pages"])["pages"]

    def same(then: dict, today: dict | None) -> bool:
        if today is None or {**then, "training_code": 0, "runs": 0} != {**today, "training_code": 0, "runs": 0}:
            return False
        codes = today["training_code"]
        return isinstance(then["training_code"], dict) and then["training_code"].keys() == codes.keys() and all(
            code in (codes[m], *older(m, folder)) for m, code in then["training_code"].items())
    return {page for page, then in index["pages"].items() if same(then, now.get(page))}
