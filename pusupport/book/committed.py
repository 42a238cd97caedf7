"""Results committed at a profile — the paper's settings — with their provenance.

``make results PAGES=… PROFILE=paper`` (``book/results.py``) runs pages at a profile and
commits each page's ``history.csv`` and ``summary.json`` to
``results/reference/<profile>/<page>/`` beside a ``provenance.json`` (commit, settings
fingerprint, machine, precision, date, wall time, command). A page built at another
profile shows them in its "At the paper's settings" section, and the summary in its
column of verdicts at the paper's settings. Results whose fingerprint no longer matches
the code's settings for that page and profile are stale: shown as such, never as current.
"""
from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pandas as pd

from ..core.atomic import atomic_write_text
from . import registry
from .claims import AT_PAPER, reproduction_table, verdict_text
from .pages import Page, resolve_page
from .paper import NOT_IN_PAPER
from .reference import REFERENCE, provenance

#: What a page's section shows where nothing is committed.
NOT_RUN = "not run at the paper's settings"


def page_at(page: str, profile: str) -> Page:
    """The book's page ``page`` (a results folder) resolved at ``profile`` with its defaults."""
    entry = next((e for e in registry.book_pages() if e["page"] == page), None)
    if entry is None:
        raise ValueError(f"no page {page!r} in the book: use one of "
                         f"{[e['page'] for e in registry.book_pages()]}")
    experiment = registry.get(entry["notebook"])
    given = {"profile": profile, "device": "auto", "seeds": None, "data_dir": None,
             "output_dir": "results", "dry_run": 0, "checkpoints": None, "runner": None,
             **{k: None for k in experiment.parameters}, **entry["parameters"]}
    return resolve_page(entry["notebook"], **given)


def command(page: str, profile: str) -> str:
    return f"make results PAGES={page} PROFILE={profile}"


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
    def provenance(self) -> dict:
        return json.loads((self.folder / "provenance.json").read_text())

    @cached_property
    def history(self) -> pd.DataFrame:
        return pd.read_csv(self.folder / "history.csv")

    def line(self) -> str:
        """One line: where these results come from, or why none are shown."""
        if self.status == "missing":
            return f"{NOT_RUN.capitalize()} (`{command(self.page, self.profile)}` runs them)."
        if self.status == "stale":
            return (f"Stale: the results committed under `results/reference/{self.profile}/"
                    f"{self.page}` were made with other settings than this code's; not shown. "
                    f"Recompute with `{command(self.page, self.profile)}`.")
        p = self.provenance
        where = p["gpu"] or f"{p['cpu']}, {p['cores']} cores"
        ended = f" (at its end {p['commit_at_end'][:12]})" if "commit_at_end" in p else ""
        ours = (" The paper has no experiment on this data set: these settings are this book's, "
                "at the paper's scale." if self.profile == "paper"
                and page_at(self.page, self.profile).dataset in NOT_IN_PAPER else "")
        return (f"Committed results, profile `{self.profile}`, {len(self.summary['seeds'])} seeds: "
                f"commit {p['commit'][:12]}{ended}, settings {p['fingerprint']}, {where}, {p['precision']}, "
                f"{p['date']}, {p['wall_seconds'] / 3600:.2f} h: `{p['command']}`.{ours}")

    def figure(self):
        """The committed runs' test error per epoch (mean ± one SD over seeds)."""
        import matplotlib.pyplot as plt
        from .plots import learning_curves
        fig, ax = plt.subplots(figsize=(7, 4))
        learning_curves(self.history, ax=ax, title=f"{self.page} at the '{self.profile}' profile")
        return fig

    def verdict(self) -> str:
        """Markdown: this page's claims judged on the committed results (no run-to-run
        spread is measured at this profile: the floor is 2 test points)."""
        claims = [(c, self.page) for c, folder in registry.book_claims() if folder == self.page]
        return verdict_text(self.root / self.profile, claims, {}, registry.family_sizes())


def committed(page: str, profile: str = "paper", root: Path = REFERENCE) -> Committed:
    """The committed results of ``page`` at ``profile``, checked against the code's settings."""
    summary = Path(root) / profile / page / "summary.json"
    if not summary.exists():
        return Committed(page, profile, Path(root), "missing")
    ran = json.loads(summary.read_text()).get("fingerprint")
    status = "current" if ran == page_at(page, profile).fingerprint() else "stale"
    return Committed(page, profile, Path(root), status)


def stale(root: Path = REFERENCE) -> list[str]:
    """"<profile>/<page>" of every committed result made with other settings than the code's."""
    return [f"{s.parent.parent.name}/{s.parent.name}" for s in sorted(Path(root).glob("*/*/summary.json"))
            if committed(s.parent.name, s.parent.parent.name, root).status == "stale"]


def with_paper_settings(table: pd.DataFrame, root: Path = REFERENCE) -> pd.DataFrame:
    """``table`` (one row per book claim, :func:`~pusupport.book.registry.reproduction_table`)
    with the column :data:`~pusupport.book.claims.AT_PAPER`: each claim's verdict on the
    results committed at ``paper``, or why there is none."""
    return table.assign(**{AT_PAPER: verdict_column("paper", root)})


def verdict_column(profile: str = "paper", root: Path = REFERENCE) -> list[str]:
    """For each of the book's claims, its verdict on the results committed at ``profile``,
    or why there is none."""
    out = []
    for claim, page in registry.book_claims():
        found = committed(page, profile, root)
        if not found.current:
            out.append(NOT_RUN if found.status == "missing" else f"stale: recompute with "
                       f"`{command(page, profile)}`")
            continue
        row = reproduction_table(found.root / profile, [(claim, page)], {}, registry.family_sizes())
        out.append(row.verdict.iloc[0])
    return out


def commit(results: Path, page: str, profile: str, command_line: str, wall_seconds: float,
           precision: str, root: Path = REFERENCE, started: str | None = None) -> Path:
    """Copy a finished page's ``history.csv`` and ``summary.json`` from ``results`` (its
    folder) to ``root/<profile>/<page>`` with their provenance (``started``: the commit the
    run started from); returns that folder."""
    summary = json.loads((results / "summary.json").read_text())
    if summary.get("status") != "run" or summary.get("profile") != profile:
        raise ValueError(f"{results} holds no finished run of {page!r} at profile {profile!r}: "
                         f"run `{command(page, profile)}`")
    target = Path(root) / profile / page
    target.mkdir(parents=True, exist_ok=True)
    for name in ("history.csv", "summary.json"):
        shutil.copyfile(results / name, target / name)
    record = {**provenance(command_line, wall_seconds, precision, started), "fingerprint": summary["fingerprint"]}
    atomic_write_text(target / "provenance.json", json.dumps(record, indent=2) + "\n")
    return target
