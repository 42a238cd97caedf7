"""The README's command for a short GPU allocation, at `smoke` on the CPU, end to end: seeds
trained in two processes sharing the device, committed as a part, shown by the page's
section; the runs the two processes shared equal the same runs trained in one process; a
part that could not join them is refused before it trains."""
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

from pusupport.book import committed as cm
from test_datasets import DATA, need

ROOT = Path(__file__).resolve().parents[1]


def _results(tmp_path, out: str, *args, threads: str = "2", refused: bool = False):
    env = {**os.environ, "OMP_NUM_THREADS": threads, "PYTHONPATH": str(ROOT), "TQDM_DISABLE": "1"}
    cmd = [sys.executable, str(ROOT / "book" / "results.py"), "--pages", "real_cifar10", "--profile",
           "smoke", "--device", "cpu", "--data-dir", DATA, "--output-dir", str(tmp_path / out),
           "--reference", str(tmp_path / f"{out}-reference"), *args]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert (done.returncode != 0) == refused, done.stderr[-3000:]
    return done.stderr if refused else done.stdout


def test_seeds_trained_by_processes_sharing_a_device_are_committed_shown_and_equal_one_process(tmp_path):
    need(DATA is not None and (Path(DATA) / "cifar10-jpeg").is_dir(), "CIFAR-10 (cifar10-jpeg/)")
    said = _results(tmp_path, "shared", "--seeds", "1", "2", "--share", "2")
    assert "read from the run store, not trained again" in said      # the helper trained a seed
    found = cm.committed("real_cifar10", "smoke", tmp_path / "shared-reference")
    assert found.current and list(found.parts) == ["seeds-1_2"]
    part = found.parts["seeds-1_2"]
    assert part["layout"] == "seeds one by one, 2 processes sharing the device"
    assert part["data_source"]["name"] == "cifar10" and len(part["training_code"]) == 16
    assert f"2 of {found.planned} seeds" in found.line() and "descriptive only" in found.verdict()
    # the same seeds in one process, one thread (as each of the two processes ran): equal
    _results(tmp_path, "alone", "--seeds", "1", "2", threads="1")
    alone = cm.committed("real_cifar10", "smoke", tmp_path / "alone-reference").history
    pd.testing.assert_frame_equal(found.history.drop(columns="wall_time"), alone.drop(columns="wall_time"))
    # a seed committed already: refused before any training, naming the part to remove
    stored = sorted((tmp_path / "shared").rglob("*"))
    said = _results(tmp_path, "shared", "--seeds", "2", "3", refused=True)
    assert "seeds [2] are committed already (part seeds-1_2)" in said
    assert sorted((tmp_path / "shared").rglob("*")) == stored        # nothing trained for seed 3


def test_a_copy_that_cannot_name_its_commit_starts_nothing(tmp_path, monkeypatch, capsys):
    """On a GPU machine's copy without .git and without PUSUPPORT_COMMIT, a part would be
    recorded as trained by commit "unknown": the command refuses before any work."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("results_script", ROOT / "book" / "results.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    monkeypatch.setattr(script, "code_commit", lambda: "unknown")
    monkeypatch.setattr(script, "_page", lambda *a: (_ for _ in ()).throw(AssertionError("work began")))
    assert script.main(["--pages", "real_cifar10", "--profile", "smoke", "--output-dir", str(tmp_path),
                        "--reference", str(tmp_path / "reference")]) == 2
    assert "set PUSUPPORT_COMMIT=<the commit you copied>" in capsys.readouterr().err
