"""Results committed at the paper's settings, in parts: shown with each part's provenance,
judged on the union of the parts by the verdict rule (in the page's section and the
summary's column), refused as stale once the code's settings for that page and profile
change; a part made with other settings or other training code, or not finished, is refused."""
import json
import pathlib

import numpy as np
import pandas as pd
import pytest

import shutil
import subprocess

from pusupport.book import committed as cm, suite
from pusupport.book.paper import PAPER
from pusupport.book.reference import provenance
from pusupport.book.registry import book_claims
from pusupport.book.verdicts import RULE, RULE_CHANGES
from pusupport.core import identity


def test_every_committed_result_matches_the_codes_settings():
    """Fails in CI when a change to a page's settings leaves its committed results stale."""
    assert cm.stale() == [], ("recompute these with `make results PAGES=<page> PROFILE=<profile>` "
                              "and commit them")


def test_every_committed_union_is_the_union_of_its_parts():
    for summary in cm.REFERENCE.glob("*/*/summary.json"):
        folder = summary.parent
        parts = cm.parts_of(folder)
        union = pd.concat([pd.read_csv(folder / "parts" / p / "history.csv") for p in parts],
                          ignore_index=True)
        pd.testing.assert_frame_equal(pd.read_csv(folder / "history.csv"), union)
        assert json.loads(summary.read_text())["seeds"] == sorted(s for p in parts.values() for s in p["seeds"])


def _history(seeds, gain=0.02, name="synthetic", last=None):
    page = cm.page_at(name, "paper")
    rng = np.random.default_rng(seeds[0])
    nnpu = 0.065 + 0.002 * rng.standard_normal(len(seeds))
    epoch = last or page.settings.train.epochs
    return pd.DataFrame([{"method": m, "seed": s, "epoch": epoch,
                          "test_error": e - (gain if m == "aapu" else 0), "test_auc": 0.98,
                          "n_selected": 0, "purity": float("nan")}
                         for s, e in zip(seeds, nnpu) for m in ("nnpu", "aapu")])


SOURCE = {"name": "synthetic", "checksum": "drawn by pusupport.data.synthetic"}


#: A reference suite's digests as a part records them (:mod:`pusupport.book.suite`).
SUITE = {name: {"risk": "0" * 16, "test_error": "1" * 16} for name in suite.RUNS}


def _made(hours=1.0, code=None, source=SOURCE, commit=None, digests=SUITE):
    made = provenance("make results PAGES=synthetic PROFILE=paper", 3600.0 * hours, "cpu: autocast bf16",
                      layout="seeds stacked", training_code=code or identity.code_version(),
                      data_source=source, suite=digests)
    return {**made, "commit": commit or made["commit"]}


def _commit(tmp_path, seeds=range(10), name="synthetic", **kw):
    return cm.add_part(_history(list(seeds), name=name), name, "paper", _made(**kw), root=tmp_path)


def test_committed_results_are_shown_with_their_provenance_until_a_setting_changes(tmp_path, monkeypatch):
    assert cm.committed("synthetic", "paper", tmp_path).status == "missing"
    assert "not run at the paper's settings" in cm.committed("synthetic", "paper", tmp_path).line().lower()
    _commit(tmp_path)
    found = cm.committed("synthetic", "paper", tmp_path)
    assert found.current and cm.stale(tmp_path) == []
    line = found.line()
    assert "10 of 10 seeds" in line and "make results PAGES=synthetic" in line and "1.00 h" in line
    assert "no experiment on this data set" not in line and "at its end" not in line
    assert "adds them" not in line                       # every seed is there
    assert "**Verdict:** reproduced" in found.verdict()
    # one setting of the page's paper profile changes: stale, and the check fails
    monkeypatch.setitem(PAPER["synthetic"], "train", {**PAPER["synthetic"]["train"], "epochs": 999})
    found = cm.committed("synthetic", "paper", tmp_path)
    assert found.status == "stale" and not found.current
    assert "Stale" in found.line() and "make results PAGES=synthetic PROFILE=paper" in found.line()
    assert cm.stale(tmp_path) == ["paper/synthetic"]
    monkeypatch.undo()
    assert cm.committed("synthetic", "paper", tmp_path).current and cm.stale(tmp_path) == []


def test_a_data_set_the_paper_lacks_says_whose_settings_its_paper_profile_holds(tmp_path):
    _commit(tmp_path, name="real_fashion_mnist")
    line = cm.committed("real_fashion_mnist", "paper", tmp_path).line()
    assert line.endswith("The paper has no experiment on this data set: these settings are "
                         "this book's, at the paper's scale.")


def test_the_summary_column_judges_committed_results_and_says_where_there_are_none(tmp_path):
    _commit(tmp_path)
    _commit(tmp_path, seeds=[0], name="real_cifar10")
    claims = book_claims()
    table = cm.with_paper_settings(pd.DataFrame({"claim": [c.claim for c, _ in claims]}), root=tmp_path)
    column = dict(zip([page for _, page in claims], table[cm.AT_PAPER]))
    assert column["synthetic"].startswith("reproduced")
    assert column["real_20news"] == cm.NOT_RUN
    assert column["real_cifar10"].startswith("descriptive only") and column["real_cifar10"].endswith(
        "(1 of 10 seeds)")


def test_a_record_keeps_the_rule_that_judged_it_and_is_re_judged_under_a_newer_one(tmp_path):
    """A committed record keeps its verdicts and the rule's version; judged under an older
    rule, the page and the summary judge it by today's and say what the older one said."""
    _commit(tmp_path)
    found = cm.committed("synthetic", "paper", tmp_path)
    claim = next(c.claim for c, page in book_claims() if page == "synthetic")
    judged = found.summary["judged"]
    assert judged["rule"] == RULE and judged["verdicts"][claim].startswith("reproduced")
    assert found.rejudged(claim) == "" and "Re-judged" not in found.verdict()
    older = {**found.summary, "judged": {"rule": RULE - 1, "commit": "0" * 40,
                                         "verdicts": {claim: "borderline (p = 0.041): no verdict"}}}
    (found.folder / "summary.json").write_text(json.dumps(older))
    found = cm.committed("synthetic", "paper", tmp_path)
    said = (f"Re-judged under rule {RULE} of the verdicts ({RULE_CHANGES[-1][1]}); under rule "
            f"{RULE - 1}, when it was judged: borderline (p = 0.041)")
    assert said in found.rejudged(claim) and said in found.verdict()
    column = dict(zip([page for _, page in book_claims()], cm.verdict_column("paper", tmp_path)))
    assert column["synthetic"].startswith("reproduced") and said in column["synthetic"]
    del older["judged"]                                  # committed before records kept the rule
    (found.folder / "summary.json").write_text(json.dumps(older))
    assert "committed before records kept the rule" in cm.committed("synthetic", "paper", tmp_path).rejudged(claim)


def _edited(monkeypatch, name: str) -> str:
    """The training-code version with the module ``name`` edited (as a later commit would)."""
    real, target = pathlib.Path.read_bytes, identity.PACKAGE / name
    with monkeypatch.context() as m:
        m.setattr(pathlib.Path, "read_bytes", lambda self: real(self) + (b"\nEDITED = 1\n" if self == target else b""))
        return identity.code_version()


def test_parts_from_commits_that_changed_only_a_figure_combine_and_are_judged_together(tmp_path, monkeypatch):
    _commit(tmp_path, seeds=[0, 1, 2])
    found = cm.committed("real_cifar10", "paper", tmp_path)
    assert found.status == "missing"
    first = cm.committed("synthetic", "paper", tmp_path)
    assert "3 of 10 seeds" in first.line() and "SEEDS=…" in first.line()
    assert "descriptive only" in first.verdict()
    _commit(tmp_path, seeds=range(3, 10), code=_edited(monkeypatch, "book/plots.py"), commit="f1gure")
    union = cm.committed("synthetic", "paper", tmp_path)
    assert list(union.parts) == ["seeds-0_1_2", "seeds-3_4_5_6_7_8_9"]
    assert union.summary["seeds"] == list(range(10)) and "10 of 10 seeds" in union.line()
    assert "commit f1gure" in union.line() and union.parts["seeds-0_1_2"]["commit"] != "f1gure"
    # the union is judged as one part of the same runs would be
    whole = tmp_path / "whole"
    cm.add_part(pd.read_csv(union.folder / "history.csv"), "synthetic", "paper", _made(), root=whole)
    assert union.verdict() == cm.committed("synthetic", "paper", whole).verdict()
    assert "**Verdict:** reproduced" in union.verdict()


def test_a_part_from_other_training_code_joins_only_where_the_suite_agrees(tmp_path, monkeypatch):
    """Other training code whose suite runs agree joins; one whose suite differs in a run the
    page uses is refused, naming that run and what to compare; a run the page does not use
    (VPU on the synthetic page at `paper`) is not asked."""
    _commit(tmp_path, seeds=[0], commit="0ld")          # no such commit here: its record is read
    edited = _edited(monkeypatch, "core/risks.py")
    other = {**SUITE, "nnpu and aapu, seeds stacked": {**SUITE["nnpu and aapu forked"], "risk": "2" * 16}}
    with pytest.raises(ValueError, match=r"other training code .*numbers differ: the reference suite's run "
                                         r"'nnpu and aapu, seeds stacked' — its risk differs\. `git diff .* "
                                         r"-- pusupport/core`"):
        _commit(tmp_path, seeds=[1], code=edited, digests=other)
    assert list(cm.committed("synthetic", "paper", tmp_path).parts) == ["seeds-0"]
    _commit(tmp_path, seeds=[1], code=edited, digests={**SUITE, "vpu alone": "error: not here"})
    assert list(cm.committed("synthetic", "paper", tmp_path).parts) == ["seeds-0", "seeds-1"]


def test_a_part_with_other_device_choices_is_refused(tmp_path):
    _commit(tmp_path, seeds=[0])
    made = {**_made(), "precision": "cpu: autocast off (float32)"}
    with pytest.raises(ValueError, match=r"other device choices \(cpu: autocast off \(float32\)\)"):
        cm.add_part(_history([1]), "synthetic", "paper", made, root=tmp_path)


def _repository(tmp_path):
    """A git repository holding this package, committed; ``edit(path, (old, new), …)`` commits
    a change and returns its commit."""
    repo = tmp_path / "repo"
    shutil.copytree(identity.PACKAGE, repo / "pusupport", ignore=shutil.ignore_patterns("__pycache__"))
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]

    def commit(message):
        subprocess.run([*git, "add", "."], check=True, capture_output=True)
        subprocess.run([*git, "commit", "-q", "-m", message], check=True, capture_output=True)
        return subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True,
                              text=True).stdout.strip()

    def edit(path, *changes):
        text = (repo / "pusupport" / path).read_text()
        for old, new in changes:
            assert text.count(old) == 1, f"{old!r} is not once in {path}: update this test"
            text = text.replace(old, new)
        (repo / "pusupport" / path).write_text(text)
        return commit(f"edit {path}")
    subprocess.run([*git, "init", "-q"], check=True, capture_output=True)
    return repo, commit("the package"), edit


def test_a_part_from_a_commit_that_only_refactors_joins_one_that_changes_a_risk_is_refused(tmp_path, monkeypatch):
    """Fixture commits: a refactor of the loop (an in-place sum: other training code, the
    same numbers) joins a part from the commit before it, the suite run here at each commit
    (not the older part's recorded digests); a commit that changes the positive risk is
    refused, naming the first run that differs."""
    repo, first, edit = _repository(tmp_path)
    refactor = edit("core/training.py", ("sums += torch.cat(", "sums.add_(torch.cat("),
                    ("-1).reshape(-1, 4) for r in risks])", "-1).reshape(-1, 4) for r in risks]))"))
    risk = edit("core/risks.py", ("return _non_negative(positive, negative, beta, gamma, correction)",
                                  "return _non_negative(positive * 1.5, negative, beta, gamma, correction)"))
    monkeypatch.setattr(identity, "PACKAGE", repo / "pusupport")
    monkeypatch.setattr(suite, "at", lambda commit: suite.run(commit, repo))
    versions = [identity.code_version(c) for c in (first, refactor, risk)]
    assert len(set(versions)) == 3
    parts = {c: _made(code=v, commit=c, digests=None) for c, v in zip((first, refactor, risk), versions)}
    parts[first]["suite"] = SUITE        # a record from another machine: the run here wins
    cm.add_part(_history([0]), "synthetic", "paper", parts[first], root=tmp_path)
    cm.add_part(_history([1]), "synthetic", "paper", parts[refactor], root=tmp_path)
    with pytest.raises(ValueError, match=r"the reference suite's run 'nnpu and aapu forked' — its risk differs"):
        cm.add_part(_history([2]), "synthetic", "paper", parts[risk], root=tmp_path)
    assert list(cm.committed("synthetic", "paper", tmp_path).parts) == ["seeds-0", "seeds-1"]


def test_a_part_with_other_settings_is_refused_naming_the_setting(tmp_path, monkeypatch):
    _commit(tmp_path, seeds=[0])
    monkeypatch.setitem(PAPER["synthetic"], "train", {**PAPER["synthetic"]["train"], "lr": 3e-4})
    with pytest.raises(ValueError, match=r"settings differ from part seeds-0's in \['train.lr'\]"):
        _commit(tmp_path, seeds=[1])


def test_a_part_on_another_copy_of_the_data_is_refused(tmp_path):
    _commit(tmp_path, seeds=[0])
    with pytest.raises(ValueError, match=r"data .*'checksum': 'other'.* are not part seeds-0's"):
        _commit(tmp_path, seeds=[1], source={**SOURCE, "checksum": "other"})


def test_an_unfinished_part_or_a_seed_committed_twice_is_not_committed(tmp_path):
    short = _history([0, 1], last=10)
    with pytest.raises(ValueError, match=r"not committed — runs unfinished \['aapu seed 0 \(epoch 10 of"):
        cm.add_part(short, "synthetic", "paper", _made(), root=tmp_path)
    with pytest.raises(ValueError, match=r"missing \['aapu seed 0', 'aapu seed 1'\]"):
        cm.add_part(_history([0, 1]).query("method == 'nnpu'"), "synthetic", "paper", _made(), root=tmp_path)
    assert not (tmp_path / "paper").exists()
    _commit(tmp_path, seeds=[0, 1])
    with pytest.raises(ValueError, match=r"seeds \[1\] are committed already \(part seeds-0_1\)"):
        _commit(tmp_path, seeds=[1, 2])
    with pytest.raises(ValueError, match="no page 'nope'"):
        cm.page_at("nope", "paper")


def test_a_variant_is_committed_beside_its_page_and_judged_with_it(tmp_path):
    """`make results PAGES=synthetic-clamp`: the page with both methods' max(0, ·) read as a
    plain clamp, a record of its own beside Kiryo et al.'s; the summary's answer judges the
    clamp's family on the two records' shared seeds."""
    from pusupport.book.answer import THE_CLAMP, answer_table
    _commit(tmp_path)
    _commit(tmp_path, name="synthetic-clamp")
    found = cm.committed("synthetic-clamp", "paper", tmp_path)
    assert found.current and found.folder == tmp_path / "paper" / "synthetic-clamp"
    assert cm.page_at("synthetic-clamp", "paper").settings.train.correction == "clamp"
    assert found.summary["fingerprint"] != cm.committed("synthetic", "paper", tmp_path).summary["fingerprint"]
    assert found.summary["judged"]["verdicts"] == {} and found.verdict() == ""
    table = answer_table(tmp_path / "no build", root=tmp_path)
    clamp = table[table.source == "committed at the paper's settings, each rule"]
    # these histories hold no nnPUSB view and no record with S never re-picked: the rest
    assert list(clamp.label) == [c.label for c in THE_CLAMP if c.column == "test_error" and
                                 "allow_repick" not in c.run] and (clamp.seeds == 10).all()
    assert cm.records(["synthetic"]) == ["synthetic", "synthetic-clamp", "synthetic-clamp-norepick"]
    grown = cm.page_at("synthetic-clamp-norepick", "paper").settings.train      # S never re-picked
    assert (grown.correction, grown.allow_repick) == ("clamp", False)
    with pytest.raises(ValueError, match="no variant 'clip'"):
        cm.page_at("synthetic-clip", "paper")
