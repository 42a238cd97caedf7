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


def test_a_history_s_float32_columns_are_written_short_and_read_back_number_for_number():
    """Columns whose every value is a float32 (NaN included) are written in float32's
    shortest digits and read back to the same float64 numbers; others keep every digit."""
    import io

    import numpy as np
    import pandas as pd
    from pusupport.book.records import history_csv, read_history
    rng = np.random.default_rng(0)
    risk = rng.normal(size=50).astype(np.float32).astype(np.float64)
    risk[[3, 7]] = [np.nan, float(np.float32(3e-39))]                 # a NaN, a subnormal
    history = pd.DataFrame({"method": "aapu", "seed": 0, "epoch": np.arange(1, 51), "risk": risk,
                            "test_error": rng.integers(0, 7, 50) / 7, "never": np.nan,
                            "purity": np.float32(0.1).item()})
    text, float32 = history_csv(history)
    assert float32 == ["risk", "never", "purity"]
    assert len(text) < 0.85 * len(history.to_csv(index=False)) and ",0.1\n" in text
    back = read_history(io.StringIO(text), float32)
    assert back.equals(history) and list(back.dtypes) == list(history.dtypes)
    assert not read_history(io.StringIO(text)).equals(history)        # read as written: other numbers
    assert history_csv(history[["method", "epoch"]]) == (history[["method", "epoch"]].to_csv(index=False), [])


def test_a_column_whose_short_digits_would_not_read_back_keeps_every_digit(monkeypatch):
    """The check after writing: were a float32 column's short digits read back as another
    number (say, a reader rounding differently), that column is written again in full."""
    import io

    import numpy as np
    import pandas as pd
    from pusupport.book import records
    history = pd.DataFrame({"epoch": [1, 2], "risk": [np.float32(0.1).item(), np.float32(0.2).item()],
                            "purity": [0.5, 0.25]})
    real = records.read_history

    def misread(path, float32=()):                  # the short digits of "risk" read back wrong
        back = real(path, float32)
        return back.assign(risk=back.risk + 1) if "risk" in float32 else back
    monkeypatch.setattr(records, "read_history", misread)
    text, float32 = records.history_csv(history)
    assert float32 == ["purity"] and real(io.StringIO(text), float32).equals(history)
