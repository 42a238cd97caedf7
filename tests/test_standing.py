"""Where aaPU stands: the plan per profile, the comparison pages it borrows, and the
verdicts, ranking and sentence computed from a history whose differences are known."""
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from pusupport.book.experiments import standing, standing_views
from pusupport.book.pages import comparison_page, resolve_page
from pusupport.book.store import commit_runs


def page_at(profile, **given):
    params = dict(profile=profile, device="cpu", seeds=None, data_dir=None, output_dir="results",
                  dry_run=0, checkpoints=None, runner=None, compared=None)
    return resolve_page("standing", **{**params, **given})


def test_the_paper_plan_runs_every_method_on_every_data_set_but_mixup_on_sparse_rows():
    page = page_at("paper")
    planned = {(s.dataset, s.method) for s in page.plan()}
    for d in standing.DATASETS:
        for m in ("aapu", *standing.COMPARED):
            assert ((d, m) in planned) == (d != "20news" or m not in ("vpu", "distpu")), (d, m)
    said = standing.not_run_text(page.settings, "paper")
    assert "VPU, Dist-PU on 20news: MixUp mixes input rows" in said and "not at this profile" not in said


def test_the_cpu_plan_is_the_budgeted_table_and_says_what_it_leaves_out():
    page = page_at("cpu")
    planned = {(s.dataset, s.method) for s in page.plan()}
    assert planned == {(d, m) for d, ms in standing.LEFT_OUT["cpu"][0].items() for m in ("aapu", *ms)}
    said = standing.not_run_text(page.settings, "cpu").splitlines()
    cifar = next(line for line in said if "on cifar10" in line)
    assert cifar == ("- nnPU (sigmoid), VPU, Dist-PU, Robust-PU, Negative selection, aaPU with an "
                     "oracle S on cifar10: not at this profile")
    why = [line for line in said if line.startswith("Not at this profile because")]
    assert len(why) == 1 and "the real data sets get nnPUSB, read from nnPU's run" in why[0]   # said once


def test_each_data_set_runs_at_its_comparison_page_settings_and_seeds():
    page = page_at("cpu")
    for d, name in (("synthetic", "synthetic"), ("cifar10", "real_cifar10"), ("20news", "real_20news")):
        there = comparison_page(page, d)
        own = resolve_page(name if d == "synthetic" else "real_data", profile="cpu", device="cpu",
                           seeds=None, data_dir=None, output_dir="results", dry_run=0,
                           checkpoints=None, runner=None, epochs=None, lr=None, n_select=None,
                           select_from=None, correction=None, allow_repick=None,
                           **({} if d == "synthetic" else
                                                {"dataset": d, "n_unlabeled": None}))
        assert there.name == name and there.fingerprint() == own.fingerprint()
    assert comparison_page(page, "cifar10", [3, 4]).seeds == [3, 4]
    with pytest.raises(ValueError, match="no page compares aaPU with nnPU on 'mnist'"):
        comparison_page(page, "mnist")


def known_history(n_seeds=6, dataset="synthetic"):
    """aaPU's error 0.10 (± a little per seed) at the final epoch (2); nnPU 0.10 worse, VPU
    within 0.001 of aaPU, the oracle 0.05 better; AUC and AP mirror the error (1 − error).
    At epoch 1 every method but aaPU looks better than aaPU by 0.2: only the final epoch
    may count (no epoch is chosen on the test set)."""
    rng = np.random.default_rng(0)
    rows = []
    for seed in range(n_seeds):
        base = 0.10 + rng.normal(0, 0.002)
        for method, shift in (("aapu", 0.0), ("nnpu", 0.10 + rng.normal(0, 0.003)),
                              ("vpu", rng.normal(0, 0.0005)), ("aapu_oracle", -0.05 + rng.normal(0, 0.003))):
            for epoch in (1, 2):
                err = base + shift - (0.2 if epoch == 1 and method != "aapu" else 0.0)
                rows.append({"dataset": dataset, "method": method, "seed": seed, "epoch": epoch,
                             "test_error": err, "test_auc": 1 - err, "test_ap": 1 - err,
                             "wall_time": 10.0 * epoch})
    return pd.DataFrame(rows)


META = {"synthetic": {"status": "run", "n_test": 10_000, "profile": "cpu"}}


def test_the_verdicts_name_a_win_a_tie_and_a_counterfactual_loss():
    table = standing.standings(known_history(), META)
    outcome = table.set_index(["method", "metric"]).outcome
    for metric in standing.METRICS:
        assert outcome["nnpu", metric] == standing.WIN
        assert outcome["vpu", metric] == standing.TIE
        assert outcome["aapu_oracle", metric] == standing.LOSE
    error = table[(table.method == "nnpu") & (table.metric == "test_error")].iloc[0]
    assert error.difference == pytest.approx(0.10, abs=0.01) and error.low > 0   # method − aaPU
    auc = table[(table.method == "nnpu") & (table.metric == "test_auc")].iloc[0]
    assert auc.difference == pytest.approx(-0.10, abs=0.01) and auc.high < 0
    assert set(table.adjustment) == {"max-|t| sign-flip over 9"}
    text = standing.sentence(table, {**META, "cifar10": {"status": "not run", "reason": "data not available"}})
    assert text.startswith("On test error, aaPU beats nnPU (synthetic); ties with VPU (synthetic);")
    assert "0 of 2 comparisons are undecided" in text and "(6 seeds a data set, each judged by a max-|t| sign-flip over 9)" in text
    assert "Counterfactuals: aaPU with an oracle S on synthetic: aaPU worse." in text
    assert text.endswith("Not run: cifar10 (data not available).")


def test_data_sets_stated_together_are_bonferroni_adjusted_across():
    history = pd.concat([known_history(10), known_history(10, dataset="fashion_mnist")])
    meta = {d: {"status": "run", "n_test": 10_000, "profile": "cpu"} for d in ("synthetic", "fashion_mnist")}
    table = standing.standings(history, meta)
    assert set(table.adjustment) == {"max-|t| sign-flip over 9, Bonferroni over 2 families"}
    alone = standing.standings(known_history(10), META).set_index(["method", "metric"])
    both = table[table.dataset == "synthetic"].set_index(["method", "metric"])
    assert (both.high - both.low > alone.high - alone.low).all()           # wider intervals


def test_fewer_than_six_seeds_decide_nothing():
    table = standing.standings(known_history(n_seeds=3), META)
    assert set(table.outcome) == {standing.OPEN}
    assert "aaPU is shown neither better nor worse" in standing.sentence(table)


def test_the_ranking_orders_by_final_error_and_carries_the_verdict():
    history = known_history()
    ranked = standing.ranking(history, standing.standings(history, META))
    order = list(ranked.method)
    assert order[0] == "aaPU with an oracle S †" and set(order[1:3]) == {"aaPU", "VPU"} and order[3] == "nnPU"
    verdicts = dict(zip(order, ranked["vs aaPU (error)"]))
    assert verdicts == {"aaPU with an oracle S †": standing.LOSE, "aaPU": "—", "VPU": standing.TIE,
                        "nnPU": standing.WIN}
    assert list(ranked.index.get_level_values("rank")) == [1, 2, 3, 4]
    assert set(ranked["s / run"]) == {"20"}


def test_nnpusbs_two_thresholds_are_read_from_nnpus_final_epoch():
    from pusupport.core.methods import view_column
    history = known_history(n_seeds=3)
    last = (history.method == "nnpu") & (history.epoch == 2)
    history.loc[last, view_column("nnpusb")] = [0.11, 0.13, 0.12]
    history.loc[last, view_column("nnpusb_test")] = [0.10, 0.10, 0.13]
    table = standing_views.nnpusb_thresholds(history)
    assert table.loc["synthetic"].tolist() == ["0.1200 ± 0.0100", "0.1100 ± 0.0173", 3]
    assert standing_views.nnpusb_thresholds(known_history()).empty          # trained before the views


def test_every_method_that_reads_the_prior_is_shown_at_one_threshold_beside_its_own():
    """The common threshold's error beside each method's own and its ROC AUC; VPU reads no
    π, so it has none; a history from before the view has no table."""
    from pusupport.core.methods import view_column
    history = known_history(n_seeds=2)
    last = (history.epoch == 2) & history.method.isin(["aapu", "nnpu", "aapu_oracle"])
    history.loc[last, view_column("nnpusb")] = 0.09
    table = standing_views.at_one_threshold(history)
    row = table.loc[("synthetic", "aaPU")]
    assert list(row.index) == ["own threshold", "one threshold", "ROC AUC"] and row["one threshold"] == 0.09
    assert row["own threshold"] == round(history[(history.method == "aapu") & (history.epoch == 2)].test_error.mean(), 4)
    assert table.loc[("synthetic", "VPU"), "one threshold"] == "—"
    assert standing_views.at_one_threshold(known_history()).empty


def test_the_forest_plot_has_a_panel_per_data_set_and_metric_coloured_by_outcome():
    import matplotlib
    matplotlib.use("Agg")
    from pusupport.book.evidence import forest
    table = standing.standings(known_history(), META)
    fig = forest(table, standing.METRICS, standing.outcome_colors())
    axes = fig.axes
    assert len(axes) == 3 and [a.get_title() for a in axes] == [
        "synthetic: test error", "synthetic: ROC AUC", "synthetic: average precision"]
    assert [t.get_text() for t in axes[0].get_yticklabels()] == ["nnPU", "VPU", "aaPU with an oracle S †"]
    win = standing.outcome_colors()[standing.WIN]
    first = axes[0].collections[0]                          # nnPU's interval: aaPU better
    assert tuple(first.get_colors()[0][:3]) == tuple(win[:3])


def test_a_method_close_to_one_class_despite_a_good_ranking_is_named():
    """Error 0.38 where calling everything negative scores 0.4 (a 5 % gain, under a tenth)
    with AUC 0.98 is named; the same error with AUC 0.6 (no ranking either), or a low error,
    is not; a data set without its rate is skipped."""
    rows = []
    for seed in range(4):
        for method, error, auc in (("robustpu", 0.38 + 0.01 * (seed - 1.5), 0.98),
                                   ("vpu", 0.38, 0.60), ("aapu", 0.07, 0.98)):
            rows.append({"dataset": "synthetic", "method": method, "seed": seed, "epoch": 3,
                         "test_error": error, "test_auc": auc})
    history = pd.DataFrame(rows)
    notes = standing_views.one_class_notes(history, {"synthetic": {"test_positive_rate": 0.4}})
    assert notes == ["Robust-PU on synthetic: test error 0.3800, close to that of calling every "
                     "point negative (0.4000; it removes 5% of it), yet ROC AUC 0.9800: its scores "
                     "rank the points well, but its decision threshold does not separate them"]
    flipped = standing_views.one_class_notes(history, {"synthetic": {"test_positive_rate": 0.6}})
    assert len(flipped) == 1 and "calling every point positive (0.4000" in flipped[0]
    assert standing_views.one_class_notes(history, {"synthetic": {"test_positive_rate": 0.45}}) == []
    assert standing_views.one_class_notes(history, {"synthetic": {"test_positive_rate": None}}) == []


def test_a_data_set_that_is_missing_is_said_in_words(tmp_path):
    """No data for a data set (nothing on disk, no download): nothing is trained and the
    reason names its page in words — no path of this machine, no URLError."""
    page = page_at("smoke", data_dir=str(tmp_path / "empty"), output_dir=str(tmp_path / "out"))
    history, meta = standing.run_standing(page, {"cifar10": comparison_page(page, "cifar10")})
    assert history.empty
    assert meta == {"cifar10": {"status": "not run", "reason": "data not available on this "
                                "machine: the real_cifar10 page says how to provide it"}}


def test_the_paper_record_is_read_from_its_committed_runs_and_never_trained(tmp_path):
    """Told what to say when a run is missing, a data set whose runs are not all committed
    is not run, for that reason (which names the command that trains them); once a build's runs are committed, the same
    page reads every run — the same history, nothing trained."""
    page = replace(page_at("smoke", compared={"synthetic": ["nnpu", "nnpusb"]}, output_dir=str(tmp_path / "read")),
                   committed=tmp_path / "committed")
    history, meta = standing.run_standing(page, {"synthetic": comparison_page(page, "synthetic")},
                                          missing=standing.RECORD_MISSING)
    assert history.empty and meta["synthetic"]["status"] == "not run"
    assert meta["synthetic"]["reason"] == standing.RECORD_MISSING
    assert standing.RECORD_COMMAND in standing.RECORD_MISSING
    build = replace(page, output_dir=tmp_path / "build", committed=None, sources=[])
    trained, _ = standing.run_standing(build, {"synthetic": comparison_page(build, "synthetic")})
    assert any(trainer is None for _, trainer in build.sources)
    commit_runs(tmp_path / "build" / "runs", tmp_path / "committed")
    read, meta = standing.run_standing(page, {"synthetic": comparison_page(page, "synthetic")},
                                       missing=standing.RECORD_MISSING)
    assert meta["synthetic"]["status"] == "run" and set(read.method) == {"aapu", "nnpu", "nnpusb"}
    assert all(trainer is not None and "committed" in trainer for _, trainer in page.sources)
    pd.testing.assert_frame_equal(read.drop(columns="wall_time"), trained.drop(columns="wall_time"),
                                  check_dtype=False)


def test_a_data_set_whose_runs_the_record_holds_is_read_from_it_and_never_trained_twice(tmp_path, monkeypatch):
    """At `cpu` the synthetic task is at the paper's settings, so the comparison's runs are the
    record's (the same keys): read from the record in every build, `FRESH=1` too; a data set
    whose runs the record lacks is trained as before."""
    def no_training(*args, **kwargs):
        raise AssertionError("trained a run that the record holds")
    monkeypatch.setattr(standing, "RECORD_RUNS", tmp_path / "record")
    (tmp_path / "record").mkdir()
    page = page_at("smoke", compared={"synthetic": ["nnpu", "nnpusb"]}, output_dir=str(tmp_path / "build"))
    trained, _ = standing.run_standing(page, {"synthetic": comparison_page(page, "synthetic")})
    assert any(trainer is None for _, trainer in page.sources)          # not in the record: trained
    commit_runs(tmp_path / "build" / "runs", tmp_path / "record")
    monkeypatch.setenv("PUSUPPORT_FRESH", "1")
    monkeypatch.setattr("pusupport.core.training.fit", no_training)
    fresh = replace(page, output_dir=tmp_path / "fresh", sources=[])
    read, meta = standing.run_standing(fresh, {"synthetic": comparison_page(fresh, "synthetic")})
    assert meta["synthetic"]["status"] == "run" and fresh.sources
    assert all(trainer is not None and "committed" in trainer for _, trainer in fresh.sources)
    pd.testing.assert_frame_equal(read.drop(columns="wall_time"), trained.drop(columns="wall_time"),
                                  check_dtype=False)


def test_the_record_is_the_paper_plan_on_the_synthetic_task_read_from_its_own_folder():
    from pusupport.book.pages import record_of
    from pusupport.book.reference import REFERENCE
    record = record_of(page_at("smoke"), standing.RECORD, "paper", compared=standing.RECORD_COMPARED)
    assert (record.name, record.profile, record.checkpoints) == (standing.RECORD, "paper", False)
    assert record.committed == REFERENCE / "paper" / standing.RECORD / "runs"
    assert {(s.dataset, s.method) for s in record.plan()} == {
        (d, m) for s in page_at("paper").plan() if s.dataset == "synthetic" for d, m in [(s.dataset, s.method)]}
    from pusupport.book.cost import price                # the plan that runs is priced, not four data sets
    ours, full = (price(record.experiment.runs(parameters=given)).describe()
                  for given in ({"compared": standing.RECORD_COMPARED}, None))
    assert ours in record.describe() and full not in record.describe()


def test_a_page_that_names_its_methods_says_that_the_parameter_left_the_rest_out():
    page = page_at("paper", compared={"synthetic": ["nnpu", "vpu"]})
    assert {s.dataset for s in page.plan()} == {"synthetic"}
    said = standing.not_run_text(page.settings, "paper")
    assert "fashion_mnist: not in this page's plan" in said
    assert "Not at this profile because the page's `compared` parameter leaves them out" in said


@pytest.mark.parametrize("compared", [{"mnist": ["nnpu"]}, {"synthetic": ["nnpuu"]}, {},
                                      {"synthetic": "nnpu"}, {"synthetic": ["aapu"]}])
def test_a_bad_compared_fails_in_the_first_cell_naming_the_data_sets_and_methods(compared):
    with pytest.raises(ValueError, match=r"give \{data set: \[methods\]\} with data sets from "
                                         r"\['synthetic', 'fashion_mnist'"):
        page_at("cpu", compared=compared).describe()


def test_a_validation_split_is_held_out_for_every_method_where_vpu_runs():
    """At `cpu` VPU runs on the synthetic task only: there every method (aaPU too) trains
    without the split; Fashion-MNIST's runs stay those of its comparison page."""
    held = {(s.dataset, s.method): s.changes.get("data", {}).get("validation") for s in page_at("cpu").plan()}
    assert {v for (d, _), v in held.items() if d == "synthetic"} == {standing.VALIDATION}
    assert {v for (d, _), v in held.items() if d != "synthetic"} == {None}
    assert held["synthetic", "aapu"] == 1 / 12


def test_at_their_own_choice_runs_are_read_where_their_criterion_is_lowest():
    """Epoch 1 has the lowest criterion for every method but nnPU: there aaPU's 0.2 advantage
    holds over every other method (the epoch-1 rows of :func:`known_history`), nnPU keeps
    its epoch 2; the table names each criterion."""
    history = known_history()
    history["val_risk"] = np.where((history.epoch == 1) != (history.method == "nnpu"), 0.1, 0.2)
    chosen = standing.own_choice(history)
    assert set(chosen[chosen.method == "nnpu"].epoch) == {2} and set(chosen[chosen.method == "vpu"].epoch) == {1}
    table = standing.standings(history, META, at=standing.AT["own choice"])
    vpu = table[(table.method == "vpu") & (table.metric == "test_error")].iloc[0]
    assert vpu.difference == pytest.approx(-0.2, abs=0.01) and vpu.outcome == standing.LOSE
    ranked = standing.ranking(history, table, at=standing.AT["own choice"])
    assert "s / run" not in ranked and ranked.method.iloc[0] == "aaPU with an oracle S †"
    epochs = standing.chosen_epochs(history)
    assert epochs.loc[("synthetic", "VPU"), "criterion"] == "its authors': the variational loss"
    assert epochs.loc[("synthetic", "nnPU"), "median"] == 2
    assert standing.standings(known_history(), META, at=standing.AT["own choice"]).empty


def test_a_split_is_held_out_where_a_method_that_reads_one_runs():
    """At `smoke` VPU is listed on 20 News but not run there (MixUp on sparse rows); Robust-PU
    runs there and its stop reads the split, so every run there holds it out; at `cpu` the
    real data sets compare nnPU alone, and their runs keep all their training data."""
    split = {"validation": standing.VALIDATION}
    held = {(s.dataset, s.method): s.changes.get("data") for s in page_at("smoke").plan()}
    assert ("20news", "vpu") not in held and ("20news", "robustpu") in held
    assert all(v == split for (d, _), v in held.items() if d == "20news")
    assert held["fashion_mnist", "nnpu"] == split
    cpu = {(s.dataset, s.method): s.changes.get("data") for s in page_at("cpu").plan()}
    assert all(v is None for (d, _), v in cpu.items() if d != "synthetic")


def test_without_a_split_no_epoch_is_chosen():
    assert standing.chosen_epochs(known_history()).empty


def test_a_view_has_no_own_choice():
    """nnPUSB's error exists at the last epoch only (a view of nnPU's run): no row at a choice."""
    history = known_history().replace({"method": {"vpu": "nnpusb"}})
    history["val_risk"] = 0.1
    assert set(standing.own_choice(history).method) == {"aapu", "nnpu", "aapu_oracle"}


def test_the_page_s_answer_is_a_claim_judged_again_from_its_results():
    """aaPU beats nnPU but ties with VPU in :func:`known_history`: beating every method is
    ruled out; without VPU it is reproduced; a loss to one contradicts it."""
    from pusupport.book.verdicts import CONTRADICTED, INCONCLUSIVE, REPRODUCED, RULED_OUT
    summary = {"datasets": META}
    history = known_history(10)
    outcome = standing.beats_todays_methods(summary, history)
    assert outcome.verdict == RULED_OUT and outcome.seeds == 10
    assert outcome.measured == standing.sentence(standing.standings(history, META), META)
    assert standing.beats_todays_methods(summary, history[history.method != "vpu"]).verdict == REPRODUCED
    worse = history.replace({"method": {"aapu_oracle": "distpu"}})           # a usable method 0.05 better
    assert standing.beats_todays_methods(summary, worse).verdict == CONTRADICTED
    assert standing.beats_todays_methods(summary, pd.DataFrame()).verdict == INCONCLUSIVE


def test_what_each_data_set_trained_on_is_shown_with_its_own_fingerprint():
    """Where a split is held out the runs trained on less than the comparison page's data,
    and the table says so with that data's fingerprint; elsewhere the page's data."""
    meta = {"synthetic": {"status": "run", "validation": True, "page_p": 100, "page_u": 1000,
                          "trained_p": 92, "trained_u": 917, "fingerprint": "aaa", "trained_fingerprint": "bbb"},
            "fashion_mnist": {"status": "run", "validation": False, "page_p": 1000, "page_u": 60000,
                              "trained_p": 1000, "trained_u": 60000, "fingerprint": "ccc",
                              "trained_fingerprint": "ccc"},
            "cifar10": {"status": "not run", "reason": "data not available"}}
    table = standing.data_trained(meta)
    assert list(table.index) == ["synthetic", "fashion_mnist"]
    assert table.loc["synthetic", "P, U trained on"] == "92, 917"
    assert table.loc["synthetic", "held out"] == "8, 83 (1/12)"
    assert table.loc["fashion_mnist", "held out"] == "none"
    assert table.loc["fashion_mnist", "P, U of the page"] == "1,000, 60,000"
    assert standing.data_trained({"cifar10": meta["cifar10"]}).empty


def test_every_row_of_the_method_table_is_its_method_s_declaration():
    """Each compared method and aaPU has a row, read from its declaration: its label, its
    source, its departures (— where it declares none); a method's own settings where it has them."""
    from pusupport.book import recipes
    from pusupport.core.methods import get_method
    table = recipes.hyperparameters().set_index("method")
    assert {get_method(m).label for m in ("aapu", *standing.COMPARED)} == set(table.index)
    for name in recipes.LISTED:
        m = get_method(name)
        row = table.loc[m.label]
        assert row.source == m.source and m.source
        changes = recipes.departures().query("method == @m.label")
        assert list(zip(changes["changed here"], changes.why)) == list(m.departures)
        assert row.settings.startswith("alpha = " if name == "vpu" else m.description if m.settings is None else "")
    assert "β = 0 and γ = 1" in recipes.SHARED


def test_an_oracle_that_ties_with_aapu_because_s_was_already_pure_is_said_to_have_changed_nothing():
    final = pd.DataFrame({"dataset": "synthetic", "method": ["aapu"] * 3 + ["aapu_oracle"] * 3,
                          "seed": [0, 1, 2] * 2, "epoch": 5, "test_error": [0.1, 0.2, 0.3] * 2,
                          "n_selected": [4, 13, 7] * 2, "purity": [1.0] * 6})
    assert standing_views.oracle_notes(final) == [
        "aaPU with an oracle S on synthetic ends with aaPU's test error on each of its 3 seeds: aaPU's "
        "own S held 4–13 points, 100% of them true positives, so an oracle had nothing to replace"]
    assert standing_views.oracle_notes(final.assign(test_error=[0.1, 0.2, 0.3, 0.1, 0.2, 0.25])) == []
