"""Results committed at the paper's settings: shown with their provenance, judged by the
verdict rule in the summary's column, and refused as stale once the code's settings for
that page and profile change."""
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from pusupport.book import committed as cm
from pusupport.book.paper import PAPER
from pusupport.book.registry import book_claims


def test_every_committed_result_matches_the_codes_settings():
    """Fails in CI when a change to a page's settings leaves its committed results stale."""
    assert cm.stale() == [], ("recompute these with `make results PAGES=<page> PROFILE=<profile>` "
                              "and commit them")


def _commit_synthetic(tmp_path, gain=0.02, name="synthetic"):
    page = cm.page_at(name, "paper")
    rng = np.random.default_rng(0)
    nnpu = 0.065 + 0.002 * rng.standard_normal(len(page.seeds))
    rows = [{"method": m, "seed": s, "epoch": 1000, "test_error": e - (gain if m == "aapu" else 0),
             "test_auc": 0.98, "n_selected": 0, "purity": float("nan")}
            for s, e in zip(page.seeds, nnpu) for m in ("nnpu", "aapu")]
    replace(page, output_dir=tmp_path / "run").save(pd.DataFrame(rows))
    return cm.commit(tmp_path / "run" / name, name, "paper", f"make results PAGES={name}",
                     3600.0, "cpu: autocast bf16", root=tmp_path / "reference")


def test_committed_results_are_shown_with_their_provenance_until_a_setting_changes(tmp_path, monkeypatch):
    root = tmp_path / "reference"
    assert cm.committed("synthetic", "paper", root).status == "missing"
    assert "not run at the paper's settings" in cm.committed("synthetic", "paper", root).line().lower()
    _commit_synthetic(tmp_path)
    found = cm.committed("synthetic", "paper", root)
    assert found.current and cm.stale(root) == []
    line = found.line()
    assert "10 seeds" in line and "make results PAGES=synthetic" in line and "1.00 h" in line
    assert "no experiment on this data set" not in line and "at its end" not in line
    assert found.provenance["fingerprint"] == found.summary["fingerprint"]
    assert "**Verdict:** reproduced" in found.verdict()
    # one setting of the page's paper profile changes: stale, and the check fails
    monkeypatch.setitem(PAPER["synthetic"], "train", {**PAPER["synthetic"]["train"], "epochs": 999})
    found = cm.committed("synthetic", "paper", root)
    assert found.status == "stale" and not found.current
    assert "Stale" in found.line() and "make results PAGES=synthetic PROFILE=paper" in found.line()
    assert cm.stale(root) == ["paper/synthetic"]
    monkeypatch.undo()
    assert cm.committed("synthetic", "paper", root).current and cm.stale(root) == []


def test_a_data_set_the_paper_lacks_says_whose_settings_its_paper_profile_holds(tmp_path):
    _commit_synthetic(tmp_path, name="real_fashion_mnist")
    line = cm.committed("real_fashion_mnist", "paper", tmp_path / "reference").line()
    assert line.endswith("The paper has no experiment on this data set: these settings are "
                         "this book's, at the paper's scale.")


def test_the_summary_column_judges_committed_results_and_says_where_there_are_none(tmp_path):
    _commit_synthetic(tmp_path)
    claims = book_claims()
    table = cm.with_paper_settings(pd.DataFrame({"claim": [c.claim for c, _ in claims]}),
                                   root=tmp_path / "reference")
    column = dict(zip([page for _, page in claims], table[cm.AT_PAPER]))
    assert column["synthetic"].startswith("reproduced")
    assert column["real_20news"] == cm.NOT_RUN


def test_only_a_finished_run_at_that_profile_is_committed(tmp_path):
    folder = tmp_path / "run" / "synthetic"
    folder.mkdir(parents=True)
    (folder / "summary.json").write_text('{"status": "not run", "profile": "paper"}')
    with pytest.raises(ValueError, match="make results PAGES=synthetic PROFILE=paper"):
        cm.commit(folder, "synthetic", "paper", "cmd", 1.0, "cpu", root=tmp_path / "reference")
    with pytest.raises(ValueError, match="no page 'nope'"):
        cm.page_at("nope", "paper")
