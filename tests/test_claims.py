"""Results files and the reproduction verdicts, on small hand-made histories."""
import json
import os

import pandas as pd
import pytest

from pusupport.book import claims, records
from pusupport.book.claims import Claim, lower_error, verdict_text
from pusupport.book.experiments.formulation import negative_risk
from pusupport.book.experiments.histograms import LOGISTIC_NNPU, SIGMOID_NNPU, purity
from pusupport.book.experiments.memorization import memorisation as memorisation_check
from pusupport.book.experiments.prior import sensitivity
from pusupport.book.registry import book_claims, reproduction_table

CLAIMS = [c for c, _ in book_claims()]
from pusupport.book.records import atomic_write_text, save_results, summarize, summary_table
from pusupport.book.verdicts import CONTRADICTED, INCONCLUSIVE, NOT_RUN, REPRODUCED


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


def test_atomic_write_replaces_and_leaves_nothing_behind(tmp_path):
    path = tmp_path / "a" / "b.txt"
    atomic_write_text(path, "one")
    atomic_write_text(str(path), "two")
    assert path.read_text() == "two" and os.listdir(path.parent) == ["b.txt"]


def test_failed_atomic_write_keeps_the_old_file_and_removes_the_temporary(tmp_path, monkeypatch):
    path = tmp_path / "b.txt"
    path.write_text("old")
    names = []

    def fail(src, dst):
        names.append(src)
        raise KeyboardInterrupt

    monkeypatch.setattr(records.os, "replace", fail)
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
    assert table.loc["upu", "test_auc"] == "0.5500 ± 0.0000"


def test_lower_error_is_judged_on_the_paired_difference():
    """HISTORY: aaPU − nnPU per seed = −0.20, −0.26, −0.08: mean −0.18, but with 3 seeds the
    95 % t interval [−0.408, +0.048] spans 0."""
    o = lower_error("aapu", "nnpu")({"methods": summarize(HISTORY)}, HISTORY)
    assert (o.seeds, o.verdict) == (3, INCONCLUSIVE)
    assert o.difference == pytest.approx(-0.18)
    assert (o.low, o.high) == pytest.approx((-0.18 - 0.22769, -0.18 + 0.22769), abs=1e-4)
    assert o.measured.startswith("aapu − nnpu, final test error: -0.1800 [-0.4077, +0.0477], sign-flip p")
    # epochs 1–3: nnPU's seed means (0.40, 0.45, 0.35) against aaPU's epoch 3 alone
    assert "mean of the last 3 evaluated epochs: -0.2800 [-0.3883, -0.1717]" in o.measured


def steady(gain, seeds=5, noise=(0.001, -0.002, 0.0, 0.002, -0.001)):
    """aapu = nnpu + gain + small per-seed noise, over 4 epochs (last 3 alike)."""
    rows = []
    for s in range(seeds):
        base = 0.2 + 0.03 * s
        for e in range(1, 5):
            rows += [("nnpu", s, e, base, 0.8), ("aapu", s, e, base + gain + noise[s], 0.8)]
    return history(rows)


def test_lower_error_reproduced_contradicted_and_single_seed():
    check = lower_error("aapu", "nnpu")
    better, worse = check({}, steady(-0.02)), check({}, steady(+0.02))
    assert better.verdict == REPRODUCED and better.high < 0 and better.seeds == 5
    assert worse.verdict == CONTRADICTED and worse.low > 0
    one = check({}, steady(-0.02, seeds=1))
    assert one.verdict == INCONCLUSIVE and "single seed: no interval" in one.measured
    assert check({}, steady(0.0, noise=(0.01, -0.01, 0.0, 0.005, -0.005))).verdict == INCONCLUSIVE


def test_lower_error_uses_the_evaluated_epochs_only():
    """With eval_every, test errors are NaN between evaluations; purity is NaN for nnPU."""
    h = steady(-0.02).assign(purity=float("nan"))
    h.loc[h.epoch.isin([1, 3]), "test_error"] = float("nan")
    h.loc[h.method == "aapu", "purity"] = 0.9
    o = lower_error("aapu", "nnpu")({}, h)
    assert o.seeds == 5 and o.verdict == REPRODUCED
    assert "mean of the last 2 evaluated epochs: -0.0200" in o.measured


def test_lower_error_pairs_only_the_seeds_both_methods_ran():
    h = steady(-0.02)
    h = h[~((h.method == "aapu") & (h.seed == 4))]
    assert lower_error("aapu", "nnpu")({}, h).seeds == 4


def formulation(upu_low, nnpu_low):
    return pd.DataFrame({"method": ["upu", "upu", "nnpu", "nnpu"], "epoch": [1, 2, 1, 2],
                         "risk_negative": [0.5, upu_low, 0.3, nnpu_low]})


def test_negative_risk_claim():
    o = negative_risk({}, formulation(-0.4, -0.1))
    text, ok = o.measured, o.verdict == REPRODUCED
    assert ok and text == "lowest R̂_n per epoch — uPU: -0.400, nnPU: -0.100"
    assert negative_risk({}, formulation(-0.4, -0.2)).verdict == INCONCLUSIVE      # nnPU at half of uPU's
    assert negative_risk({}, formulation(-0.4, -0.199)).verdict == REPRODUCED
    assert negative_risk({}, formulation(0.0, 0.1)).verdict == INCONCLUSIVE        # uPU never below zero
    assert negative_risk({}, formulation(-0.4, -0.5)).verdict == INCONCLUSIVE


def memorisation(final, peak=0.9, first=0.7, shift=0.05):
    """Two noise levels; at 40 % noise validation accuracy first → peak → final (seed means)."""
    rows = []
    for noise, val in ((0.0, [0.2, 0.2, 0.2]), (0.4, [first, peak, final])):
        for seed, d in ((0, -shift), (1, shift)):
            rows += [{"noise": noise, "seed": seed, "epoch": e + 1, "val_accuracy": v + d,
                      "train_accuracy": 0.6 + 0.1 * e + d} for e, v in enumerate(val)]
    return pd.DataFrame(rows)


def test_memorisation_claim():
    o = memorisation_check({}, memorisation(0.8))
    text, ok = o.measured, o.verdict == REPRODUCED
    assert ok
    assert text == ("40% noise: validation accuracy peaks at 0.900 (epoch 2), ends at 0.800; "
                    "training accuracy on noisy labels ends at 0.800")
    assert memorisation_check({}, memorisation(0.9)).verdict == INCONCLUSIVE
    # boundary, exact in binary: a fall of exactly 0.01 (0.02 → 0.01) is not enough
    assert memorisation_check({}, memorisation(0.01, peak=0.02, first=0.015, shift=0)).verdict == INCONCLUSIVE
    assert memorisation_check({}, memorisation(0.0099, peak=0.02, first=0.015, shift=0)).verdict == REPRODUCED


def purity_history(last):
    """Purity is recorded at epochs 1 and 2; test error (eval_every=3) at epoch 3 only."""
    return pd.DataFrame({"method": [LOGISTIC_NNPU] * 3 + [SIGMOID_NNPU],
                         "epoch": [1, 2, 3, 4], "top_k_purity": [0.1, last, None, 0.0],
                         "test_error": [None, None, 0.3, 0.2]})


def test_purity_claim():
    o = purity({"prior": 0.4}, purity_history(0.95))
    text, ok = o.measured, o.verdict == REPRODUCED
    assert ok and text == "nnPU (logistic), epoch 2: top-k purity 95.0% vs π = 0.400"
    assert purity({"prior": 0.4}, purity_history(0.4)).verdict == INCONCLUSIVE
    assert purity({"prior": 0.4}, purity_history(0.41)).verdict == REPRODUCED


def prior_history(aapu_12, nnpu_12, base=0.20, spread=0.01):
    """Final test error at π ×1.2 per method; ×1 at ``base``, ×0.8 0.01 above it."""
    rows = []
    for method, x12 in (("aapu", aapu_12), ("nnpu", nnpu_12)):
        errors = {"×0.8": base + 0.01, "×1": base, "×1.2": x12, "BBE estimate": 0.25}
        for label, err in errors.items():
            rows += [{"method": method, "prior_label": label, "epoch": 9, "seed": s,
                      "test_error": err + d} for s, d in ((0, -spread), (1, spread))]
            rows.append({"method": method, "prior_label": label, "epoch": 8, "seed": 0, "test_error": 0.9})
    return pd.DataFrame(rows)


def test_prior_sensitivity_claim():
    o = sensitivity({}, prior_history(0.25, 0.22))
    text, ok = o.measured, o.verdict == REPRODUCED
    assert text == ("worst extra test error with π off by up to 20 %: aaPU +0.0500, nnPU +0.0200; "
                    "with the BBE estimate: aaPU 0.2500, nnPU 0.2500")
    assert not ok                                             # aaPU costs 0.03 more
    assert sensitivity({}, prior_history(0.225, 0.22)).verdict == REPRODUCED
    assert sensitivity({}, prior_history(0.15, 0.22)).verdict == REPRODUCED
    text = sensitivity({}, prior_history(0.15, 0.17)).measured
    assert "aaPU +0.0100, nnPU +0.0100" in text                # ×0.8 is then the worst
    # boundary, exact in binary: aaPU's cost 0.13 = nnPU's 0.12 + 0.01 still counts as no more
    assert sensitivity({}, prior_history(0.38, 0.37, base=0.25, spread=0)).verdict == REPRODUCED
    assert sensitivity({}, prior_history(0.381, 0.37, base=0.25, spread=0)).verdict == INCONCLUSIVE


def write_page(root, folder, hist, **summary):
    (root / folder).mkdir(parents=True)
    (root / folder / "summary.json").write_text(json.dumps(summary))
    if hist is not None:
        hist.to_csv(root / folder / "history.csv", index=False)


SYNTHETIC_CLAIM = "Synthetic data (§4.1): aaPU has a lower test error than nnPU"


def test_reproduction_table_rows(tmp_path):
    write_page(tmp_path, "synthetic", steady(-0.02), status="run", profile="smoke", methods={})
    write_page(tmp_path, "real_cifar10", None, status="not run", reason="CIFAR-10 is missing",
               profile="paper")
    write_page(tmp_path, "real_20news", None, status="not run")
    write_page(tmp_path, "formulation", formulation(0.1, 0.2).assign(seed=0), status="run",
               profile="cpu", methods={})
    table = reproduction_table(tmp_path)
    assert list(table.columns) == ["claim", "profile", "seeds", "paired difference", "95 % interval",
                                   "verdict", "measured"]
    assert list(table.claim) == [c.claim for c in CLAIMS]
    rows = table.set_index("claim")
    synthetic = rows.loc[SYNTHETIC_CLAIM].to_dict()
    assert {k: synthetic[k] for k in ("profile", "seeds", "paired difference", "verdict")} == {
        "profile": "smoke", "seeds": 5, "paired difference": "-0.0200", "verdict": REPRODUCED}
    assert synthetic["95 % interval"] == "[-0.0220, -0.0180]"
    assert rows.loc[CLAIMS[0].claim].to_dict() == {
        "profile": "cpu", "seeds": 1, "paired difference": "—", "95 % interval": "—",
        "verdict": INCONCLUSIVE, "measured": "lowest R̂_n per epoch — uPU: 0.100, nnPU: 0.200"}
    cifar = rows.loc["CIFAR-10: aaPU has a lower test error than nnPU (Table 2)"].to_dict()
    assert cifar == {"profile": "paper", "seeds": "—", "paired difference": "—", "95 % interval": "—",
                     "verdict": NOT_RUN, "measured": "— (CIFAR-10 is missing)"}
    news = rows.loc["20News: aaPU has a lower test error than nnPU (Table 2)"]
    assert (news.measured, news.profile, news.verdict) == ("— (not run)", "—", NOT_RUN)
    missing = rows.loc["CIFAR-100: aaPU has a lower test error than nnPU (Table 2)"]
    assert (missing.measured, missing.verdict) == ("— (page not executed)", NOT_RUN)
    assert set(table.verdict) <= {REPRODUCED, CONTRADICTED, INCONCLUSIVE, NOT_RUN}


def test_a_single_seed_row_says_it_has_no_interval(tmp_path):
    write_page(tmp_path, "adding_p", steady(-0.3, seeds=1).replace({"aapu": "nnpu+p"}),
               status="run", profile="cpu", methods={})
    row = reproduction_table(tmp_path).set_index("claim").loc[CLAIMS[1].claim]
    assert (row.seeds, row["95 % interval"], row.verdict) == (1, "single seed: no interval", INCONCLUSIVE)


def test_reproduction_table_of_chosen_claims(tmp_path):
    seen = []

    def check(summary, hist):
        seen.append((summary["x"], len(hist)))
        return claims.Outcome("measured it", REPRODUCED)

    write_page(tmp_path, "here", HISTORY, status="run", profile="p", x=7)
    table = claims.reproduction_table(str(tmp_path), [(Claim("c", check), "here")])
    assert table.to_dict("records") == [{"claim": "c", "profile": "p", "seeds": 3,
                                         "paired difference": "—", "95 % interval": "—",
                                         "verdict": REPRODUCED, "measured": "measured it"}]
    assert seen == [(7, len(HISTORY))]


def test_verdict_for_a_page(tmp_path):
    write_page(tmp_path, "synthetic", steady(0.02), status="run", profile="smoke", methods={})
    def verdict_for(root, folder):       # as a page does: its own claims
        return verdict_text(root, [(c, f) for c, f in book_claims() if f == folder])
    text = verdict_for(tmp_path, "synthetic")
    assert text.startswith(f"**Claim:** {SYNTHETIC_CLAIM}  \n**Measured (smoke profile, 5 seeds):** "
                           "aapu − nnpu, final test error: +0.0200 [+0.0180, +0.0220], "
                           "sign-flip p = 0.062")
    assert text.endswith(f"**Verdict:** {CONTRADICTED}")
    assert verdict_for(tmp_path, "no_such_page") == ""
    assert verdict_for(tmp_path, "prior") == (
        f"**Claim:** {CLAIMS[-1].claim}  \n**Measured (— profile, — seeds):** — (page not executed)  \n"
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
        "real_cifar10", "real_cifar100", "real_20news", "real_fashion_mnist", "prior"]


@pytest.mark.parametrize("index,method,baseline", [
    (1, "nnpu+p", "nnpu"), (4, "aapu", "naive"), (5, "aapu", "nnpu"), (6, "aapu", "nnpu"),
    (7, "aapu", "nnpu"), (8, "aapu", "nnpu"), (9, "aapu", "nnpu")])
def test_lower_error_claims_compare_the_right_methods(index, method, baseline):
    o = CLAIMS[index].check({}, steady(-0.02).replace({"aapu": method, "nnpu": baseline}))
    assert o.verdict == REPRODUCED and o.measured.startswith(f"{method} − {baseline}, final test error")
