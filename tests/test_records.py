"""What a page prints of its results: paths as a reader's own, and the means read in words."""
from pathlib import Path

from pusupport.book.records import READ, reading, shown_path


def test_a_path_is_shown_from_the_page_s_folder_else_from_home_never_a_machine_s_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path.parent))
    assert shown_path(tmp_path / "results" / "runs") == "results/runs"
    assert shown_path(tmp_path) == "."
    assert shown_path("results") == "results"                         # relative: read from the folder
    other = tmp_path.parent / f"{tmp_path.name}-other" / "data"
    assert shown_path(other) == str(Path("~") / f"{tmp_path.name}-other" / "data")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert shown_path(other) == str(other.resolve())                 # neither: as it is


def _means(**methods):
    return {"methods": {m: {k: {"mean": v} for k, v in zip(READ, vals)} for m, vals in methods.items()}}


def test_a_reading_verbatim_when_error_and_ranking_disagree_and_agree():
    assert reading(_means(aapu=(0.125, 0.75, 0.5), nnpu=(0.25, 0.875, 0.625))) == (
        "On the seeds' means (not a verdict: the verdict says whether a gap is beyond noise), aaPU "
        "has, against nnPU: better test error (0.1250 against 0.2500); worse ROC AUC (0.7500 against "
        "0.8750); worse average precision (0.5000 against 0.6250). Error and ranking disagree: aaPU's "
        "lower error comes from where its threshold falls, not from ordering the test points better. "
        "Whether aaPU's gain is only a shifted threshold is what nnPUSB tests on \"Where aaPU stands\".")
    assert reading(_means(nnpu=(0.25, 0.75, 0.5), upu=(0.125, 0.875, 0.625)), "nnpu", "upu") == (
        "On the seeds' means (not a verdict: the verdict says whether a gap is beyond noise), nnPU "
        "has, against uPU: worse test error (0.2500 against 0.1250); worse ROC AUC (0.7500 against "
        "0.8750); worse average precision (0.5000 against 0.6250). Error and ranking agree: uPU both "
        "orders the test points better and thresholds them better.")
    assert reading({"methods": {"aapu": {}, "nnpu": {}}}) == ""
