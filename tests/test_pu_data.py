"""PU data as it comes — labelled positives beside an unlabelled pool, from a folder or a
table — through the command line and Python: the pool ranked, π estimated (never read from
the PU labels), nothing overwritten, and one clear line per bad input."""
import numpy as np
import pandas as pd
import pytest
from PIL import Image
from sklearn.datasets import load_digits
from sklearn.metrics import roc_auc_score

from pusupport.apps import own, pu_data
from pusupport.apps.cli import main

from test_own_cli import error_of, pusupport

N_LABELED = 150            # of the 901 images of digits 0–4, the positives


@pytest.fixture(scope="module")
def digits_pu(tmp_path_factory):
    """scikit-learn's digits (8×8) as PU data: 150 images of digits 0–4 labelled, the other
    1,647 images the pool (π = 0.456, known here, never shown to the code); the same as a
    table with a 1/0 column s. Returns (folder, table, truth of the pool by id)."""
    root = tmp_path_factory.mktemp("pu")
    d = load_digits()
    x, positive = (d.images * 255 / 16).astype(np.uint8), d.target < 5
    labeled = np.zeros(len(x), bool)
    labeled[np.random.default_rng(0).choice(np.flatnonzero(positive), N_LABELED, replace=False)] = True
    truth = {}
    for i in range(len(x)):
        path = root / "digits" / ("labeled" if labeled[i] else "unlabeled") / f"{i:04d}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(x[i], mode="L").save(path)
        if not labeled[i]:
            truth[str(path)] = truth[str(i)] = int(positive[i])
    table = pd.DataFrame(d.data / 16, columns=[f"px{i}" for i in range(64)]).assign(s=labeled.astype(int))
    table.to_csv(root / "digits.csv", index=False)
    return root / "digits", root / "digits.csv", truth


def _judged(ranking: pd.DataFrame, truth: dict) -> float:
    """The ranking's ROC AUC against the pool's hidden truth (every pool row ranked once)."""
    assert list(ranking.columns) == ["rank", "id", "score", "probability", "predicted"]
    assert list(ranking["rank"]) == list(range(1, len(ranking) + 1)) and ranking.score.is_monotonic_decreasing
    assert len(ranking) == 1647 and ranking.id.astype(str).map(truth).notna().all()
    return roc_auc_score(ranking.id.astype(str).map(truth), ranking.score)


#: How near π's estimate must come: the issue's 0.03 for the table; for the folder twice the
#: spread of the estimate from images across draws of the 150 labelled and of the halvings
#: (the median of 4, own.SPLITS: SD 0.035, 23 of 40 within 0.03 — DEVELOPING.md). This
#: fixture's draw gives 0.498 on one thread in float32, 0.485 on two.
PI_BAR = {"--features": 0.03, "--images": 2 * 0.035}


def _estimate(log: str) -> float:
    return float(log.split("BBE: π = ")[1].split()[0])


@pytest.mark.parametrize("kind", ["--images", "--features"])
def test_pu_data_at_the_defaults_rank_the_pool_and_estimate_pi(digits_pu, tmp_path, kind):
    """Must-show of the issue: at the defaults, the pool ranked with ROC AUC ≥ 0.95 against
    its hidden truth and π estimated near the pool's 0.456 — folder and table (:data:`PI_BAR`)."""
    folder, table, truth = digits_pu
    given = [kind, folder] if kind == "--images" else [kind, table, "--label-column", "s"]
    run = pusupport("train", *given, "--out", tmp_path / "m.pt", "--ranking", tmp_path / "pool.csv")
    assert run.returncode == 0, run.stderr
    assert "the labels give" not in run.stdout                 # PU labels say nothing of π
    assert abs(_estimate(run.stdout) - 0.456) <= PI_BAR[kind]
    assert "150 labelled positives, 1647 unlabelled, 0 test rows" in run.stdout
    assert "predicted positive, against π = " in run.stdout
    assert _judged(pd.read_csv(tmp_path / "pool.csv"), truth) >= 0.95


def test_vpu_at_the_defaults_learns_from_the_table(digits_pu, tmp_path):
    """VPU at your data's defaults trains at its authors' rate (own.OWN_RATE): at aaPU's
    1e-3 its scores drifted down together and the run was refused as degenerate."""
    _, table, truth = digits_pu
    run = pusupport("train", "--features", table, "--label-column", "s", "--method", "vpu",
                    "--out", tmp_path / "m.pt", "--ranking", tmp_path / "pool.csv")
    assert run.returncode == 0, run.stderr
    assert "vpu with mlp for 50 epochs (batch 164, lr 3e-05), no π" in run.stdout
    assert "predicted positive (vpu reads no π: `pusupport estimate-prior` gives one" in run.stdout
    assert "layouts:" not in run.stderr                  # the book's build speed: not said here
    assert _judged(pd.read_csv(tmp_path / "pool.csv"), truth) >= 0.95
    mlp = own.default_model((1647, 64))
    assert own.train_config(1647, mlp, "vpu", lr=1e-3).lr == 1e-3           # a rate given wins
    assert own.train_config(1647, mlp, "nnpu").lr == own.train_config(1647, mlp, "aapu").lr == 1e-3


def test_the_same_through_python(digits_pu):
    """The command's steps in Python: read, estimate π, train, rank the pool."""
    from pusupport.core.training import train
    folder, _, truth = digits_pu
    source = pu_data.load_pu(images=folder)
    problem, estimate = own.choose_prior(source.problem(), None)
    assert abs(estimate.estimate - 0.456) <= PI_BAR["--images"] and estimate.low <= 0.456 <= estimate.high
    result = train(problem, own.train_config(len(problem.x_u), own.default_model(tuple(problem.x_u.shape)),
                                             progress=False))
    scores = result.model.eval()(problem.x_u).detach().reshape(-1).numpy()
    assert roc_auc_score([truth[i] for i in source.u_ids], scores) >= 0.95


def test_a_test_split_beside_pu_data_is_scored(digits_pu, tmp_path):
    """DIR/test/<class>/* with --test-positive: the run reports its test error."""
    import shutil
    folder, _, truth = digits_pu
    mine = tmp_path / "mine"
    shutil.copytree(folder, mine)
    for i, (path, y) in enumerate(list((p, y) for p, y in truth.items() if "/" in p)[:40]):
        (mine / "test" / ("yes" if y else "no")).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, mine / "test" / ("yes" if y else "no") / f"{i}.png")
    said = pusupport("train", "--images", mine, "--test-positive", "yes", "--prior", 0.45, "--epochs", 2,
                     "--allow-degenerate", "--out", tmp_path / "m.pt")
    assert said.returncode == 0, said.stderr
    assert "150 labelled positives, 1647 unlabelled, 40 test rows" in said.stdout and "test error " in said.stdout
    source = pu_data.load_pu(images=mine, test_positive="yes")
    assert sorted(source.y_test.tolist()) == sorted(1 if y else -1 for p, y in list(
        (p, y) for p, y in truth.items() if "/" in p)[:40])


def test_folder_names_and_their_errors(tmp_path, capsys):
    def image(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(np.full((8, 8), len(str(path)) % 250, np.uint8), mode="L").save(path)
    for i in range(3):
        image(tmp_path / "d" / "Labelled" / f"{i}.png")
        image(tmp_path / "d" / "mine" / "sub" / f"{i}.png")            # nested: read too
    msg = error_of(capsys, "train", "--images", tmp_path / "d", "--out", tmp_path / "m.pt", "--prior", 0.3)
    assert "found no folder for the unlabelled pool; recognised names: unlabeled" in msg
    assert msg.endswith("name yours with --unlabeled-folder NAME")
    source = pu_data.load_pu(images=tmp_path / "d", unlabeled_folder="mine")
    assert (len(source.x_p), len(source.x_u)) == (3, 3) and source.u_ids[0].endswith("sub/0.png")
    image(tmp_path / "d" / "positive" / "0.png")
    msg = error_of(capsys, "train", "--images", tmp_path / "d", "--unlabeled-folder", "mine",
                   "--out", tmp_path / "m.pt")
    assert "found 2 folders for the labelled positives (Labelled and positive)" in msg
    msg = error_of(capsys, "train", "--images", tmp_path / "d", "--labeled-folder", "nope",
                   "--unlabeled-folder", "mine", "--out", tmp_path / "m.pt")
    assert msg.startswith("pusupport train: error: --labeled-folder nope: ") and "has no such folder" in msg
    (tmp_path / "d" / "test" / "positive").mkdir(parents=True)          # a test split without images
    msg = error_of(capsys, "train", "--images", tmp_path / "d", "--labeled-folder", "Labelled",
                   "--unlabeled-folder", "mine", "--out", tmp_path / "m.pt")
    assert "test holds no images: add a labelled test split there, or remove test/" in msg


def test_pu_label_columns_and_their_errors(tmp_path, capsys):
    x = np.random.default_rng(0).normal(size=(8, 2))
    def table(labels):
        pd.DataFrame(x, columns=["a", "b"]).assign(s=labels).to_csv(tmp_path / "t.csv", index=False)
        return tmp_path / "t.csv"
    for labels in ([1, 1, 0, 0, 0, 0, 0, 0], [1, 1, -1, -1, -1, -1, -1, -1], [True, True] + [False] * 6,
                   ["labeled", "labeled"] + ["unlabeled"] * 6):
        source = pu_data.load_pu(features=table(labels), label_column="s")
        assert (len(source.x_p), len(source.x_u), source.u_ids[0]) == (2, 6, "2")
    source = pu_data.load_pu(features=table(["yes", "yes"] + ["?"] * 6), label_column="s", labeled_value="yes")
    assert (len(source.x_p), len(source.x_u)) == (2, 6)
    msg = error_of(capsys, "train", "--features", table([0, 1, 2, 0, 1, 2, 0, 1]), "--label-column", "s",
                   "--out", tmp_path / "m.pt")
    assert "the label column holds ['0', '1', '2']" in msg and "--positive CLASS (evaluation mode)" in msg
    msg = error_of(capsys, "train", "--features", table(["yes", "yes"] + ["?"] * 6), "--label-column", "s",
                   "--out", tmp_path / "m.pt")
    assert "name it with --labeled-value VALUE" in msg
    empty = table([1, 1, None, None, 0, 0, 0, 0])
    msg = error_of(capsys, "train", "--features", empty, "--label-column", "s", "--out", tmp_path / "m.pt")
    assert "empty in data row(s) [3, 4]" in msg and "pass --empty-is-unlabeled" in msg
    assert len(pu_data.load_pu(features=empty, label_column="s", empty_is_unlabeled=True).x_u) == 6
    msg = error_of(capsys, "train", "--features", table([1] + [0] * 7), "--label-column", "s", "--out", tmp_path / "m.pt")
    assert "1 labelled positives; PU learning needs at least two of each" in msg
    x[[2, 6], 1] = [np.nan, np.inf]                  # the rows are named, as the file counts them
    msg = error_of(capsys, "train", "--features", table([1, 1, 0, 0, 0, 0, 0, 0]), "--label-column", "s",
                   "--out", tmp_path / "m.pt")
    assert "data row(s) [3, 7] (counting from 1) hold NaN or inf values" in msg
    with pytest.raises(SystemExit):                  # the option named, as argparse names it
        main(["train", "--images", str(tmp_path), "--image-size", "0", "--out", str(tmp_path / "m.pt")])
    assert "argument --image-size: must be a positive integer, got '0'" in capsys.readouterr().err


def test_options_of_one_mode_are_refused_in_the_other(tmp_path, capsys, digits_pu):
    _, table, _ = digits_pu
    msg = error_of(capsys, "train", "--features", table, "--label-column", "s", "--n-labeled", 5,
                   "--out", tmp_path / "m.pt")
    assert msg.startswith("pusupport train: error: --n-labeled is for the evaluation mode: add --positive CLASS")
    msg = error_of(capsys, "train", "--features", table, "--label-column", "s", "--positive", 1,
                   "--ranking", tmp_path / "r.csv", "--out", tmp_path / "m.pt")
    assert msg.startswith("pusupport train: error: --ranking is for PU data; leave out --positive")
    msg = error_of(capsys, "train", "--features", table, "--label-column", "s", "--ranking", table,
                   "--out", tmp_path / "m.pt")
    assert "--ranking" in msg and "is also the input --features" in msg
    msg = error_of(capsys, "train", "--features", table, "--label-column", "s", "--ranking", tmp_path / "m.pt",
                   "--out", tmp_path / "m.pt")
    assert "is also where --out is written: one would overwrite the other" in msg
