"""The own-data page, run by papermill on a folder of greyscale digits (smoke profile)."""
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import torch

from test_own_data import digit_folder

ROOT = Path(__file__).resolve().parent.parent


def page_command(tmp_path, *params, profile="smoke", out="out"):
    import jupytext
    import nbformat
    nb = tmp_path / "in.ipynb"
    nbformat.write(jupytext.read(ROOT / "notebooks" / "own_data.md"), nb)
    return [sys.executable, "-m", "papermill", str(nb), str(tmp_path / f"{out}.ipynb"),
            "-k", "python3", "-p", "profile", profile, "-p", "device", "cpu",
            "-p", "output_dir", str(tmp_path / out), "-p", "data_dir",
            str(tmp_path / "data"), *params, "--cwd", str(ROOT)]


ENV = {**os.environ, "OMP_NUM_THREADS": "1", "TQDM_DISABLE": "1"}


def run_page(tmp_path, *params, **where):
    return subprocess.run(page_command(tmp_path, *params, **where), capture_output=True, text=True,
                          env=ENV)


def test_the_page_runs_on_a_digit_folder(tmp_path):
    folder = digit_folder(tmp_path / "digits", per_class=300)
    run = run_page(tmp_path, "-p", "image_folder", str(folder), "-y", "positive_classes: [0, 2]")
    assert run.returncode == 0, run.stderr[-3000:]
    summary = json.loads((tmp_path / "out" / "own_data" / "summary.json").read_text())
    assert summary["status"] == "run" and summary["prior_estimate"]["method"] == "BBE"
    assert (tmp_path / "out" / "own_data" / "model.pt").is_file()
    assert (tmp_path / "out" / "own_data" / "selected_images.png").is_file()


def test_a_missing_folder_is_a_dataset_not_found_error(tmp_path):
    run = run_page(tmp_path, "-p", "image_folder", str(tmp_path / "nope"), "-y", "positive_classes: [0]")
    said = run.stderr + run.stdout
    assert run.returncode != 0 and "DatasetNotFoundError" in said
    assert "image_folder=<folder>" in said and "download=True" not in said


def three_classes(tmp_path) -> tuple:
    """A 300-row table of three classes in two features; the page's parameters for it."""
    import numpy as np
    import pandas as pd
    rng = np.random.default_rng(0)
    y = np.arange(300) % 3
    pd.DataFrame({"a": rng.normal(y, 0.5), "b": rng.normal(-y, 0.5), "y": y}).to_csv(tmp_path / "t.csv", index=False)
    return ("-p", "features", str(tmp_path / "t.csv"), "-p", "label_column", "y",
            "-y", "positive_classes: [2]", "-y", "model: {name: mlp, width: 0.25}")


def test_the_page_runs_on_a_feature_table_with_a_given_prior(tmp_path):
    run = run_page(tmp_path, *three_classes(tmp_path), "-p", "prior", "0.33")
    assert run.returncode == 0, run.stderr[-3000:]
    summary = json.loads((tmp_path / "out" / "own_data" / "summary.json").read_text())
    assert summary["status"] == "run" and summary["prior"] == 0.33 and summary["prior_estimate"] is None


def test_the_page_trains_vpu_with_no_prior_and_estimates_none(tmp_path):
    run = run_page(tmp_path, *three_classes(tmp_path), "-p", "method", "vpu")
    assert run.returncode == 0, run.stderr[-3000:]
    summary = json.loads((tmp_path / "out" / "own_data" / "summary.json").read_text())
    assert summary["prior_estimate"] is None and summary["methods"].keys() == {"vpu"}
    said = cell_text(tmp_path / "out.ipynb")
    assert "π is not used: VPU needs none" in said and "BBE" not in said


def kill_page(proc):
    """SIGKILL papermill and its kernel: the kernel runs in a session of its own, so
    killing papermill's group alone leaves it training (and checkpointing) for a while."""
    import psutil
    papermill = psutil.Process(proc.pid)
    for child in papermill.children(recursive=True):
        child.kill()
    papermill.kill()
    proc.wait()


def cell_text(notebook: Path) -> str:
    import nbformat
    nb = nbformat.read(notebook, as_version=4)
    return "\n".join(o.get("text", "") + o.get("data", {}).get("text/markdown", "")
                     for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))


def test_the_page_at_paper_resumes_a_killed_run_to_the_same_model(tmp_path):
    """At `paper` the page checkpoints its aaPU run; killed after its first checkpoint
    (kernel and all), the same command resumes it from that checkpoint, says so, and
    saves the model an uninterrupted page saves."""
    import time
    import numpy as np
    import pandas as pd
    from pusupport.apps.saved import load_model
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 6000)
    pd.DataFrame(rng.normal(y[:, None], 1.0, (6000, 20)), columns=[f"f{i}" for i in range(20)]).assign(
        label=y).to_csv(tmp_path / "t.csv", index=False)
    params = ("-p", "features", str(tmp_path / "t.csv"), "-y", "positive_classes: [1]",
              "-p", "prior", "0.4")
    proc = subprocess.Popen(page_command(tmp_path, *params, profile="paper"), env=ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    checkpoints = tmp_path / "out" / "own_data" / "checkpoints"
    deadline = time.time() + 300
    while not list(checkpoints.glob("*.pt")) and time.time() < deadline and proc.poll() is None:
        time.sleep(0.01)
    kill_page(proc)
    assert proc.returncode == -signal.SIGKILL, "the page finished before it could be killed"
    assert not (tmp_path / "out" / "own_data" / "model.pt").exists()
    [saved] = checkpoints.glob("*.pt")
    epoch = torch.load(saved, weights_only=False)["epoch"]
    time.sleep(2)                                   # nothing is left running to move it on
    assert torch.load(saved, weights_only=False)["epoch"] == epoch
    again = run_page(tmp_path, *params, profile="paper")
    assert again.returncode == 0, again.stderr[-3000:]
    said = cell_text(tmp_path / "out.ipynb")
    assert f"resumed from epoch {epoch} of 50" in said, said[-3000:]
    straight = run_page(tmp_path, *params, profile="paper", out="straight")
    assert straight.returncode == 0, straight.stderr[-3000:]
    a = load_model(tmp_path / "out" / "own_data" / "model.pt").model.state_dict()
    b = load_model(tmp_path / "straight" / "own_data" / "model.pt").model.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_the_page_takes_pu_data_as_they_come(tmp_path):
    """A folder of labelled positives beside an unlabelled pool (no positive_classes): π
    estimated, never read from labels; the pool ranked into pool_ranking.csv; no test split,
    so no test error and no purity claimed."""
    import shutil
    import pandas as pd
    folder = digit_folder(tmp_path / "digits", per_class=60)
    pu = tmp_path / "pu"
    for k in range(4):
        for i, image in enumerate(sorted((folder / "train" / str(k)).glob("*.png"))):
            where = "labeled" if k in (0, 2) and i < 20 else "unlabeled"
            (pu / where).mkdir(parents=True, exist_ok=True)
            shutil.copy(image, pu / where / f"{k}_{i}.png")
    run = run_page(tmp_path, "-p", "image_folder", str(pu))
    assert run.returncode == 0, run.stderr[-3000:]
    out = tmp_path / "out" / "own_data"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["true_prior"] is None and summary["prior_estimate"]["method"] == "BBE"
    ranking = pd.read_csv(out / "pool_ranking.csv")
    assert len(ranking) == 200 and ranking.score.is_monotonic_decreasing
    assert set(ranking.id) == {str(p) for p in (pu / "unlabeled").glob("*.png")}
    text = (tmp_path / "out.ipynb").read_text()
    assert "PU data (labelled positives beside an unlabelled pool; every row of both is used" in text
    assert "there is no labelled test split, so no test error" in text and "truly positive" not in text
