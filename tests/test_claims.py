"""Results files and the reproduction verdicts, on small hand-made histories."""
import json
import os

import pandas as pd
import pytest

from pusupport.book import claims
from pusupport.core import atomic
from pusupport.core.atomic import atomic_write_text
from pusupport.book.claims import Claim, lower_error, verdict_text
from pusupport.book.experiments.formulation import negative_risk
from pusupport.book.experiments.histograms import LOGISTIC_NNPU, SIGMOID_NNPU, purity
from pusupport.book.experiments.memorization import memorisation as memorisation_check
from pusupport.book.experiments.prior import sensitivity
from pusupport.book.registry import book_claims, reproduction_table

CLAIMS = [c for c, _ in book_claims()]
from pusupport.book.records import reading, save_results, summarize, summary_table
from pusupport.book.verdicts import (CONTRADICTED, DESCRIPTIVE, INCONCLUSIVE, NOT_RUN, REPRODUCED,
                                     RULED_OUT, SMALLER_GAIN, SMALLER_LOSS, UNSTABLE, Margin)
from scipy import stats


def history(rows):
    """rows: (method, seed, epoch, test_error, test_auc)."""
    return pd.DataFrame(rows, columns=["method", "seed", "epoch", "test_error", "test_auc"])


# Final epoch 3: nnpu errors 0.30, 0.40, 0.20 (mean 0.30, std 0.10); aapu 0.10, 0.14, 0.12
# (mean 0.12, std 0.02); upu has one seed only.
HISTORY = history(
    [("nnpu", s, 1, 0.5, 0.5) for s in range(3)]
    + [("nnpu", 0, 3, 0.30, 0.70), ("nnpu", 1, 3, 0.40, 0.60), ("nnpu", 2, 3, 0.20, 0.80)]
    + [("aapu", 0, 3, 0.10, 0.90), ("aapu", 1, 3, 0.14, 0.86), ("aapu", 2, 3, 0.12, 0.88)]
    + [("upu", 0, 3, 0.45, 0.55), ("upu", 0, 2, 0.0, 1.0)])


def test_summarize_takes_the_last_epoch_per_method_in_order_of_appearance():
    out = summarize(HISTORY)
    assert list(out) == ["nnpu", "aapu", "upu"]
    assert out["nnpu"]["n_seeds"] == 3 and out["nnpu"]["epochs"] == 3
    assert out["nnpu"]["test_error"] == {"mean": pytest.approx(0.30), "std": pytest.approx(0.10)}
    assert out["aapu"]["test_auc"] == {"mean": pytest.approx(0.88), "std": pytest.approx(0.02)}
    assert out["upu"] == {"n_seeds": 1, "epochs": 3, "test_error": {"mean": 0.45, "std": 0.0},
                          "test_auc": {"mean": 0.55, "std": 0.0}}


def test_summarize_counts_distinct_seeds_and_takes_the_asked_metrics():
    h = history([("m", 7, 2, 0.2, 0.9), ("m", 7, 2, 0.4, 0.7), ("m", 8, 2, 0.3, 0.8), ("m", 8, 1, 1.0, 0.0)])
    out = summarize(h, metrics=("test_auc",))
    assert out == {"m": {"n_seeds": 2, "epochs": 2, "test_auc": {"mean": pytest.approx(0.8),
                                                                  "std": pytest.approx(0.1)}}}


def test_summarize_std_of_two_seeds():
    out = summarize(history([("m", 0, 1, 0.1, 0.5), ("m", 1, 1, 0.3, 0.5)]))
    assert out["m"]["test_error"] == {"mean": pytest.approx(0.2), "std": pytest.approx(0.02 ** 0.5)}
    assert out["m"]["test_auc"] == {"mean": 0.5, "std": 0.0}


def test_summarize_ignores_methods_missing_at_the_last_epoch():
    h = history([("a", 0, 5, 0.1, 0.9), ("b", 0, 4, 0.2, 0.8)])
    assert list(summarize(h)) == ["a"]


def test_save_results_writes_history_and_summary(tmp_path):
    out = tmp_path / "new" / "page"
    summary = save_results(HISTORY, out, profile="smoke", prior=0.4, where=tmp_path)
    assert set(os.listdir(out)) == {"history.csv", "summary.json"}
    pd.testing.assert_frame_equal(pd.read_csv(out / "history.csv"), HISTORY)
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk == {**summary, "where": str(tmp_path)}
    assert summary["status"] == "run" and summary["profile"] == "smoke" and summary["prior"] == 0.4
    assert summary["methods"] == summarize(HISTORY)
    assert (out / "summary.json").read_text().startswith('{\n  "status": "run",\n  "methods": {')


def test_a_run_without_a_test_split_writes_strict_json(tmp_path):
    """Your own data without a labelled test split has no test error: the summary leaves
    the metric out rather than writing NaN, which strict JSON readers refuse."""
    untested = HISTORY.assign(test_error=float("nan"), test_auc=float("nan"))
    save_results(untested, tmp_path)

    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")
    on_disk = json.loads((tmp_path / "summary.json").read_text(), parse_constant=refuse)
    assert all("test_error" not in m and "test_auc" not in m for m in on_disk["methods"].values())
    assert "test_error" in summarize(HISTORY)["aapu"]


def test_atomic_write_replaces_and_leaves_nothing_behind(tmp_path):
    path = tmp_path / "a" / "b.txt"
    atomic_write_text(path, "one")
    atomic_write_text(str(path), "two")
    assert path.read_text() == "two" and os.listdir(path.parent) == ["b.txt"]
    plain = tmp_path / "a" / "plain.txt"
    plain.write_text("x")
    assert path.stat().st_mode == plain.stat().st_mode     # the umask's mode, not 0600


def test_failed_atomic_write_keeps_the_old_file_and_removes_the_temporary(tmp_path, monkeypatch):
    path = tmp_path / "b.txt"
    path.write_text("old")
    names = []

    def fail(src, dst):
        names.append(src)
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "replace", fail)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_text(path, "new")
    assert os.listdir(tmp_path) == ["b.txt"] and path.read_text() == "old"
    # the temporary file is a hidden one beside the target (same file system: atomic rename)
    assert os.path.dirname(names[0]) == str(tmp_path)
    assert os.path.basename(names[0]).startswith(".b.txt.")


def test_summary_table_shows_mean_and_std_to_four_places():
    table = summary_table({"methods": summarize(HISTORY)})
    assert list(table.index) == ["nnpu", "aapu", "upu"] and table.index.name == "method"
    assert table.loc["nnpu"].to_dict() == {"seeds": 3, "epochs": 3, "test_error": "0.3000 ± 0.1000",
                                           "test_auc": "0.7000 ± 0.1000"}
    assert table.loc["upu", "test_auc"] == "0.5500 ± —"     # one seed: no spread, not 0


def _means(**methods):
    return {"methods": {m: {k: {"mean": v} for k, v in zip(("test_error", "test_auc", "test_ap"), vals)}
                        for m, vals in methods.items()}}


def test_a_reading_says_which_method_is_better_on_each_metric_and_what_a_disagreement_means():
    # CIFAR-10 at cpu once: aaPU the lower error but the lower AUC
    text = reading(_means(aapu=(0.1729, 0.8405, 0.80), nnpu=(0.1804, 0.8624, 0.82)))
    assert "better test error (0.1729 against 0.1804)" in text and "worse ROC AUC (0.8405" in text
    assert "Error and ranking disagree: aaPU's lower error comes from where its threshold falls" in text
    assert "nnPUSB" in text and "nnPUSB" not in reading(_means(nnpu=(0.2, 0.8, 0.7), upu=(0.1, 0.9, 0.8)),
                                                        "nnpu", "upu")
    agree = reading(_means(aapu=(0.30, 0.80, 0.70), nnpu=(0.20, 0.90, 0.75)))
    assert "worse test error" in agree and "Error and ranking agree: nnPU both orders" in agree
    mixed = reading(_means(aapu=(0.1, 0.9, 0.6), nnpu=(0.2, 0.8, 0.7)))   # AUC and AP split
    assert "agree" not in mixed and "disagree" not in mixed
    assert reading(_means(aapu=(0.1, 0.9, 0.7), nnpu=(0.1, 0.9, 0.7))) == ""
    # a gap below the four places shown is no gap
    assert "ROC AUC" not in reading(_means(aapu=(0.1, 0.98613, 0.7), nnpu=(0.2, 0.98609, 0.7)))
    assert reading(_means(aapu=(0.1, 0.9, 0.7))) == ""                   # no baseline: nothing




def test_summaries_keep_a_page_s_settings_apart():
    """The prior page's runs differ by the π given: each (method, π) is summarised over its
    own seeds, never pooled across priors."""
    h = history([("m", 0, 1, 0.1, 0.5), ("m", 1, 1, 0.3, 0.5), ("m", 0, 1, 0.5, 0.5), ("m", 1, 1, 0.5, 0.5)])
    out = summarize(h.assign(prior_label=["×1", "×1", "×0.8", "×0.8"]))
    assert list(out) == ["m (×1)", "m (×0.8)"]
    assert out["m (×1)"]["test_error"] == {"mean": pytest.approx(0.2), "std": pytest.approx(0.02 ** 0.5)}
    assert out["m (×0.8)"]["test_error"] == {"mean": 0.5, "std": 0.0}


def steady(gain, seeds=6, noise=(0.001, -0.002, 0.0005, 0.002, -0.001, -0.0005)):
    """aapu = nnpu + gain + small per-seed noise, over 4 epochs (last 3 alike)."""
    rows = []
    for s in range(seeds):
        base = 0.2 + 0.03 * s
        for e in range(1, 5):
            rows += [("nnpu", s, e, base, 0.8), ("aapu", s, e, base + gain + noise[s], 0.8)]
    return history(rows)


def _judge(check, hist, summary, **kw):
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as root:
        write_page(Path(root), "here", hist, **summary)
        return claims.judge_claims(root, [(Claim("c", check, **kw), "here")])[0][1]


def test_lower_error_measures_the_paired_difference_and_leaves_the_verdict_to_the_rule():
    """HISTORY: aaPU − nnPU per seed = −0.20, −0.26, −0.08: mean −0.18, 95 % t interval
    [−0.408, +0.048]."""
    o = lower_error("aapu", "nnpu")({}, HISTORY)
    assert (o.seeds, o.verdict, o.judged) == (3, NOT_RUN, None)
    assert o.paired.mean == pytest.approx(-0.18) and o.baseline == pytest.approx(0.30)
    assert (o.paired.low, o.paired.high) == pytest.approx((-0.18 - 0.22769, -0.18 + 0.22769), abs=1e-4)
    assert o.measured.startswith("aapu − nnpu, final test error: -0.1800 [-0.4077, +0.0477], t-test p")
    # epochs 1–3: nnPU's seed means (0.40, 0.45, 0.35) against aaPU's epoch 3 alone
    assert "mean of the last 3 evaluated epochs: -0.2800 [-0.3883, -0.1717]" in o.measured
    assert "ran one method only" not in o.measured


def test_comparisons_are_judged_under_the_rule():
    check = lower_error("aapu", "nnpu")
    better, worse = _judge(check, steady(-0.05), {"status": "run"}), _judge(check, steady(+0.05), {"status": "run"})
    assert better.verdict == REPRODUCED and better.judged.high < 0 and better.seeds == 6
    assert better.judged.margin == pytest.approx(0.1 * steady(0).query("epoch == 4 and method == 'nnpu'").test_error.mean())
    assert worse.verdict == CONTRADICTED and worse.judged.low > 0
    # Δ = 0.0275: a gain (a loss) of 0.02 is shown, and so is that it is smaller than Δ
    small, slight = _judge(check, steady(-0.02), {"status": "run"}), _judge(check, steady(+0.02), {"status": "run"})
    assert small.verdict == SMALLER_GAIN and -small.judged.margin < small.judged.low < small.judged.high < 0
    assert slight.verdict == SMALLER_LOSS and 0 < slight.judged.low < slight.judged.high < slight.judged.margin
    five = _judge(check, steady(-0.02, seeds=5), {"status": "run"})
    assert five.verdict == DESCRIPTIVE and five.seeds == 5
    one = _judge(check, steady(-0.02, seeds=1), {"status": "run"})
    assert one.verdict == DESCRIPTIVE and "single seed: no interval" in one.measured
    null = steady(0.0, noise=(0.01, -0.01, 0.0, 0.005, -0.005, 0.002))
    assert _judge(check, null, {"status": "run"}, margin=Margin(0.01, 0)).verdict == INCONCLUSIVE
    assert _judge(check, null, {"status": "run"}, margin=Margin(0.5, 0)).verdict == RULED_OUT


def test_the_floor_is_two_test_points_at_every_profile():
    """The test set's resolution, whatever the measured run-to-run spread (shown, not a floor)."""
    assert claims.floor_for({"dataset": "synthetic", "profile": "cpu", "n_test": 1000}) == pytest.approx(0.002)
    assert claims.floor_for({"dataset": "20news", "profile": "paper", "n_test": 7532}) == pytest.approx(2 / 7532)
    assert claims.floor_for({"dataset": "synthetic", "profile": "cpu"}) == 0.0
    check = lower_error("aapu", "nnpu")
    wide = {"status": "run", "dataset": "synthetic", "profile": "cpu"}
    assert _judge(check, steady(-0.05), wide).verdict == REPRODUCED
    # a gain smaller than Δ decides at both ends: 0.0275 − 0.0215 = 0.006 from −Δ, 0.0004 within 2 of 10 points
    assert _judge(check, steady(-0.02), {**wide, "n_test": 10_000}).verdict == SMALLER_GAIN
    assert _judge(check, steady(-0.02), {**wide, "n_test": 300}).verdict == UNSTABLE


def test_a_family_is_adjusted_by_its_size():
    check = lower_error("aapu", "nnpu")
    gain = steady(-0.05)
    alone = _judge(check, gain, {"status": "run"})
    assert alone.judged.adjustment == "" and alone.verdict == REPRODUCED
    with_others = _judge(check, gain, {"status": "run"}, family="f")
    assert with_others.judged.adjustment == "" and with_others.verdict == REPRODUCED   # alone in "f"
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as root:
        write_page(Path(root), "here", gain, status="run")
        claim = Claim("c", check, margin=Margin(0.01, 0), family="f")
        out = claims.judge_claims(root, [(claim, "here")], {"f": 5})
        assert out[0][1].judged.adjustment == "Bonferroni over 5"
        assert out[0][1].judged.p_exact == pytest.approx(5 * 2 / 64) and out[0][1].verdict == DESCRIPTIVE
        assert "a family of 5 needs 8" in out[0][1].judged.text()
        two = claims.judge_claims(root, [(Claim("c", check, family="f"), "here"),
                                         (Claim("d", check, family="f"), "here")])
        assert [o.judged.adjustment for _, o in two] == ["Bonferroni over 2"] * 2


def test_lower_error_uses_the_evaluated_epochs_only():
    """With eval_every, test errors are NaN between evaluations; purity is NaN for nnPU."""
    h = steady(-0.02).assign(purity=float("nan"))
    h.loc[h.epoch.isin([1, 3]), "test_error"] = float("nan")
    h.loc[h.method == "aapu", "purity"] = 0.9
    o = lower_error("aapu", "nnpu")({}, h)
    assert o.seeds == 6 and o.paired.high < 0
    assert "mean of the last 2 evaluated epochs: -0.0200" in o.measured


def test_lower_error_names_the_seeds_only_one_method_ran():
    h = steady(-0.02)
    h = h[~((h.method == "aapu") & (h.seed == 4)) & ~((h.method == "nnpu") & (h.seed == 1))]
    o = lower_error("aapu", "nnpu")({}, h)
    assert o.seeds == 4 and o.measured.endswith("; seeds [1, 4] ran one method only (left out)")


def test_observed_has_three_outcomes():
    assert claims.observed("t", True, False) == claims.Outcome("t", REPRODUCED)
    assert claims.observed("t", False, True).verdict == CONTRADICTED
    assert claims.observed("t", False, False).verdict == INCONCLUSIVE
    with pytest.raises(ValueError, match="both reproduce and contradict"):
        claims.observed("t", True, True)


def formulation(upu_low, nnpu_low):
    return pd.DataFrame({"method": ["upu", "upu", "nnpu", "nnpu"], "epoch": [1, 2, 1, 2],
                         "risk_negative": [0.5, upu_low, 0.3, nnpu_low]})


def test_negative_risk_claim():
    o = negative_risk({}, formulation(-0.4, -0.1))
    assert o.verdict == REPRODUCED and o.measured == "lowest R̂_n per epoch — uPU: -0.400, nnPU: -0.100"
    assert negative_risk({}, formulation(-0.4, -0.2)).verdict == INCONCLUSIVE      # nnPU at half of uPU's
    assert negative_risk({}, formulation(-0.4, -0.199)).verdict == REPRODUCED
    assert negative_risk({}, formulation(0.0, 0.1)).verdict == CONTRADICTED        # uPU never below zero
    assert negative_risk({}, formulation(-0.4, -0.4)).verdict == CONTRADICTED      # nnPU as low as uPU
    assert negative_risk({}, formulation(-0.4, -0.399)).verdict == INCONCLUSIVE


def memorisation(late, peak=0.9, first=0.7, seeds=2, epochs=9, n_test=1000):
    """At 40 % noise validation accuracy: ``first`` up to ``peak`` at epoch 3, then ``late``
    over the last third; 0 % noise flat."""
    rows = []
    for noise in (0.0, 0.4):
        for seed in range(seeds):
            for e in range(1, epochs + 1):
                v = 0.2 if noise == 0 else first if e < 3 else peak if e == 3 else (
                    (peak + late) / 2 if e <= epochs * 2 / 3 else late)
                rows.append({"noise": noise, "seed": seed, "epoch": e, "val_accuracy": v,
                             "train_accuracy": 0.6 + 0.01 * e})
    return {"n_test": n_test}, pd.DataFrame(rows)


def test_memorisation_claim():
    s, h = memorisation(0.8)
    o = memorisation_check(s, h)
    se = (0.9 * 0.1 / 1000) ** 0.5          # 1,000 validation points, shared by the seeds
    threshold = (stats.norm.isf(0.05 / 6) + stats.norm.isf(0.025) / 3 ** 0.5) * se
    assert o.verdict == REPRODUCED
    assert o.measured == ("40% noise: validation accuracy peaks at 0.900 (epoch 3 of 9), the last third "
                          f"averages 0.800: a fall of 0.100 against a noise threshold of {threshold:.3f}; "
                          "training accuracy on noisy labels ends at 0.690")
    assert memorisation_check(*memorisation(0.9 - threshold * 0.99)).verdict == INCONCLUSIVE
    assert memorisation_check(*memorisation(0.9 - threshold * 1.01)).verdict == REPRODUCED
    assert memorisation_check(*memorisation(0.9)).verdict == CONTRADICTED            # no fall
    assert memorisation_check(*memorisation(0.95)).verdict == CONTRADICTED           # still rising
    s, h = memorisation(0.8, epochs=1)
    assert memorisation_check(s, h).verdict == INCONCLUSIVE                         # no last third
    # more validation points lower the threshold; more seeds scored on the same points do not
    s, h = memorisation(0.875, seeds=1, n_test=1000)
    assert memorisation_check(s, h).verdict == INCONCLUSIVE
    assert memorisation_check(*memorisation(0.875, seeds=10, n_test=1000)).verdict == INCONCLUSIVE
    s, h = memorisation(0.875, seeds=1, n_test=100_000)
    assert memorisation_check(s, h).verdict == REPRODUCED


def purity_history(last):
    """Purity is recorded at epochs 1 and 2; test error (eval_every=3) at epoch 3 only."""
    return pd.DataFrame({"method": [LOGISTIC_NNPU] * 3 + [SIGMOID_NNPU],
                         "epoch": [1, 2, 3, 4], "top_k_purity": [0.1, last, None, 0.0],
                         "test_error": [None, None, 0.3, 0.2]})


def test_purity_claim():
    summary = {"prior": 0.4, "top_k": 100}
    o = purity(summary, purity_history(0.7))
    assert o.verdict == REPRODUCED
    assert o.measured == "nnPU (logistic), epoch 2: top-100 purity 70.0% ± 9.2% (2 SE) vs one half; π = 0.400"
    assert purity(summary, purity_history(0.55)).verdict == INCONCLUSIVE       # 0.55 − 0.0995 < 0.5
    assert purity(summary, purity_history(0.6)).verdict == REPRODUCED          # 0.6 − 0.098 > 0.5
    assert purity(summary, purity_history(0.41)).verdict == INCONCLUSIVE      # 0.41 + 0.098 ≥ 0.5
    assert purity(summary, purity_history(0.39)).verdict == CONTRADICTED
    assert purity(summary, purity_history(0.0)).verdict == CONTRADICTED        # SE never 0
    assert purity(summary, purity_history(1.0)).verdict == REPRODUCED


def prior_history(gap, seeds=6, noise=(0.001, -0.002, 0.0005, 0.002, -0.001, -0.0005), base=0.20):
    """Final test error per method, π label and seed: ×1 at ``base`` + noise; nnPU's extra
    error at ×0.8 and ×1.2 is 0.01, aaPU's 0.01 + ``gap`` (+ noise)."""
    rows = []
    for method in ("aapu", "nnpu"):
        for label, extra in (("×0.8", 0.01), ("×1", 0.0), ("×1.2", 0.01), ("BBE estimate", 0.05)):
            for s in range(seeds):
                err = base + 0.01 * s + extra + (gap + noise[s] if method == "aapu" and label.startswith("×0") else
                                                 gap if method == "aapu" and label == "×1.2" else 0)
                rows.append({"method": method, "prior_label": label, "epoch": 9, "seed": s, "test_error": err})
            rows.append({"method": method, "prior_label": label, "epoch": 8, "seed": 0, "test_error": 0.9})
    return pd.DataFrame(rows)


def test_prior_sensitivity_claim():
    o = sensitivity({"n_test": 10_000}, prior_history(0.0))
    assert o.verdict == REPRODUCED                 # no extra cost: both intervals below +Δ = 0.0225
    assert o.measured.startswith("aaPU's extra error − nnPU's, paired over 6 seeds (max-|t| sign-flip "
                                 "over 2; Δ = 0.0225): π ×0.8: +0.0000 [")
    assert o.measured.endswith("with the BBE estimate: aaPU 0.2750, nnPU 0.2750")
    assert sensitivity({"n_test": 10_000}, prior_history(0.05)).verdict == CONTRADICTED
    assert sensitivity({"n_test": 10_000}, prior_history(0.02)).verdict == CONTRADICTED   # below Δ, yet more
    assert sensitivity({"n_test": 10_000}, prior_history(0.0002)).verdict == REPRODUCED  # within the floor
    assert sensitivity({"n_test": 10_000}, prior_history(-0.05)).verdict == REPRODUCED
    assert sensitivity({}, prior_history(0.0, seeds=5)).verdict == DESCRIPTIVE


def write_page(root, folder, hist, **summary):
    (root / folder).mkdir(parents=True)
    (root / folder / "summary.json").write_text(json.dumps(summary))
    if hist is not None:
        hist.to_csv(root / folder / "history.csv", index=False)


SYNTHETIC_CLAIM = "Synthetic data (§4.1): aaPU has a lower test error than nnPU"
COLUMNS = ["claim", "profile", "seeds", "paired difference", "95 % interval", "p (adjusted)",
           "ruled out", "Δ", "interval covers", "family", "floor", "verdict", "measured"]


def test_reproduction_table_rows(tmp_path):
    write_page(tmp_path, "synthetic", steady(-0.02), status="run", profile="smoke", n_test=10_000)
    write_page(tmp_path, "real_cifar10", None, status="not run", reason="CIFAR-10 is missing",
               profile="paper")
    write_page(tmp_path, "real_20news", None, status="not run")
    write_page(tmp_path, "formulation", formulation(0.1, 0.2).assign(seed=0), status="run",
               profile="cpu")
    table = reproduction_table(tmp_path)
    assert list(table.columns) == COLUMNS
    assert list(table.claim) == [c.claim for c in CLAIMS]
    rows = table.set_index("claim")
    synthetic = rows.loc[SYNTHETIC_CLAIM].to_dict()
    assert {k: synthetic[k] for k in ("profile", "seeds", "paired difference", "Δ")} == {
        "profile": "smoke", "seeds": 6, "paired difference": "-0.0200", "Δ": "0.0275"}
    assert synthetic["p (adjusted)"].endswith("(Bonferroni over 4)")
    assert synthetic["interval covers"] == "training randomness, on this test split held fixed"     # no dataset given
    # 4 × 2/64 ≥ 0.05 (the family's price): 6 seeds cannot decide in the paper's family of 4
    assert synthetic["verdict"] == "descriptive only: 6 seeds; a family of 4 needs 8"
    assert synthetic["ruled out"].startswith("gains above 0.02")
    assert rows.loc[CLAIMS[0].claim].to_dict() == {
        "profile": "cpu", "seeds": 1, "paired difference": "—", "95 % interval": "—", "p (adjusted)": "—",
        "ruled out": "—", "Δ": "—", "interval covers": "—", "family": "—", "floor": "—", "verdict": CONTRADICTED,
        "measured": "lowest R̂_n per epoch — uPU: 0.100, nnPU: 0.200"}
    cifar = rows.loc["CIFAR-10: aaPU has a lower test error than nnPU (§4, its test-error curves)"].to_dict()
    assert (cifar["profile"], cifar["verdict"], cifar["measured"]) == ("paper", NOT_RUN, "— (CIFAR-10 is missing)")
    news = rows.loc["20News: aaPU has a lower test error than nnPU (§4, its test-error curves)"]
    assert (news.measured, news.profile, news.verdict) == ("— (not run)", "—", NOT_RUN)
    missing = rows.loc["CIFAR-100: aaPU has a lower test error than nnPU (§4, its test-error curves)"]
    assert (missing.measured, missing.verdict) == ("— (page not executed)", NOT_RUN)


def test_a_single_seed_row_is_descriptive(tmp_path):
    write_page(tmp_path, "adding_p", steady(-0.3, seeds=1).replace({"aapu": "nnpu+p"}),
               status="run", profile="cpu")
    row = reproduction_table(tmp_path).set_index("claim").loc[CLAIMS[1].claim]
    assert (row.seeds, row["95 % interval"], row["ruled out"]) == (1, "—", "—")
    assert row.verdict == "descriptive only: 1 seed, a verdict needs 6"


def test_reproduction_table_of_chosen_claims(tmp_path):
    seen = []

    def check(summary, hist):
        seen.append((summary["x"], len(hist)))
        return claims.Outcome("measured it", REPRODUCED)

    write_page(tmp_path, "here", HISTORY, status="run", profile="p", x=7)
    table = claims.reproduction_table(str(tmp_path), [(Claim("c", check), "here")])
    assert table.to_dict("records") == [{"claim": "c", "profile": "p", "seeds": 3,
                                         "paired difference": "—", "95 % interval": "—",
                                         "p (adjusted)": "—", "ruled out": "—", "Δ": "—",
                                         "interval covers": "—", "family": "—", "floor": "—", "verdict": REPRODUCED,
                                         "measured": "measured it"}]
    assert seen == [(7, len(HISTORY))]


def test_verdict_for_a_page(tmp_path):
    write_page(tmp_path, "synthetic", steady(0.02), status="run", profile="smoke")

    def verdict_for(root, folder):       # as a page does: its own claims, the book's families
        from pusupport.book.registry import family_sizes
        return verdict_text(root, [(c, f) for c, f in book_claims() if f == folder], family_sizes())
    text = verdict_for(tmp_path, "synthetic")
    assert text.startswith(f"**Claim:** {SYNTHETIC_CLAIM}  \n**Measured (smoke profile, 6 seeds):** "
                           "aapu − nnpu, final test error: +0.0200 [+0.0185, +0.0215], t-test p = 0.000, "
                           "sign-flip p = 0.031")
    assert "\n**Judged:** +0.0200 [+0.0" in text and "(training randomness, on this test split held fixed)" in text and "p t 0.000, exact 0.125 (Bonferroni over 4), Δ = 0.0275, floor 0.0000" in text
    assert text.endswith("**Verdict:** descriptive only: 6 seeds; a family of 4 needs 8")
    assert verdict_for(tmp_path, "no_such_page") == ""
    assert verdict_for(tmp_path, "prior") == (
        f"**Claim:** {CLAIMS[-2].claim}  \n**Measured (— profile, — seeds):** — (page not executed)  \n"
        f"**Verdict:** {NOT_RUN}")


def test_verdict_for_a_page_with_two_claims(tmp_path):
    write_page(tmp_path, "here", HISTORY, status="run", profile="p")
    two = [(Claim("first", lambda s, h: claims.Outcome("m1", REPRODUCED)), "here"),
           (Claim("second", lambda s, h: claims.Outcome("m2", INCONCLUSIVE, seeds=2)), "here")]
    assert verdict_text(tmp_path, two) == (
        f"**Claim:** first  \n**Measured (p profile, 3 seeds):** m1  \n**Verdict:** {REPRODUCED}\n\n"
        f"**Claim:** second  \n**Measured (p profile, 2 seeds):** m2  \n**Verdict:** {INCONCLUSIVE}")


def test_every_claim_names_a_distinct_check_and_the_folders_the_pages_write():
    assert [folder for _, folder in book_claims()] == [
        "formulation", "adding_p", "memorization", "histograms", "biased_selection", "synthetic",
        "readings", "real_cifar10", "real_cifar100", "real_20news", "real_fashion_mnist", "prior",
        "standing"]
    assert {c.claim: c.family for c in CLAIMS if c.family} == {       # Fashion-MNIST beside the paper's
        SYNTHETIC_CLAIM: "aaPU vs nnPU (§4)", **{c.claim: "aaPU vs nnPU (§4)" for c in CLAIMS[7:10]},
        CLAIMS[10].claim: "aaPU vs nnPU beyond the paper"}
    assert CLAIMS[10].dataset == "fashion_mnist"


@pytest.mark.parametrize("index,method,baseline", [
    (1, "nnpu+p", "nnpu"), (4, "aapu", "naive"), (5, "aapu", "nnpu"), (7, "aapu", "nnpu"),
    (8, "aapu", "nnpu"), (9, "aapu", "nnpu"), (10, "aapu", "nnpu")])
def test_lower_error_claims_compare_the_right_methods(index, method, baseline):
    o = CLAIMS[index].check({}, steady(-0.02).replace({"aapu": method, "nnpu": baseline}))
    assert o.paired.high < 0 and o.measured.startswith(f"{method} − {baseline}, final test error")


def test_the_summary_shows_the_judged_columns_and_lists_what_was_measured(tmp_path):
    write_page(tmp_path, "synthetic", steady(-0.02), status="run", profile="smoke", n_test=10_000,
               dataset="synthetic")            # (at cpu the committed spread would set the floor)
    table = reproduction_table(tmp_path)
    assert list(claims.shown(table).columns) == ["claim", "seeds", "paired difference", "95 % interval",
                                                 "interval covers", "family", "p (adjusted)", "ruled out",
                                                 "Δ", "verdict"]
    assert claims.shown(table).set_index("claim").loc[SYNTHETIC_CLAIM, "interval covers"] == (
        "training and a test set drawn per seed")
    families = claims.shown(table).set_index("claim").family
    assert families[SYNTHETIC_CLAIM] == "aaPU vs nnPU (§4), 4 claims: a verdict needs ≥ 8 seeds"
    assert claims._family(None, 1) == "alone: a verdict needs ≥ 6 seeds"
    assert families[CLAIMS[0].claim] == "—"                                       # not a comparison
    with_paper = table.assign(**{claims.AT_PAPER: "not run at the paper's settings"})
    assert list(claims.shown(with_paper).columns) == list(claims.shown(table).columns)
    first = claims.answers(with_paper).set_index("claim")           # the answer first, in 3 columns
    assert list(first.columns) == [claims.AT_PAPER, "this build"]
    row = first.loc[SYNTHETIC_CLAIM]
    assert row[claims.AT_PAPER] == "not run at the paper's settings"
    assert row["this build"].startswith("descriptive only: 6 seeds; a family of 4 needs 8; -0.0200 [")
    assert row["this build"].endswith(" simultaneous (6 seeds, smoke)")
    text = claims.measured_text(table)
    assert text.count("\n") == len(table) - 1 and all(line.startswith("- **") for line in text.split("\n"))
    assert (f"- **{SYNTHETIC_CLAIM}** (smoke profile; interval: training and a test set drawn per seed, "
            "floor 0.0002): aapu − nnpu, final test error: -0.0200") in text
    assert f"- **{CLAIMS[0].claim}** (— profile): — (page not executed)" in text


def test_judging_reads_the_test_size_and_the_family_from_their_sources(tmp_path):
    check = lower_error("aapu", "nnpu")
    tiny = steady(-0.00005, noise=(0, 0, 0, 0, 0, 0)).assign(   # baseline 0.0002: Δ is 3 test points
        test_error=lambda h: h.test_error * 0.001)
    write_page(tmp_path, "a", tiny, status="run", profile="cpu", dataset="x", n_test=1000)
    write_page(tmp_path, "b", steady(-0.02), status="run", profile="cpu", dataset="x", n_test=1000)
    alone = [(Claim("one", check), "a"), (Claim("two", check), "b")]       # no family: each alone
    judged = claims.judge_claims(tmp_path, alone)
    assert judged[0][1].judged.margin == pytest.approx(0.003) and judged[1][1].judged.adjustment == ""
    table = claims.reproduction_table(tmp_path, alone)
    assert list(table.floor) == ["0.0020", "0.0020"]
    assert list(table["p (adjusted)"]) == ["t 0.000, exact 0.031", "t 0.000, exact 0.031"]
    text = verdict_text(tmp_path, alone[1:])
    assert "floor 0.0020 (2 test points)" in text
    assert "**Measured (cpu profile, 6 seeds):**" in text


def test_two_seeds_get_an_interval_and_one_seed_is_singular(tmp_path):
    write_page(tmp_path, "two", steady(-0.02, seeds=2), status="run", profile="cpu")
    write_page(tmp_path, "one", steady(-0.02, seeds=1), status="run", profile="cpu")
    check = lower_error("aapu", "nnpu")
    table = claims.reproduction_table(tmp_path, [(Claim("c", check), "two"), (Claim("d", check), "one")])
    two, one = table.to_dict("records")
    assert two["95 % interval"].startswith("[") and two["p (adjusted)"].startswith("t ")
    assert two["ruled out"].startswith("gains above")
    assert (one["95 % interval"], one["p (adjusted)"]) == ("—", "—")
    assert "**Measured (cpu profile, 1 seed):**" in verdict_text(tmp_path, [(Claim("d", check), "one")])


def test_unpaired_seeds_are_named_after_the_measurement():
    h = steady(-0.02)
    o = lower_error("aapu", "nnpu")({}, h[~((h.method == "aapu") & (h.seed == 5))])
    assert o.measured.startswith("aapu − nnpu, final test error: -0.0") and "left out" in o.measured


def test_a_shared_test_split_with_per_point_errors_is_covered_and_wider(tmp_path):
    """20 News with each run's final per-point errors kept (through the results CSV): the
    interval covers the test set's sampling, wider than the same runs' seeds-only one where
    points are persistently hard for one method; the synthetic page, whose seeds draw their
    own test sets, does not use them."""
    import numpy as np
    import torch
    from pusupport.core.metrics import pack_rows
    rng = np.random.default_rng(0)
    rows = []
    p_base = rng.uniform(0.05, 0.35, 2000)
    p_ours = np.clip(p_base + rng.normal(-0.02, 0.25, 2000), 0, 1)        # points hard for one method
    for seed in range(8):
        u = rng.random(2000)
        base, ours = u < p_base, np.where(rng.random(2000) < 0.8, u, rng.random(2000)) < p_ours
        for method, wrong in (("aapu", ours), ("nnpu", base)):
            rows.append({"method": method, "seed": seed, "epoch": 5, "test_error": wrong.mean(),
                         "test_auc": 0.5, "test_wrong": pack_rows(torch.tensor(wrong))})
    kept = pd.DataFrame(rows)
    news = "20News: aaPU has a lower test error than nnPU (§4, its test-error curves)"
    for folder, hist in (("with", kept), ("without", kept.drop(columns="test_wrong"))):
        write_page(tmp_path / folder, "real_20news", hist, status="run", profile="cpu", n_test=2000,
                   dataset="20news")
    judged = {f: reproduction_table(tmp_path / f).set_index("claim").loc[news] for f in ("with", "without")}
    assert judged["with"]["interval covers"] == "training randomness and the test set's sampling"
    assert judged["without"]["interval covers"] == "training randomness, on this test split held fixed"
    assert judged["with"]["paired difference"] == judged["without"]["paired difference"]
    width = {f: float(np.diff([float(x) for x in j["95 % interval"].split("]")[0].strip("[").split(",")])[0])
             for f, j in judged.items()}
    assert width["with"] > width["without"]
    write_page(tmp_path / "synthetic", "synthetic", kept, status="run", profile="cpu", n_test=2000,
               dataset="synthetic")
    synthetic = reproduction_table(tmp_path / "synthetic").set_index("claim").loc[SYNTHETIC_CLAIM]
    assert synthetic["interval covers"] == "training and a test set drawn per seed"
