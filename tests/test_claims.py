"""Results files and the reproduction verdicts, on small hand-made histories."""
import json
import os

import pandas as pd
import pytest

from pusupport import claims, records
from pusupport.claims import CLAIMS, Claim, lower_error, reproduction_table, verdict_for
from pusupport.records import atomic_write_text, compare, save_results, summarize, summary_table


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


def methods(**m):
    """method=(mean error, std, seeds)."""
    return {"methods": {k: {"n_seeds": n, "test_error": {"mean": mean, "std": std},
                            "test_auc": {"mean": 1 - mean, "std": std}} for k, (mean, std, n) in m.items()}}


def test_compare_better():
    c = compare(summarize_dict := {"methods": summarize(HISTORY)}, "aapu", "nnpu")
    assert summarize_dict["methods"]["aapu"]["n_seeds"] == 3
    assert c["verdict"] == "better" and c["gap"] == pytest.approx(0.18)
    assert c["noise"] == pytest.approx(0.1 / 3 ** 0.5)
    assert (c["method"], c["baseline"], c["metric"]) == ("aapu", "nnpu", "test_error")
    assert c["text"] == "aapu: 0.1200 ± 0.0200, nnpu: 0.3000 ± 0.1000 (3 seeds) — aapu is better by 0.1800"


def test_compare_worse_and_the_seed_count_is_the_smaller_one():
    c = compare(methods(a=(0.5, 0.1, 4), b=(0.2, 0.05, 9)), "a", "b")
    assert c["verdict"] == "worse" and c["gap"] == pytest.approx(-0.3) and c["noise"] == pytest.approx(0.05)
    assert c["text"] == "a: 0.5000 ± 0.1000, b: 0.2000 ± 0.0500 (4 seeds) — a is worse by 0.3000"


@pytest.mark.parametrize("gap_sign", [1, -1])
def test_compare_gap_equal_to_the_noise_is_no_clear_difference(gap_sign):
    # noise = max(0.2, 0.1) / √4 = 0.1, gap = ±0.1 exactly
    c = compare(methods(a=(0.5 - gap_sign * 0.1, 0.2, 4), b=(0.5, 0.1, 4)), "a", "b")
    assert c["noise"] == 0.1 and abs(c["gap"]) == pytest.approx(0.1)
    c = compare(methods(a=(0.25 - gap_sign * 0.125, 0.25, 4), b=(0.25, 0.0, 4)), "a", "b")
    assert (c["gap"], c["noise"]) == (gap_sign * 0.125, 0.125)
    assert c["verdict"] == "no clear difference"
    assert c["text"].endswith("(4 seeds) — no clear difference")


def test_compare_just_beyond_the_noise_decides():
    assert compare(methods(a=(0.124, 0.25, 4), b=(0.25, 0.0, 4)), "a", "b")["verdict"] == "better"
    assert compare(methods(a=(0.376, 0.25, 4), b=(0.25, 0.0, 4)), "a", "b")["verdict"] == "worse"


def test_compare_uses_the_larger_std_of_either_side():
    assert compare(methods(a=(0.2, 0.0, 4), b=(0.3, 0.3, 4)), "a", "b")["noise"] == 0.15


def test_compare_on_auc_and_with_no_seeds():
    c = compare(methods(a=(0.2, 0.1, 0), b=(0.3, 0.2, 0)), "a", "b", metric="test_auc")
    assert c["metric"] == "test_auc" and c["gap"] == pytest.approx(-0.1) and c["noise"] == 0.2
    assert c["text"] == "a: 0.8000 ± 0.1000, b: 0.7000 ± 0.2000 (0 seeds) — no clear difference"


def test_lower_error_claim_check():
    text, ok = lower_error("aapu", "nnpu")({"methods": summarize(HISTORY)}, HISTORY)
    assert ok and text.endswith("aapu is better by 0.1800")
    text, ok = lower_error("nnpu", "aapu")({"methods": summarize(HISTORY)}, HISTORY)
    assert not ok and text.endswith("nnpu is worse by 0.1800")
    assert not lower_error("aapu", "aapu")({"methods": summarize(HISTORY)}, HISTORY)[1]


def formulation(upu_low, nnpu_low):
    return pd.DataFrame({"method": ["upu", "upu", "nnpu", "nnpu"], "epoch": [1, 2, 1, 2],
                         "risk_negative": [0.5, upu_low, 0.3, nnpu_low]})


def test_negative_risk_claim():
    text, ok = claims._negative_risk({}, formulation(-0.4, -0.1))
    assert ok and text == "lowest R̂_n per epoch — uPU: -0.400, nnPU: -0.100"
    assert not claims._negative_risk({}, formulation(-0.4, -0.2))[1]      # nnPU at half of uPU's
    assert claims._negative_risk({}, formulation(-0.4, -0.199))[1]
    assert not claims._negative_risk({}, formulation(0.0, 0.1))[1]        # uPU never below zero
    assert not claims._negative_risk({}, formulation(-0.4, -0.5))[1]


def memorisation(final, peak=0.9, first=0.7, shift=0.05):
    """Two noise levels; at 40 % noise validation accuracy first → peak → final (seed means)."""
    rows = []
    for noise, val in ((0.0, [0.2, 0.2, 0.2]), (0.4, [first, peak, final])):
        for seed, d in ((0, -shift), (1, shift)):
            rows += [{"noise": noise, "seed": seed, "epoch": e + 1, "val_accuracy": v + d,
                      "train_accuracy": 0.6 + 0.1 * e + d} for e, v in enumerate(val)]
    return pd.DataFrame(rows)


def test_memorisation_claim():
    text, ok = claims._memorisation({}, memorisation(0.8))
    assert ok
    assert text == ("40% noise: validation accuracy peaks at 0.900 (epoch 2), ends at 0.800; "
                    "training accuracy on noisy labels ends at 0.800")
    assert not claims._memorisation({}, memorisation(0.9))[1]
    # boundary, exact in binary: a fall of exactly 0.01 (0.02 → 0.01) is not enough
    assert not claims._memorisation({}, memorisation(0.01, peak=0.02, first=0.015, shift=0))[1]
    assert claims._memorisation({}, memorisation(0.0099, peak=0.02, first=0.015, shift=0))[1]


def purity_history(last):
    """Purity is recorded at epochs 1 and 2; test error (eval_every=3) at epoch 3 only."""
    return pd.DataFrame({"method": ["nnPU, logistic loss"] * 3 + ["nnPU, sigmoid loss"],
                         "epoch": [1, 2, 3, 4], "top_k_purity": [0.1, last, None, 0.0],
                         "test_error": [None, None, 0.3, 0.2]})


def test_purity_claim():
    text, ok = claims._purity({"prior": 0.4}, purity_history(0.95))
    assert ok and text == "nnPU (logistic), epoch 2: top-k purity 95.0% vs π = 0.400"
    assert not claims._purity({"prior": 0.4}, purity_history(0.4))[1]
    assert claims._purity({"prior": 0.4}, purity_history(0.41))[1]


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
    text, ok = claims._prior_sensitivity({}, prior_history(0.25, 0.22))
    assert text == ("worst extra test error with π off by up to 20 %: aaPU +0.0500, nnPU +0.0200; "
                    "with the BBE estimate: aaPU 0.2500, nnPU 0.2500")
    assert not ok                                             # aaPU costs 0.03 more
    assert claims._prior_sensitivity({}, prior_history(0.225, 0.22))[1]
    assert claims._prior_sensitivity({}, prior_history(0.15, 0.22))[1]
    text, _ = claims._prior_sensitivity({}, prior_history(0.15, 0.17))
    assert "aaPU +0.0100, nnPU +0.0100" in text                # ×0.8 is then the worst
    # boundary, exact in binary: aaPU's cost 0.13 = nnPU's 0.12 + 0.01 still counts as no more
    assert claims._prior_sensitivity({}, prior_history(0.38, 0.37, base=0.25, spread=0))[1]
    assert not claims._prior_sensitivity({}, prior_history(0.381, 0.37, base=0.25, spread=0))[1]


def write_page(root, folder, hist, **summary):
    (root / folder).mkdir(parents=True)
    (root / folder / "summary.json").write_text(json.dumps(summary))
    if hist is not None:
        hist.to_csv(root / folder / "history.csv", index=False)


SYNTHETIC_CLAIM = "Synthetic data (§4.1): aaPU has a lower test error than nnPU"


def test_reproduction_table_rows(tmp_path):
    write_page(tmp_path, "synthetic", HISTORY, status="run", profile="smoke",
               methods=summarize(HISTORY))
    write_page(tmp_path, "real_cifar10", None, status="not run", reason="CIFAR-10 is missing",
               profile="paper")
    write_page(tmp_path, "real_20news", None, status="not run")
    write_page(tmp_path, "formulation", formulation(0.1, 0.2), status="run", profile="cpu", methods={})
    table = reproduction_table(tmp_path)
    assert list(table.columns) == ["claim", "measured", "profile", "verdict"]
    assert list(table.claim) == [c.claim for c in CLAIMS]
    rows = table.set_index("claim")
    assert rows.loc[SYNTHETIC_CLAIM].to_dict() == {
        "measured": "aapu: 0.1200 ± 0.0200, nnpu: 0.3000 ± 0.1000 (3 seeds) — aapu is better by 0.1800",
        "profile": "smoke", "verdict": "reproduced"}
    assert rows.loc[CLAIMS[0].claim].to_dict() == {
        "measured": "lowest R̂_n per epoch — uPU: 0.100, nnPU: 0.200", "profile": "cpu",
        "verdict": "not reproduced"}
    cifar = rows.loc["CIFAR-10: aaPU has a lower test error than nnPU (Table 2)"].to_dict()
    assert cifar == {"measured": "— (CIFAR-10 is missing)", "profile": "paper", "verdict": "not run here"}
    news = rows.loc["20News: aaPU has a lower test error than nnPU (Table 2)"].to_dict()
    assert news == {"measured": "— (not run)", "profile": "—", "verdict": "not run here"}
    missing = rows.loc["CIFAR-100: aaPU has a lower test error than nnPU (Table 2)"].to_dict()
    assert missing == {"measured": "— (page not executed)", "profile": "—", "verdict": "not run here"}


def test_reproduction_table_of_chosen_claims(tmp_path):
    seen = []

    def check(summary, hist):
        seen.append((summary["x"], len(hist)))
        return "measured it", True

    write_page(tmp_path, "here", HISTORY, status="run", profile="p", x=7)
    table = reproduction_table(str(tmp_path), [Claim("c", "here", check)])
    assert table.to_dict("records") == [{"claim": "c", "measured": "measured it", "profile": "p",
                                         "verdict": "reproduced"}]
    assert seen == [(7, len(HISTORY))]


def test_verdict_for_a_page(tmp_path):
    write_page(tmp_path, "synthetic", HISTORY, status="run", profile="smoke", methods=summarize(HISTORY))
    assert verdict_for(tmp_path, "synthetic") == (
        f"**Claim:** {SYNTHETIC_CLAIM}  \n**Measured (smoke profile):** aapu: 0.1200 ± 0.0200, "
        "nnpu: 0.3000 ± 0.1000 (3 seeds) — aapu is better by 0.1800  \n**Verdict:** reproduced")
    assert verdict_for(tmp_path, "no_such_page") == ""
    assert verdict_for(tmp_path, "prior") == (
        f"**Claim:** {CLAIMS[-1].claim}  \n**Measured (— profile):** — (page not executed)  \n"
        "**Verdict:** not run here")


def test_verdict_for_a_page_with_two_claims(tmp_path, monkeypatch):
    write_page(tmp_path, "here", HISTORY, status="run", profile="p")
    monkeypatch.setattr(claims, "CLAIMS", [Claim("first", "here", lambda s, h: ("m1", True)),
                                           Claim("other", "there", lambda s, h: ("m0", True)),
                                           Claim("second", "here", lambda s, h: ("m2", False))])
    assert verdict_for(tmp_path, "here") == (
        "**Claim:** first  \n**Measured (p profile):** m1  \n**Verdict:** reproduced\n\n"
        "**Claim:** second  \n**Measured (p profile):** m2  \n**Verdict:** not reproduced")


def test_every_claim_names_a_distinct_check_and_the_folders_the_pages_write():
    assert [c.folder for c in CLAIMS] == [
        "formulation", "adding_p", "memorization", "histograms", "biased_selection", "synthetic",
        "real_cifar10", "real_cifar100", "real_20news", "real_fashion_mnist", "prior"]


@pytest.mark.parametrize("index,method,baseline", [
    (1, "nnpu+p", "nnpu"), (4, "aapu", "naive"), (5, "aapu", "nnpu"), (6, "aapu", "nnpu"),
    (7, "aapu", "nnpu"), (8, "aapu", "nnpu"), (9, "aapu", "nnpu")])
def test_lower_error_claims_compare_the_right_methods(index, method, baseline):
    summary = methods(**{method: (0.1, 0.0, 2), baseline: (0.3, 0.0, 2)})
    text, ok = CLAIMS[index].check(summary, None)
    assert ok and text.startswith(f"{method}: 0.1000 ± 0.0000, {baseline}: 0.3000")
