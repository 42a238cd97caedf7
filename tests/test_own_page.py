"""The own-data page, run by papermill on a folder of greyscale digits (smoke profile)."""
import json
import os
import subprocess
import sys
from pathlib import Path


from test_own_data import digit_folder

ROOT = Path(__file__).resolve().parent.parent


def run_page(tmp_path, *params):
    import jupytext
    import nbformat
    nb = tmp_path / "in.ipynb"
    nbformat.write(jupytext.read(ROOT / "notebooks" / "own_data.md"), nb)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TQDM_DISABLE": "1"}
    return subprocess.run([sys.executable, "-m", "papermill", str(nb), str(tmp_path / "out.ipynb"),
                           "-k", "python3", "-p", "profile", "smoke", "-p", "device", "cpu",
                           "-p", "output_dir", str(tmp_path / "out"), "-p", "data_dir",
                           str(tmp_path / "data"), *params, "--cwd", str(ROOT)],
                          capture_output=True, text=True, env=env)


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


def test_the_page_runs_on_a_feature_table_with_a_given_prior(tmp_path):
    import numpy as np
    import pandas as pd
    rng = np.random.default_rng(0)
    y = np.arange(300) % 3
    pd.DataFrame({"a": rng.normal(y, 0.5), "b": rng.normal(-y, 0.5), "y": y}).to_csv(tmp_path / "t.csv", index=False)
    run = run_page(tmp_path, "-p", "features", str(tmp_path / "t.csv"), "-p", "label_column", "y",
                   "-y", "positive_classes: [2]", "-p", "prior", "0.33", "-y", "model: {name: mlp, width: 0.25}")
    assert run.returncode == 0, run.stderr[-3000:]
    summary = json.loads((tmp_path / "out" / "own_data" / "summary.json").read_text())
    assert summary["status"] == "run" and summary["prior"] == 0.33 and summary["prior_estimate"] is None
