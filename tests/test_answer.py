"""The summary's answer: each data set's comparisons judged as one family, from the
committed records and the readings page, and sentences that say only what the verdicts allow."""
import numpy as np
import pandas as pd

from pusupport.book.answer import (AT_THE_PAPERS_SCALE, BOTH_AT_ONE, CLAMP_AT_ONE, CLAMPED_AT_ONE, GROWING, THE_CLAMP,
                                   answer_table, answer_text, decomposition, judge_family)
from pusupport.book.verdicts import CONTRADICTED, INCONCLUSIVE, REPRODUCED, RULED_OUT, judge_jointly, paired_difference


#: The summary of a synthetic page: its seeds draw their own test sets of 10,000 points.
SYNTHETIC = {"dataset": "synthetic", "n_test": 10_000}


def _readings(both_gap: float, seeds=range(10)) -> pd.DataFrame:
    """Final rows of the six runs the clamp's comparisons read (one epoch, per seed): both
    rules, and the clamp with S never re-picked."""
    rng = np.random.default_rng(0)
    rows = []
    for s in seeds:
        base = 0.065 + 0.002 * rng.standard_normal()
        errors = {"nnpu": base, "aapu": base + 0.001, "nnpu correction=clamp": base - 0.011,
                  "aapu correction=clamp": base - 0.011 + both_gap + 0.0005 * rng.standard_normal(),
                  f"nnpu {GROWING}": base - 0.011, f"aapu {GROWING}": base - 0.011 + 0.0005 * rng.standard_normal()}
        rows += [{"method": m, "seed": s, "epoch": 1000, "test_error": e, "test_auc": 0.99,
                  # nnPU's runs are also scored at nnPUSB's threshold, where the clamp gains less
                  "test_error:nnpusb": e - 0.02 + (0.008 if "clamp" in m else 0) if m.startswith("nnpu") else np.nan}
                 for m, e in errors.items()]
    return pd.DataFrame(rows)


def test_a_family_is_judged_jointly_on_the_seeds_its_runs_share():
    history = _readings(0.0)
    family = judge_family(history, THE_CLAMP, SYNTHETIC)
    held = [c for c in THE_CLAMP if not (c.run.startswith("aapu") and c.column != "test_error")]
    assert CLAMPED_AT_ONE not in [c.label for c in held]            # aaPU's runs hold no view here
    assert list(family.label) == [c.label for c in held]
    finals = history.set_index(["method", "seed"])
    paireds = [paired_difference(finals[c.column][c.run], finals[c.baseline_column][c.baseline]) for c in held]
    margins = [0.1 * finals[c.baseline_column][c.baseline].mean() for c in held]
    expected = judge_jointly(paireds, margins, [2 / 10_000] * len(held))
    assert list(family.verdict) == [j.verdict for j in expected]
    assert np.allclose(family.low, [j.low for j in expected]) and family.seeds.eq(10).all()
    assert family.verdict.iloc[0] == REPRODUCED                       # the clamp lowers nnPU's error
    # a comparison whose runs or column the history lacks is left out, not guessed
    assert judge_family(history.drop(columns="test_error:nnpusb"), AT_THE_PAPERS_SCALE,
                        SYNTHETIC).label.tolist() == ["aaPU − nnPU"]
    assert BOTH_AT_ONE not in judge_family(history, AT_THE_PAPERS_SCALE, SYNTHETIC).label.tolist()  # aaPU's view absent
    without = history[~history.method.str.endswith(GROWING)]
    assert judge_family(without, THE_CLAMP, SYNTHETIC).label.tolist() == [c.label for c in held[:5]]
    # a column some seeds lack (parts from before and after it existed) is left out, not averaged
    part = history.copy()
    part.loc[(part.method == "nnpu") & (part.seed < 3), "test_error:nnpusb"] = np.nan
    assert CLAMP_AT_ONE not in judge_family(part, THE_CLAMP, SYNTHETIC).label.tolist()
    clamp = family.set_index("label").difference
    assert abs(clamp[CLAMP_AT_ONE] - clamp["the clamp in nnPU"] - 0.008) < 1e-9


def test_a_record_scoring_both_methods_at_one_threshold_splits_the_difference():
    """aaPU's difference at its own threshold, less the same with both at nnPUSB's: the
    threshold's part. Here aaPU's own threshold costs it 0.006 and the rankings are equal."""
    rng = np.random.default_rng(1)
    rows = []
    for s in range(10):
        base = 0.065 + 0.002 * rng.standard_normal()
        common = base - 0.004 + 0.0003 * rng.standard_normal()
        rows += [{"method": "nnpu", "seed": s, "epoch": 9, "test_error": base,
                  "test_error:nnpusb": common, "test_auc": 0.99},
                 {"method": "aapu", "seed": s, "epoch": 9, "test_error": base + 0.006,
                  "test_error:nnpusb": common + 0.0003 * rng.standard_normal(), "test_auc": 0.99}]
    family = judge_family(pd.DataFrame(rows), AT_THE_PAPERS_SCALE, SYNTHETIC)
    assert family.label.tolist() == [c.label for c in AT_THE_PAPERS_SCALE]
    assert (family.AP == "not recorded").all()                         # a history without test_ap
    table = family.assign(data="synthetic", **{"data set": "synthetic"}, source="test")
    split = decomposition(table).iloc[0]
    own, one = (table.set_index("label")["difference"][k] for k in ("aaPU − nnPU", BOTH_AT_ONE))
    assert split["the threshold's part"] == f"{own - one:+.4f}" and abs(own - one - 0.006) < 0.001
    assert split["both at one threshold (ranking)"].startswith(f"{one:+.4f} [")
    assert decomposition(table[table.label != BOTH_AT_ONE]).empty       # an older record: no split


def test_the_answer_says_of_s_only_what_the_verdict_allows():
    claimed = {"synthetic": "a gain of Δ ruled out: no gain of Δ = 0.0065 or more — Re-judged …"}

    def said(both_gap):
        family = judge_family(_readings(both_gap), THE_CLAMP, SYNTHETIC)
        table = family.assign(data="synthetic", **{"data set": "synthetic"}, source="test")
        return table, answer_text(table, claimed)
    table, text = said(-0.011)                                        # S adds a gain under one rule
    assert table.set_index("label").verdict["aaPU − nnPU, both clamped"] == REPRODUCED
    assert "under one rule S still adds a gain shown" in text
    table, text = said(0.0)
    assert table.set_index("label").verdict["aaPU − nnPU, both clamped"] in (RULED_OUT, INCONCLUSIVE)
    assert "S still adds" not in text and "the clamp alone moves nnPU by -0.01" in text
    table, text = said(0.02)                                          # S raises the error
    assert table.set_index("label").verdict["aaPU − nnPU, both clamped"] == CONTRADICTED
    assert "under one rule S raises aaPU's error, shown" in text and "S still adds" not in text
    assert answer_text(pd.DataFrame(), claimed).startswith("Nothing to answer from yet")


def test_the_records_answer_covers_the_test_set_and_the_threshold(tmp_path):
    """On the committed 20 News record: every threshold comparison (re-run so that aaPU too
    is scored at nnPUSB's threshold, its histories equal to the run before), their intervals
    covering the test set's sampling (per-point errors kept); no readings page here."""
    table = answer_table(tmp_path)
    news = table[(table.data == "real_20news") & (table.source == "committed at the paper's settings")]
    news = news.set_index("label")
    assert list(news.index) == [c.label for c in AT_THE_PAPERS_SCALE]
    assert abs(news.difference[BOTH_AT_ONE]) < 0.001 < -news.difference["aaPU − nnPU"]   # the threshold's
    assert (news.seeds == 10).all()
    assert (news["interval covers"] == "training randomness and the test set's sampling").all()
    assert news.difference["nnPU at nnPUSB's threshold − nnPU"] < 0
    assert set(table.data) == {"synthetic", "real_20news", "real_fashion_mnist", "real_cifar10"}
    # average precision beside the ROC AUC, as 20 News and (re-run since) the synthetic record hold it
    assert news.AP["aaPU − nnPU"] == "-0.0043 [-0.0096, +0.0010]"
    assert table[(table.data == "synthetic") & (table.label == "aaPU − nnPU")].AP.item().endswith("]")


def test_each_comparison_page_opens_with_its_part_of_the_answer(tmp_path):
    """Each comparison page shows first — its first cell after the parameters — the summary's
    answer for its data set alone, in the summary's words and from the same records."""
    import re
    import shutil
    from pathlib import Path
    from pusupport.book.answer import page_answer
    from pusupport.book.reference import REFERENCE
    said = page_answer("real_fashion_mnist", tmp_path)
    assert said.startswith("**Does aaPU's selection help?**") and "Fashion-MNIST: a gain of Δ ruled out" in said
    assert "+0.0321 [+0.0250, +0.0391], higher, shown" in said and "ROC AUC" in said
    assert "20 News" not in said and "CIFAR-10" not in said
    assert "the clamp alone moves nnPU by -0.0109" in page_answer("synthetic", tmp_path)
    alone = tmp_path / "reference"                                    # no clamp record beside it
    shutil.copytree(REFERENCE / "paper" / "synthetic", alone / "paper" / "synthetic")
    assert page_answer("synthetic", tmp_path, alone).endswith("is judged on the readings page.")
    assert page_answer("real_cifar100", tmp_path) == ""                # nothing committed
    for notebook in ("synthetic", "real_data"):
        text = (Path(__file__).resolve().parents[1] / "notebooks" / f"{notebook}.md").read_text()
        cells = re.findall(r"```\{code-cell\} ipython3\n(.*?)```", text, re.S)
        first = next(i for i, c in enumerate(cells) if c.startswith(":tags: [parameters"))
        assert "page_answer(page.name" in cells[first + 1], notebook


def test_the_readme_says_what_the_records_judge():
    """The README's answer is :func:`readme_answer` of the committed records, word for word
    (`make readme` rewrites it); its numbers are the summary's family's."""
    import subprocess
    import sys
    from pathlib import Path
    from pusupport.book.answer import readme_answer
    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "book"))
    from readme import section
    text = (root / "README.md").read_text()
    start, end = section(text)
    assert text[start:end].strip() == readme_answer(), "the README's answer is stale: run `make readme`"
    table = answer_table(root / "no build")
    row = table[(table.data == "synthetic") & (table.label == "aaPU − nnPU")].iloc[0]
    assert f"{row.difference:+.4f}".replace("-", "−") in text[start:end]
    broken = subprocess.run([sys.executable, "-c", "import readme; readme.section('no markers')"],
                            cwd=root / "book", capture_output=True, text=True)
    assert broken.returncode != 0 and "lacks the markers" in broken.stderr
