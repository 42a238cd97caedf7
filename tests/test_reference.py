"""Committed reference results: the run-to-run spread record, its provenance, and refusal
when stale."""
import json

import pytest

from pusupport.book import reference
from pusupport.book.pages import resolve_page
from pusupport.book.registry import book_pages


def record(fingerprint="abc", spread=0.002):
    prov = reference.provenance("python book/spread.py", 61.0, "bf16 autocast")
    return {"profile": "cpu", "datasets": {"synthetic": {
        "page": "synthetic", "fingerprint": fingerprint, "seeds": 10, "spread": spread,
        "per_seed": 0.003, "mean_shift": 0.001, "threads": [1, 2], "provenance": prov}}}


def test_provenance_names_commit_machine_precision_date_wall_time_and_command():
    prov = reference.provenance("make spread", 12.34, "fp32")
    assert set(prov) == {"commit", "cpu", "cores", "gpu", "torch", "precision", "date",
                         "wall_seconds", "command"}
    assert prov["wall_seconds"] == 12.3 and prov["command"] == "make spread" and prov["precision"] == "fp32"
    assert prov["commit"] and prov["cpu"] and prov["cores"] >= 1


def test_a_records_command_names_no_folder_of_the_machine_that_made_it():
    """Paths inside the checkout are written relative to it, in a new record and in every
    committed one (a build in a folder of that name once showed the maker's on its pages)."""
    from pathlib import Path
    line = reference.command_line("book/spread.py", ["--data-dir", str(reference.ROOT / "data"),
                                                     "--reference", "/elsewhere/results"])
    assert line == "python book/spread.py --data-dir data --reference /elsewhere/results"
    for path in Path(reference.REFERENCE).rglob("*.json"):
        for part in path.read_text().split('"command": ')[1:]:
            command = json.loads(part.split("\n")[0].rstrip(",} "))
            assert not any(w.startswith("/") for w in command.split()), f"{path}: {command}"


def test_provenance_names_the_commit_a_run_started_from_and_the_one_at_its_end(monkeypatch):
    monkeypatch.setattr(reference, "code_commit", lambda: "b" * 40)
    same = reference.provenance("make results", 60.0, "bf16", started="b" * 40)
    assert same["commit"] == "b" * 40 and "commit_at_end" not in same
    moved = reference.provenance("make results", 60.0, "bf16", started="a" * 40)
    assert moved["commit"] == "a" * 40 and moved["commit_at_end"] == "b" * 40


def test_a_record_is_current_while_its_page_s_settings_match(tmp_path):
    root, results = tmp_path / "reference", tmp_path / "results"
    path = reference.spread_path("cpu", root)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(record()))
    assert reference.read_spread(results, "cpu", root)[0]["status"] == "current"      # page not run: kept
    (results / "synthetic").mkdir(parents=True)
    (results / "synthetic" / "summary.json").write_text(json.dumps({"fingerprint": "abc"}))
    rows = reference.read_spread(results, "cpu", root)
    assert rows[0]["spread"] == 0.002 and rows[0]["status"] == "current"
    (results / "synthetic" / "summary.json").write_text(json.dumps({"fingerprint": "other"}))
    rows = reference.read_spread(results, "cpu", root)
    assert rows[0]["status"].startswith("stale (settings changed): recompute with `make spread`")
    table = reference.spread_table(results, "cpu", root)
    assert table.iloc[0].tolist()[:6] == ["synthetic", "synthetic", 10, 0.002, 0.003, "1 vs 2"]
    assert table.iloc[0, -1].startswith("stale")
    assert "`python book/spread.py`" in reference.spread_text(results, "cpu", root)
    assert reference.spread_table(results, "paper", root).empty
    assert reference.read_spread(results, "paper", root) == []
    assert "No run-to-run spread has been measured at the `paper` profile" in reference.spread_text(results, "paper", root)


def test_the_committed_spread_matches_the_code_s_settings():
    """Change a page's settings (or the seeds) and this fails until `make spread` is re-run."""
    path = reference.spread_path("cpu")
    if not path.exists():
        pytest.skip("no spread measured yet")
    for dataset, r in json.loads(path.read_text())["datasets"].items():
        entry = next(e for e in book_pages() if e["page"] == r["page"])
        from pusupport.book.registry import get
        params = {"profile": "cpu", "device": "cpu", "seeds": None, "data_dir": None, "output_dir": "results",
                  "dry_run": 0, "checkpoints": None, "runner": None,
                  **{k: None for k in get(entry["notebook"]).parameters}, **entry["parameters"]}
        page = resolve_page(entry["notebook"], **params)
        assert page.fingerprint() == r["fingerprint"], (
            f"results/reference/cpu/spread.json is stale for {dataset} ({r['page']}'s settings "
            "changed): recompute with `make book && make spread`")
