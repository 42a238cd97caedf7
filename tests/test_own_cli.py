"""The `pusupport` command on your own data: train, predict, estimate π, and one clear
line (exit status 2, no traceback) per bad input."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from pusupport.apps import own, reading
from pusupport.apps.cli import main
from pusupport.core.models import predict
from pusupport.apps.saved import load_model
from pusupport.core.training import train

from test_own_data import digit_folder

ENV = {**os.environ, "OMP_NUM_THREADS": "1", "TQDM_DISABLE": "1"}


def pusupport(*args, cwd=None):
    script = Path(sys.executable).with_name("pusupport")
    return subprocess.run([str(script), *map(str, args)], capture_output=True, text=True, env=ENV,
                          cwd=cwd)


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    return digit_folder(tmp_path_factory.mktemp("cli") / "digits", per_class=300)


@pytest.fixture(scope="module")
def trained(digits, tmp_path_factory):
    out = tmp_path_factory.mktemp("model")
    run = pusupport("train", "--images", digits, "--positive", 0, 2, "--out", out / "m.pt",
                    "--epochs", 2, "--estimator-epochs", 2, "--device", "cpu", "--data-dir", out,
                    "--allow-degenerate")       # the wiring, not the estimate (the defaults: test_pu_data)
    assert run.returncode == 0, run.stderr
    return out / "m.pt", run.stdout


def test_train_then_predict_one_row_per_test_image(trained, digits, tmp_path):
    path, log = trained
    assert "BBE: π = " in log and "(interval " in log and f"saved {path}" in log
    said = log.splitlines()                      # the estimate is announced, then set beside the labels'
    assert said[0].startswith("estimating π: BBE and Elkan–Noto, the median over 4 P-vs-U classifiers")
    assert "each trained up to" in said[0] and "kept at its best held-out one" in said[0]
    assert any(line == "(the labels give π = 0.333: with --prior 0.333 the run trains with it instead)"
               for line in said)                 # 300 of U's 900 rows are the labelled classes
    run = pusupport("predict", path, digits / "test", "--csv", tmp_path / "p.csv")
    assert run.returncode == 0, run.stderr
    table = pd.read_csv(tmp_path / "p.csv")
    files = sorted(str(p) for p in (digits / "test").rglob("*.png"))
    assert sorted(table.id) == files and list(table.columns) == ["id", "score", "probability", "predicted"]
    saved = load_model(path)
    assert saved.positive_classes == ["0", "2"] and saved.classes == ["0", "1", "2", "3"]
    x, ids = reading.read_inputs(saved, digits / "test")
    assert np.allclose(table.score, saved.scores(x).numpy(), rtol=1e-5, atol=1e-6)
    assert set(table.predicted) <= {0, 1} and table.probability.between(0, 1).all()


def test_the_saved_model_scores_as_the_model_in_memory(digits, tmp_path):
    mine = reading.load_own(digits, data_dir=tmp_path)
    data = own.build_problem(mine, [0, 2], 20)
    cfg = own.train_config(len(data.x_u), own.default_model(mine), epochs=1, device="cpu",
                           progress=False, autocast="off")
    result = train(data, cfg)
    path = own.save(tmp_path / "m.pt", result, mine, data, [0, 2])
    assert torch.equal(load_model(path).scores(data.x_test), predict(result.model, data.x_test))


def test_features_table_train_predict_and_estimate(tmp_path, capsys):
    rng = np.random.default_rng(0)
    y = np.arange(200) % 3
    table = pd.DataFrame({"a": rng.normal(y, 0.5), "b": rng.normal(-y, 0.5), "y": y})
    table.to_csv(tmp_path / "t.csv", index=False)
    assert main(["train", "--features", str(tmp_path / "t.csv"), "--label-column", "y", "--positive",
                 "2", "--out", str(tmp_path / "m.pt"), "--epochs", "2", "--prior", "0.3", "--device", "cpu",
                 "--allow-degenerate"]) == 0
    assert main(["predict", str(tmp_path / "m.pt"), str(tmp_path / "t.csv"), "--csv", str(tmp_path / "p.csv")]) == 0
    assert len(pd.read_csv(tmp_path / "p.csv")) == 200
    capsys.readouterr()
    assert main(["estimate-prior", "--features", str(tmp_path / "t.csv"), "--label-column", "y",
                 "--positive", "2", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "BBE: π = " in out and "Elkan-Noto: π = " in out and "the labels give" in out
    assert "(BBE is the one `pusupport train` uses" in out
    assert out.startswith("estimating π: BBE and Elkan–Noto")
    table.to_csv(tmp_path / "semicolons.csv", index=False, sep=";")      # separator sniffed
    assert main(["estimate-prior", "--features", str(tmp_path / "semicolons.csv"), "--label-column", "y",
                 "--positive", "2", "--device", "cpu"]) == 0
    assert capsys.readouterr().out == out


def error_of(capsys, *args) -> str:
    assert main([str(a) for a in args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "Traceback" not in "\n".join(err)
    return err[-1]


TRAIN = ("--epochs", 1, "--prior", 0.5, "--device", "cpu", "--allow-degenerate")


def test_a_missing_folder(capsys, tmp_path):
    msg = error_of(capsys, "train", "--images", tmp_path / "nope", "--positive", 0, "--out", tmp_path / "m.pt")
    assert msg == f"pusupport train: error: image folder {tmp_path / 'nope'} was not found: check the path."


def test_a_mistyped_method_fails_before_the_data_are_read(capsys, tmp_path):
    msg = error_of(capsys, "train", "--images", tmp_path / "nope", "--positive", 0, "--method", "aaPU",
                   "--out", tmp_path / "m.pt")
    assert msg.startswith("pusupport train: error: unknown method 'aaPU': use one of ['upu', 'nnpu'")


def test_a_corrupt_image_then_skipped_and_counted(capsys, tmp_path):
    folder = digit_folder(tmp_path / "d", classes=[0, 1], per_class=8)
    (folder / "train" / "1" / "bad.png").write_text("not an image")
    args = ("train", "--images", folder, "--positive", 1, "--out", tmp_path / "m.pt", "--data-dir", tmp_path, *TRAIN)
    msg = error_of(capsys, *args)
    assert f"cannot read the image {folder / 'train' / '1' / 'bad.png'}" in msg and "--skip-unreadable" in msg
    assert main([str(a) for a in args] + ["--skip-unreadable"]) == 0
    assert "warning: skipped 1 unreadable file(s)" in capsys.readouterr().err


def test_mixed_sizes_need_image_size(capsys, tmp_path):
    folder = digit_folder(tmp_path / "d", classes=[0, 1], per_class=4)
    digit_folder(tmp_path / "d", classes=[2], per_class=4, size=30)
    msg = error_of(capsys, "train", "--images", folder, "--positive", 1, "--out", tmp_path / "m.pt",
                   "--data-dir", tmp_path, *TRAIN)
    assert "images have different sizes: 28×28" in msg and "30×30" in msg and "--image-size H W" in msg


def test_a_single_class_and_an_empty_class_folder(capsys, tmp_path):
    single = digit_folder(tmp_path / "one", classes=[0], per_class=4)
    msg = error_of(capsys, "train", "--images", single, "--positive", 0, "--out", tmp_path / "m.pt",
                   "--data-dir", tmp_path, *TRAIN)
    assert "every training example is in a positive class ['0']" in msg and "name fewer" in msg
    empty = digit_folder(tmp_path / "empty", classes=[0, 1], per_class=4)
    for f in (empty / "train" / "1").iterdir():
        f.unlink()
    for positive in (1, 0):                        # an empty class folder, positive or negative
        msg = error_of(capsys, "train", "--images", empty, "--positive", positive, "--out",
                       tmp_path / "m.pt", "--data-dir", tmp_path, *TRAIN)
        assert f"{empty / 'train' / '1'} holds no images: every class needs training images" in msg


def test_nan_in_a_feature_table(capsys, tmp_path):
    table = pd.DataFrame({"a": np.arange(20.0), "label": np.arange(20) % 2})
    table.loc[3, "a"] = np.nan
    table.to_csv(tmp_path / "t.csv", index=False)
    msg = error_of(capsys, "train", "--features", tmp_path / "t.csv", "--positive", 1, "--out",
                   tmp_path / "m.pt", *TRAIN)
    assert "1 training row(s) hold NaN or inf values: remove or impute them" in msg


def test_positive_1_matches_a_float_label_column(tmp_path):
    """A label column read as floats names its classes '0.0' and '1.0': `--positive 1` (or
    1.0) finds '1.0'; a name still matches before a number, and a number naming no class fails."""
    from pusupport.apps.own import build_problem
    from pusupport.apps.reading import load_own
    from pusupport.core.problem import resolve_classes
    table = pd.DataFrame({"a": np.arange(40.0), "label": (np.arange(40) % 2).astype(float)})
    table.loc[::5, "a"] += 0.5
    table.to_csv(tmp_path / "t.csv", index=False)
    data = load_own(features=tmp_path / "t.csv")
    assert data.labeled.classes == ["0.0", "1.0"]
    for positive in (1, "1", "1.0"):
        assert resolve_classes(positive, data.labeled.classes) == [1]
        problem = build_problem(data, positive, n_labeled=5)
        assert len(problem.x_p) == 5 and 0.3 < problem.prior < 0.5        # U keeps 10 of its 27
    assert resolve_classes("1", ["1", "1.0"]) == [0]
    with pytest.raises(ValueError, match=r"unknown positive class\(es\) \['2'\]"):
        resolve_classes(2, data.labeled.classes)


def test_a_missing_label_column_is_named_in_each_interface_s_spelling(capsys, tmp_path):
    from pusupport.apps.reading import load_own
    pd.DataFrame({"a": np.arange(20.0), "y": np.arange(20) % 2}).to_csv(tmp_path / "t.csv", index=False)
    msg = error_of(capsys, "train", "--features", tmp_path / "t.csv", "--positive", 1, "--out",
                   tmp_path / "m.pt", *TRAIN)
    assert msg.endswith("has no label column 'label'; its 2 columns are ['a', 'y']: pass --label-column NAME")
    with pytest.raises(ValueError, match=r"\['a', 'y'\]: pass label_column=…$"):
        load_own(features=tmp_path / "t.csv")
    wide = pd.DataFrame(np.zeros((3, 65)), columns=[f"f{i}" for i in range(64)] + ["Label"])
    wide.to_csv(tmp_path / "wide.csv", index=False)            # 65 columns, the label's misspelt
    with pytest.raises(ValueError, match=r"no label column 'label' \(closest: 'Label'\); its 65 columns "
                                         r"are \['f0', .*, 'f9'\] …: pass label_column=…$"):
        load_own(features=tmp_path / "wide.csv")


def test_an_empty_table_or_one_without_rows_says_so(capsys, tmp_path):
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "header.csv").write_text("a,b,label\n")
    for name in ("empty.csv", "header.csv"):
        msg = error_of(capsys, "train", "--features", tmp_path / name, "--positive", 1, "--out",
                       tmp_path / "m.pt", *TRAIN)
        assert f"{name} holds no rows: give a table with a header line and one row per example" in msg


def test_a_truncated_model_and_inputs_the_model_cannot_take(capsys, trained, tmp_path):
    path, _ = trained
    cut = tmp_path / "cut.pt"
    cut.write_bytes(path.read_bytes()[:300])
    msg = error_of(capsys, "predict", cut, tmp_path, "--csv", tmp_path / "p.csv")
    assert f"the saved model {cut} cannot be read" in msg and "Delete" not in msg
    # arguments swapped: the inputs are named as such, and nothing advises deleting them
    for inputs in (tmp_path, tmp_path / "data.csv"):
        pd.DataFrame({"a": [1.0]}).to_csv(tmp_path / "data.csv", index=False)
        msg = error_of(capsys, "predict", inputs, path, "--csv", tmp_path / "p.csv")
        assert "did you swap MODEL and INPUTS?" in msg and "Delete" not in msg
        assert (tmp_path / "data.csv").exists()
    pd.DataFrame({"a": [1.0]}).to_csv(tmp_path / "t.csv", index=False)
    msg = error_of(capsys, "predict", path, tmp_path / "t.csv", "--csv", tmp_path / "p.csv")
    assert "this model was trained on images of shape (1, 28, 28)" in msg and "pass a folder of images" in msg
    from PIL import Image
    (tmp_path / "rgb").mkdir()
    grey = np.random.default_rng(0).integers(0, 256, (28, 28), dtype=np.uint8)
    Image.fromarray(np.repeat(grey[..., None], 3, axis=2)).save(tmp_path / "rgb" / "x.png")
    Image.fromarray(grey).save(tmp_path / "grey.png")
    saved = load_model(path)                       # colour images are scored as greyscale ones
    x_rgb, _ = reading.read_inputs(saved, tmp_path / "rgb")
    assert x_rgb.shape == (1, 1, 28, 28)
    assert (x_rgb[0, 0].int() - torch.from_numpy(grey).int()).abs().max() <= 1


def test_npz_and_npy_layouts(tmp_path):
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(50, 3)).astype(np.float32), np.arange(50) % 2
    np.savez(tmp_path / "t.npz", x=x, y=y, x_test=x[:10], y_test=y[:10])
    mine = reading.load_own(features=tmp_path / "t.npz")
    assert mine.labeled.x_train.shape == (50, 3) and len(mine.labeled.y_test) == 10
    assert mine.labeled.classes == ["0", "1"] and mine.kind == "features"
    np.save(tmp_path / "t.npy", np.column_stack([x, y]))
    mine = reading.load_own(features=tmp_path / "t.npy")
    assert mine.labeled.x_train.shape == (40, 3) and mine.labeled.x_test.shape == (10, 3)
    assert mine.preprocessing["columns"] == ["0", "1", "2"]
    xs, _, _, ids = reading.read_table(tmp_path / "t.npy", columns=["0", "1", "2"])
    assert torch.equal(xs, torch.tensor(x)) and ids[:2] == ["0", "1"]


def test_estimator_epochs_reach_the_p_vs_u_classifier(tmp_path, capsys, monkeypatch):
    from pusupport.apps.cli import parser
    seen = []
    monkeypatch.setattr(own, "estimate", lambda problem, config, seed, device: seen.append(config) or {})
    table = tmp_path / "t.csv"
    rng = np.random.default_rng(0)
    pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60),
                  "label": [0, 1, 2] * 20}).to_csv(table, index=False)
    assert main(["estimate-prior", "--features", str(table), "--positive", "1",
                 "--estimator-epochs", "7"]) == 0
    assert [c.epochs for c in seen] == [7]
    with pytest.raises(SystemExit):
        parser().parse_args(["estimate-prior", "--features", str(table), "--positive", "1",
                             "--estimator-epochs", "0"])
    assert "--estimator-epochs: must be a positive integer, got '0'" in capsys.readouterr().err


def word_folder(root: Path, per_class=(120, 30), size=24) -> Path:
    """scikit-learn's 8×8 digits as a small greyscale folder of word-named classes,
    ``size``×``size`` pixels: 120 training and 30 test images of each of three classes."""
    from PIL import Image
    from sklearn.datasets import load_digits
    digits = load_digits()
    for k, name in {0: "zero", 3: "three", 7: "seven"}.items():
        images = digits.images[digits.target == k]
        for split, part in (("train", images[:per_class[0]]), ("test", images[per_class[0]:sum(per_class)])):
            (root / split / name).mkdir(parents=True, exist_ok=True)
            for i, a in enumerate(part):
                Image.fromarray((a * 16).clip(0, 255).astype(np.uint8), mode="L").resize(
                    (size, size), Image.BILINEAR).save(root / split / name / f"{i}.png")
    return root


def test_a_small_folder_trains_to_a_useful_model_at_the_defaults(tmp_path):
    """Nothing but --positive: the defaults follow the data's size (README: U is every
    training row not labelled, π its positive fraction: 60 of 300 here)."""
    folder = word_folder(tmp_path / "words")
    run = subprocess.run([str(Path(sys.executable).with_name("pusupport")), "train", "--images",
                          str(folder), "--positive", "three", "--out", str(tmp_path / "m.pt")],
                         capture_output=True, text=True,
                         env={**ENV, "PUSUPPORT_DATA": str(tmp_path / "cache")})
    assert run.returncode == 0, run.stderr
    log = run.stdout
    estimate = float(log.split("BBE: π = ")[1].split()[0])
    assert abs(estimate - 0.2) <= 0.1, log
    assert "60 labelled positives, 300 unlabelled" in log and "batch 30, lr 0.001" in log
    auc = float(log.split("AUC ")[1].split()[0])
    error = float(log.split("test error ")[1].split(",")[0])
    assert auc >= 0.95 and error <= 0.1, log          # ranks well *and* thresholds well
    assert (tmp_path / "m.pt").is_file()


def test_a_degenerate_prior_estimate_fails_and_saves_nothing(tmp_path, capsys):
    """Identical images: the P-vs-U classifier cannot but give every point one score."""
    from PIL import Image
    for split, n in (("train", 40), ("test", 10)):
        for name in ("a", "b"):
            (tmp_path / "same" / split / name).mkdir(parents=True)
            for i in range(n):
                Image.fromarray(np.full((28, 28), 128, np.uint8)).save(tmp_path / "same" / split / name / f"{i}.png")
    assert main(["train", "--images", str(tmp_path / "same"), "--positive", "a", "--out",
                 str(tmp_path / "m.pt"), "--device", "cpu", "--data-dir", str(tmp_path),
                 "--estimator-epochs", "1"]) == 1
    err = [line for line in capsys.readouterr().err.splitlines()      # no progress bars, and no
           if line.startswith(("pusupport", "warning", "Traceback"))      # note but a CPU without bf16's
           and not line.startswith("warning: layouts: nothing measured")]  # (said once: test_runtime)
    assert len(err) == 1, err
    assert err[0].startswith("pusupport train: error: the BBE estimate of π is unusable:")
    assert "Pass --prior P if you know π" in err[0] and "--estimator-epochs N" in err[0]
    assert "nothing saved (--allow-degenerate keeps it)" in err[0] and "prior=" not in err[0]
    assert not (tmp_path / "m.pt").exists()


def test_outputs_are_checked_before_any_work(capsys, tmp_path, monkeypatch):
    """One rule: the folder that holds an output must exist and be writable; a folder
    is not a file. Each fails at once (the data loader is never reached)."""
    monkeypatch.setattr(reading, "load_own", lambda *a, **k: pytest.fail("data read before the check"))
    args = ("train", "--images", tmp_path, "--positive", 0, *TRAIN)
    msg = error_of(capsys, *args, "--out", tmp_path)
    assert msg == (f"pusupport train: error: --out {tmp_path}: is a folder; give a file name, "
                   "e.g. model.pt or predictions.csv")
    msg = error_of(capsys, *args, "--out", "/proc/x.pt")
    assert msg.startswith("pusupport train: error: --out /proc/x.pt: cannot write in /proc")
    msg = error_of(capsys, *args, "--out", tmp_path / "nodir" / "m.pt")
    assert f"the folder {tmp_path / 'nodir'} does not exist; create it first" in msg
    msg = error_of(capsys, *args, "--out", tmp_path / "m.pt", "--checkpoint-dir", tmp_path / "x" / "y")
    assert msg.startswith("pusupport train: error: --checkpoint-dir")
    monkeypatch.setattr("pusupport.apps.commands.load_model", lambda *a: pytest.fail("model read first"))
    msg = error_of(capsys, "predict", tmp_path / "m.pt", tmp_path, "--csv", tmp_path / "nodir" / "sub" / "p.csv")
    assert f"--csv {tmp_path / 'nodir' / 'sub' / 'p.csv'}: the folder" in msg and "mkdir -p" in msg


def test_no_output_may_be_an_input(capsys, tmp_path, monkeypatch):
    """``--out`` naming the feature table, or ``--csv`` naming the model or the inputs,
    fails before any work and leaves the file as it was (both were silently overwritten)."""
    table = tmp_path / "t.csv"
    table.write_text("label,a\n1,0.5\n0,0.2\n")
    monkeypatch.setattr(reading, "load_own", lambda *a, **k: pytest.fail("data read before the check"))
    msg = error_of(capsys, "train", "--features", table, "--positive", 1, *TRAIN, "--out", table)
    assert msg == (f"pusupport train: error: --out {table} is also the input --features: writing it "
                   "would destroy that input; give --out another path (nothing was written)")
    model = tmp_path / "m.pt"
    model.write_bytes(b"a model")
    monkeypatch.setattr("pusupport.apps.commands.load_model", lambda *a: pytest.fail("model read first"))
    msg = error_of(capsys, "predict", model, table, "--csv", model)
    assert "--csv " in msg and "is also the input MODEL" in msg
    assert "is also the input INPUTS" in error_of(capsys, "predict", model, table, "--csv", tmp_path / "." / "t.csv")
    assert model.read_bytes() == b"a model" and table.read_text().startswith("label,a")
    # nor into an input folder's data: an image overwritten, or a model added to the positives
    # (a new file beside the class folders is no data: tests write their outputs so)
    image = tmp_path / "pu" / "labeled" / "0.png"
    image.parent.mkdir(parents=True)
    image.write_bytes(b"an image")
    monkeypatch.setattr("pusupport.apps.pu_data.load_pu", lambda *a, **k: pytest.fail("data read before the check"))
    for out, harm in ((image, "overwrite a file of"), (image.with_name("m.pt"), "add files to")):
        msg = error_of(capsys, "train", "--images", tmp_path / "pu", "--out", out)
        assert msg == (f"pusupport train: error: --out {out} lies inside the input --images {tmp_path / 'pu'}: "
                       f"writing it would {harm} your data; give --out a path outside that folder (nothing "
                       "was written)")
    assert "lies inside the input INPUTS" in error_of(capsys, "predict", model, tmp_path / "pu",
                                                      "--csv", tmp_path / "pu" / "labeled" / "p.csv")
    assert image.read_bytes() == b"an image" and not image.with_name("m.pt").exists()


RESUME_TABLE = dict(n=6000, d=20)


def test_a_killed_train_resumes_from_its_checkpoint_to_the_same_model(tmp_path):
    import signal
    import time
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, RESUME_TABLE["n"])
    table = pd.DataFrame(rng.normal(y[:, None], 1.0, (RESUME_TABLE["n"], RESUME_TABLE["d"])),
                         columns=[f"f{i}" for i in range(RESUME_TABLE["d"])]).assign(label=y)
    table.to_csv(tmp_path / "t.csv", index=False)
    args = ["train", "--features", tmp_path / "t.csv", "--positive", 1, "--prior", 0.5,
            "--epochs", 60, "--device", "cpu", "--allow-degenerate"]
    script = Path(sys.executable).with_name("pusupport")
    ckpt = tmp_path / "ckpt"
    proc = subprocess.Popen([str(script), *map(str, args), "--out", str(tmp_path / "a.pt"),
                             "--checkpoint-dir", str(ckpt)], env=ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while not list(ckpt.glob("*.pt")) and time.time() < deadline and proc.poll() is None:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run finished before it could be killed"
    assert not (tmp_path / "a.pt").exists()
    saved = torch.load(next(ckpt.glob("*.pt")), weights_only=False)["epoch"]
    assert 10 <= saved < 60                         # a checkpoint every 10 epochs
    again = pusupport(*args, "--out", tmp_path / "a.pt", "--checkpoint-dir", ckpt)
    assert again.returncode == 0, again.stderr
    assert f"resumed from epoch {saved} of 60" in again.stdout
    straight = pusupport(*args, "--out", tmp_path / "b.pt")
    assert straight.returncode == 0, straight.stderr
    a, b = load_model(tmp_path / "a.pt"), load_model(tmp_path / "b.pt")
    for key, value in a.model.state_dict().items():
        assert torch.equal(value, b.model.state_dict()[key]), key


def test_vpu_trains_with_no_prior_and_estimates_none(tmp_path, capsys, monkeypatch):
    """A prior-free method: no --prior, no BBE estimate, nothing about π saved."""
    monkeypatch.setattr(own, "estimate", lambda *a, **k: pytest.fail("π estimated for VPU"))
    folder = digit_folder(tmp_path / "d", classes=[0, 1, 2], per_class=40)
    assert main(["train", "--images", str(folder), "--positive", "1", "--method", "vpu",
                 "--epochs", "2", "--device", "cpu", "--data-dir", str(tmp_path), "--out",
                 str(tmp_path / "m.pt"), "--allow-degenerate"]) == 0
    out = capsys.readouterr().out
    assert "BBE" not in out and "no π" in out
    saved = load_model(tmp_path / "m.pt")
    assert saved.method == "vpu" and saved.prior is None and saved.threshold != 0.0
    msg = error_of(capsys, "train", "--images", folder, "--positive", 1, "--method", "vpu",
                   "--prior", 0.3, "--out", tmp_path / "m2.pt")
    assert msg == "pusupport train: error: --method vpu never uses π: drop --prior"


def test_labelling_every_training_positive_says_u_would_hold_none(capsys, digits, tmp_path):
    data = reading.load_own(digits, data_dir=tmp_path)
    n_pos = int(sum(data.labeled.classes[int(y)] in ("0", "2") for y in data.labeled.y_train))
    msg = error_of(capsys, "train", "--images", digits, "--positive", 0, 2, "--n-labeled", n_pos,
                   "--out", tmp_path / "m.pt", "--epochs", 1, "--device", "cpu", "--data-dir", tmp_path)
    assert f"would leave U without positives (the training rows hold {n_pos}): label at most " \
           f"{n_pos - 1}" in msg and "class prior" not in msg


@pytest.mark.parametrize("checkpoints", [False, True])
def test_ctrl_c_during_training_is_one_line_and_exit_status_130(capsys, monkeypatch, tmp_path, checkpoints):
    from pusupport.apps import own

    def interrupted(problem, cfg):
        raise KeyboardInterrupt
    monkeypatch.setattr(own, "fit", interrupted)
    table = pd.DataFrame({"x": np.arange(40.0), "label": [0, 1] * 20})
    table.to_csv(tmp_path / "t.csv", index=False)
    extra = ["--checkpoint-dir", tmp_path / "ck"] if checkpoints else []
    status = main([str(a) for a in ("train", "--features", tmp_path / "t.csv", "--positive", 1, "--out",
                                    tmp_path / "m.pt", "--prior", 0.5, "--device", "cpu", *extra)])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 130 and len(err) == 1 and "Traceback" not in err[0]
    if checkpoints:                  # none written yet: none promised
        assert f"before the first checkpoint (every 10 epochs): nothing in {tmp_path / 'ck'}" in err[0]
        (tmp_path / "ck").mkdir(exist_ok=True)
        (tmp_path / "ck" / "run.pt").write_bytes(b"")
        assert main([str(a) for a in ("train", "--features", tmp_path / "t.csv", "--positive", 1, "--out",
                                      tmp_path / "m.pt", "--prior", 0.5, "--device", "cpu", *extra)]) == 130
        err = capsys.readouterr().err.strip().splitlines()
        assert f"the checkpoints in {tmp_path / 'ck'} are kept" in err[0] and "resumes" in err[0]
    else:
        assert "nothing saved — add --checkpoint-dir DIR" in err[0]


def test_an_npz_without_x_names_its_arrays_and_the_fix(capsys, tmp_path):
    np.savez(tmp_path / "d.npz", features=np.zeros((4, 2)), y=np.array([0, 1, 0, 1]))
    msg = error_of(capsys, "train", "--features", tmp_path / "d.npz", "--positive", 1, *TRAIN,
                   "--out", tmp_path / "m.pt")
    assert msg == (f"pusupport train: error: {tmp_path / 'd.npz'} has no array 'x' (its arrays: "
                   "features, y): save the features as x, e.g. np.savez(path, x=features, y=labels)")


def test_a_missing_label_names_its_row_instead_of_becoming_a_class(capsys, tmp_path):
    table = pd.DataFrame({"x": np.arange(40.0), "label": [0, 1] * 20})
    table.loc[6, "label"] = None
    table.to_csv(tmp_path / "t.csv", index=False)
    msg = error_of(capsys, "train", "--features", tmp_path / "t.csv", "--positive", 1, "--out",
                   tmp_path / "m.pt", *TRAIN)
    assert "the label column 'label' is empty in data row(s) [7]" in msg and "give every row a label" in msg


def test_help_and_version_answer_without_importing_torch():
    """``pusupport --help`` and ``--version`` load no torch (measured: 0.16 s and 0.10 s on the
    development machine, against ≈ 3 s for importing torch); a command imports what it uses."""
    code = ("import sys\nfrom pusupport.apps.cli import main\n"
            "for argv in (['--help'], ['train', '--help'], ['--version']):\n"
            "    try:\n        main(argv)\n    except SystemExit as end:\n        assert end.code == 0\n"
            "print('torch' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().endswith("False") and "pusupport 0.1.0" in run.stdout
    assert "usage: pusupport train" in run.stdout and "a name it does not know lists them all" in run.stdout


def test_an_empty_test_split_is_said_not_printed_as_nan(capsys, tmp_path):
    rng = np.random.default_rng(0)
    y = np.arange(120) % 2
    x = rng.normal(y[:, None], 0.5, (120, 2)).astype(np.float32)
    np.savez(tmp_path / "t.npz", x=x, y=y, x_test=np.zeros((0, 2), np.float32), y_test=np.zeros(0, int))
    assert main(["train", "--features", str(tmp_path / "t.npz"), "--positive", "1", "--out",
                 str(tmp_path / "m.pt"), *map(str, TRAIN)]) == 0
    out, err = capsys.readouterr()
    assert "0 test rows;" in out and "test error nan" not in out
    assert "warning: no test rows, so no test error: give a test split" in err


def test_a_split_folder_given_for_the_image_folder_names_its_parent(tmp_path):
    """`--images DIR/train` (the split, not the folder): the error names the parent to give."""
    from pusupport.data.files import DatasetNotFoundError
    from pusupport.data.images import load_image_folder
    for split in ("train", "test"):
        (tmp_path / split / "a").mkdir(parents=True)
    with pytest.raises(DatasetNotFoundError, match=rf"is itself the train/ split: give its parent, {tmp_path}"):
        load_image_folder(tmp_path / "train")


def test_a_table_without_a_test_split_says_it_holds_a_fifth_out(tmp_path, capsys):
    from pusupport.apps.reading import load_own
    pd.DataFrame({"a": np.arange(40.0), "label": np.arange(40) % 2}).to_csv(tmp_path / "t.csv", index=False)
    assert load_own(features=tmp_path / "t.csv").held_out
    np.savez(tmp_path / "t.npz", x=np.zeros((10, 2), np.float32), y=np.arange(10) % 2,
             x_test=np.zeros((4, 2), np.float32), y_test=np.arange(4) % 2)
    assert not load_own(features=tmp_path / "t.npz").held_out


@pytest.mark.parametrize("typed", ["--rankng", "--rankin"])
def test_an_option_is_known_by_its_whole_name_and_a_near_miss_names_the_option(capsys, tmp_path, typed):
    """``--rankin`` is not taken for ``--ranking`` (a run would start with the option the user
    did not mean to give), and either near miss is answered with the option's name."""
    with pytest.raises(SystemExit) as ended:
        main(["train", "--features", str(tmp_path / "t.csv"), "--out", str(tmp_path / "m.pt"), typed, "r.csv"])
    assert ended.value.code == 2
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert said == f"pusupport: error: unrecognized arguments: {typed} r.csv ({typed}: did you mean --ranking?)"


def test_a_pool_whose_rows_share_one_score_is_told_that_their_order_is_by_id():
    """A ReLU network can give a whole region one output (a user's digits folder: 325 of 1,116
    pool images at the top score): the ranking then orders them by id, and says so."""
    table = pd.DataFrame({"id": [f"u{i}" for i in range(100)],
                          "score": [2.0] + [1.606] * 30 + [float(-i) for i in range(69)]})
    said = own.ties(table)
    assert said.startswith("30 of 100 pool rows share one score (1.606, ranks 2–31)") and "by id" in said
    assert own.ties(table.assign(score=[float(i) for i in range(100)])) == ""
    assert own.ties(table.assign(score=[1.0] * 9 + [float(-i) for i in range(91)])) == ""   # under 10 rows
