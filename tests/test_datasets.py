"""Real data sets as PU problems (Table 1), offline copies, caches and errors."""
import os
import pickle
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from pusupport.data.datasets import (DatasetNotFoundError, LabeledData, load_20news, load_cifar10,
                                load_cifar100, load_fashion_mnist, load_image_folder, load_pu,
                                make_pu)
from pusupport.core.models import build_model
from pusupport.core.training import train

IN_CI = os.environ.get("CI", "").lower() == "true"
DATA = os.environ.get("PUSUPPORT_DATA")


def need(path_exists: bool, what: str):
    if not path_exists:
        msg = f"{what} not found under PUSUPPORT_DATA={DATA!r} (run `make data` or set PUSUPPORT_DATA)"
        if IN_CI:
            pytest.fail(msg + " — CI=true: this test must run")
        pytest.skip(msg)


# ------------------------------------------------------------------ real data (Table 1)

def test_cifar10_table1_row():
    need(DATA is not None and (Path(DATA) / "cifar10-jpeg").is_dir(), "CIFAR-10 (cifar10-jpeg/)")
    d = load_pu("cifar10", DATA, seed=0, download=False)
    assert d.summary() == {"dataset": "cifar10", "n_p": 1000, "n_u": 50_000, "prior": 0.4,
                           "test_p": 4000, "test_n": 6000}
    assert d.x_u.dtype == torch.float32 and d.x_u.shape[1:] == (3, 32, 32)
    assert 0 <= float(d.x_u.min()) and float(d.x_u.max()) <= 1
    assert int(d.u_in_p.sum()) == 1000          # the labelled P are part of U (nnPU's protocol)
    assert (d.u_truth[d.u_in_p] > 0).all()


def test_20news_table1_row():
    need(DATA is not None and (Path(DATA) / "20news-bydate-train").is_dir(), "20 Newsgroups bydate folders")
    d = load_pu("20news", DATA, seed=0, download=False)
    s = d.summary()
    assert (s["n_p"], s["n_u"], s["test_p"], s["test_n"]) == (1000, 11_314, 3278, 4254)
    assert abs(d.prior - 0.435) < 0.005
    assert d.x_u.shape == (11_314, 130_107)            # the training vocabulary
    m = build_model("news_mlp", in_features=d.x_u.shape[1]).eval()
    assert m(d.x_u[torch.arange(5)].torch()).shape == (5,)


def test_20news_keeps_the_most_frequent_words_ties_broken_alphabetically():
    """``max_features`` keeps the most frequent words, and of words tied at the cut the first
    alphabetically, on every CPU (scikit-learn's unstable sort keeps others with the SIMD sort
    at hand), in scikit-learn's alphabetical column order."""
    from pusupport.data.datasets import most_frequent
    documents = ["zeta alpha beta", "zeta gamma delta", "zeta epsilon mu nu"]   # zeta 3, all others 1
    assert most_frequent(documents, 3) == ["alpha", "beta", "zeta"]
    assert most_frequent(documents, 1) == ["zeta"]
    assert most_frequent([" ".join(f"w{i:02d}" for i in range(40, 0, -1))], 2) == ["w01", "w02"]


def test_fashion_mnist_counts_follow_the_convention():
    need(DATA is not None and (Path(DATA) / "FashionMNIST" / "raw").is_dir(), "Fashion-MNIST raw files")
    d = load_pu("fashion_mnist", DATA, seed=0, download=False)
    assert d.summary() == {"dataset": "fashion_mnist", "n_p": 1000, "n_u": 60_000, "prior": 0.3,
                           "test_p": 3000, "test_n": 7000}


def write_fashion_mnist_gz(raw: Path, n_train=12, n_test=6):
    """Debian's layout: the four official idx files, gzipped, and nothing else."""
    import gzip
    import struct
    raw.mkdir(parents=True)
    for split, n in (("train", n_train), ("t10k", n_test)):
        images = struct.pack(">IIII", 0x803, n, 28, 28) + bytes(range(256)) * (n * 784 // 256 + 1)
        labels = struct.pack(">II", 0x801, n) + bytes(i % 10 for i in range(n))
        (raw / f"{split}-images-idx3-ubyte.gz").write_bytes(gzip.compress(images[:16 + n * 784]))
        (raw / f"{split}-labels-idx1-ubyte.gz").write_bytes(gzip.compress(labels))


def test_fashion_mnist_gz_files_are_unpacked_whole_or_not_at_all(tmp_path, monkeypatch):
    """Parallel workers read what another is unpacking: a reader never sees part of a file
    (CI once read 14 MB of a 47 MB file), and an unpacking cut short leaves nothing behind."""
    import pusupport.data.datasets as datasets
    raw = tmp_path / "FashionMNIST" / "raw"
    write_fashion_mnist_gz(raw)
    whole = datasets.shutil.copyfileobj

    def cut_short(src, dst):
        dst.write(src.read(100))
        raise KeyboardInterrupt
    monkeypatch.setattr(datasets.shutil, "copyfileobj", cut_short)
    with pytest.raises(KeyboardInterrupt):
        load_fashion_mnist(tmp_path, download=False)
    assert sorted(p.name for p in raw.iterdir()) == sorted(f"{f}.gz" for f in datasets.FASHION_MNIST_FILES)
    monkeypatch.setattr(datasets.shutil, "copyfileobj", whole)
    data = load_fashion_mnist(tmp_path, download=False)
    assert data.x_train.shape == (12, 1, 28, 28) and data.x_test.shape == (6, 1, 28, 28)
    assert data.y_train.tolist() == [i % 10 for i in range(12)]


def test_fashion_mnist_is_read_from_its_cache_until_a_raw_file_changes(tmp_path, monkeypatch):
    """The decoded tensors are cached (a build reading them needs no torchvision); a raw
    file replaced is decoded again, never answered from the cache."""
    import shutil
    raw = tmp_path / "FashionMNIST" / "raw"
    write_fashion_mnist_gz(raw)
    first = load_fashion_mnist(tmp_path, download=False)
    with monkeypatch.context() as no_torchvision:                     # importing it fails
        for name in ("torchvision", "torchvision.datasets"):
            no_torchvision.setitem(sys.modules, name, None)
        again = load_fashion_mnist(tmp_path, download=False)
    assert torch.equal(again.x_train, first.x_train) and again.classes == first.classes
    shutil.rmtree(raw)
    write_fashion_mnist_gz(raw, n_train=20)
    with pytest.warns(UserWarning, match="stale; rebuilding"):
        assert load_fashion_mnist(tmp_path, download=False).x_train.shape == (20, 1, 28, 28)

# ------------------------------------------------------------------ CIFAR-100 official format

def write_cifar100(root: Path, n_train=200, n_test=100):
    """A tiny file set in the official cifar-100-python pickle format."""
    rng = np.random.default_rng(0)
    folder = root / "cifar-100-python"
    folder.mkdir(parents=True)
    coarse = ["aquatic_mammals", "fish", "flowers", "food_containers", "fruit_and_vegetables",
              "household_electrical_devices", "household_furniture", "insects", "large_carnivores",
              "large_man-made_outdoor_things", "large_natural_outdoor_scenes",
              "large_omnivores_and_herbivores", "medium_mammals", "non-insect_invertebrates",
              "people", "reptiles", "small_mammals", "trees", "vehicles_1", "vehicles_2"]
    fine = [f"fine_{i}" for i in range(100)]
    with open(folder / "meta", "wb") as f:
        pickle.dump({"fine_label_names": fine, "coarse_label_names": coarse}, f)
    for split, n in (("train", n_train), ("test", n_test)):
        fine_labels = rng.integers(0, 100, n).tolist()
        blob = {"filenames": [f"{i}.png" for i in range(n)], "batch_label": split,
                "fine_labels": fine_labels, "coarse_labels": [l // 5 for l in fine_labels],
                "data": rng.integers(0, 256, (n, 3072), dtype=np.uint8)}
        with open(folder / split, "wb") as f:
            pickle.dump(blob, f)
    return coarse


def test_cifar100_superclasses_from_the_official_pickle(tmp_path):
    coarse = write_cifar100(tmp_path)
    raw = load_cifar100(tmp_path, download=False)
    assert raw.classes == coarse and raw.x_train.shape == (200, 3, 32, 32)
    animal = [coarse.index(c) for c in ("aquatic_mammals", "fish", "insects", "large_carnivores",
                                         "large_omnivores_and_herbivores", "medium_mammals",
                                         "non-insect_invertebrates", "people", "reptiles",
                                         "small_mammals")]
    truth = torch.isin(raw.y_train, torch.tensor(animal))
    d = load_pu("cifar100", tmp_path, n_labeled=20, download=False)
    assert d.prior == pytest.approx(float(truth.float().mean()))
    assert int((d.y_test > 0).sum()) == int(torch.isin(raw.y_test, torch.tensor(animal)).sum())
    # pixels are the pickle's bytes in CHW order, scaled to [0, 1]
    with open(tmp_path / "cifar-100-python" / "train", "rb") as f:
        first = pickle.load(f)["data"][0]
    assert torch.allclose(d.x_u[0].reshape(-1), torch.tensor(first, dtype=torch.float32) / 255)



def test_n_test_samples_one_test_set_that_every_seed_shares(tmp_path):
    """A real data set's ``data.n_test``: that many rows of its test split, the same rows for
    every seed (the cost model and the verdict's floor read the same n_test); more than the
    split holds is refused with the fix."""
    from pusupport.book.sources import data_for
    from pusupport.core.config import DataConfig
    write_cifar100(tmp_path)
    whole = data_for("cifar100", DataConfig(n_labeled=20), tmp_path)(0)
    make = data_for("cifar100", DataConfig(n_labeled=20, n_test=30), tmp_path)
    first, second = make(0), make(1)
    assert len(first.y_test) == 30 and torch.equal(first.x_test, second.x_test)
    assert not torch.equal(first.x_p, second.x_p)                    # P and U still drawn per seed
    rows = [int(torch.nonzero((whole.x_test == x).flatten(1).all(1))[0]) for x in first.x_test]
    assert rows == sorted(set(rows)) and rows != list(range(30))     # a sample, in the split's order
    assert torch.equal(whole.y_test[rows], first.y_test)
    with pytest.raises(ValueError, match=r"n_test=101: the test split has only 100 rows; set data.n_test to at most 100"):
        data_for("cifar100", DataConfig(n_test=101), tmp_path)

# ------------------------------------------------------------------ your own images

def build_image_folder(root: Path, classes=("cat", "dog", "ship"), per_class=6):
    from PIL import Image
    rng = np.random.default_rng(1)
    for split in ("train", "test"):
        for c in classes:
            (root / split / c).mkdir(parents=True)
            for i in range(per_class):
                Image.fromarray(rng.integers(0, 256, (8, 8, 3), dtype=np.uint8)).save(
                    root / split / c / f"{i}.png")
    return root


def test_image_folder_to_pu(tmp_path):
    folder = build_image_folder(tmp_path / "pets")
    raw = load_image_folder(folder, data_dir=tmp_path)
    assert raw.classes == ["cat", "dog", "ship"] and raw.x_train.shape == (18, 3, 8, 8)
    d = make_pu("pets", raw, ["ship"], n_labeled=3, seed=0)
    assert d.prior == pytest.approx(1 / 3) and len(d.x_p) == 3 and int(d.u_in_p.sum()) == 3
    assert (d.y_test > 0).sum() == 6
    again = load_image_folder(folder, data_dir=tmp_path)        # from the cache
    assert torch.equal(again.x_train, raw.x_train)


def test_moving_an_image_to_another_class_rebuilds_the_cache(tmp_path):
    """The file counts stay the same, but the labels must follow the move (stale-cache bug)."""
    folder = build_image_folder(tmp_path / "pets")
    before = load_image_folder(folder, data_dir=tmp_path)
    (folder / "train" / "cat" / "0.png").rename(folder / "train" / "dog" / "moved.png")
    (folder / "train" / "dog" / "1.png").rename(folder / "train" / "cat" / "1b.png")
    with pytest.warns(UserWarning, match="stale"):
        after = load_image_folder(folder, data_dir=tmp_path)
    assert after.y_train.bincount().tolist() == before.y_train.bincount().tolist() == [6, 6, 6]
    moved = next(i for i in range(18) if torch.equal(after.x_train[i], before.x_train[0]))
    assert after.classes[after.y_train[moved]] == "dog"        # the old cache would say "cat"


def test_corrupt_cache_is_detected_and_rebuilt(tmp_path):
    folder = build_image_folder(tmp_path / "pets")
    first = load_image_folder(folder, data_dir=tmp_path)
    cache = next((tmp_path / "cache").glob("imagefolder-*.pt"))
    cache.write_bytes(cache.read_bytes()[:100])                 # a partial write
    with pytest.warns(UserWarning, match="unreadable"):
        rebuilt = load_image_folder(folder, data_dir=tmp_path)
    assert torch.equal(rebuilt.x_train, first.x_train)
    torch.save({"version": 1, "signature": {"stale": True}, "data": None}, cache)
    with pytest.warns(UserWarning, match="stale"):
        assert torch.equal(load_image_folder(folder, data_dir=tmp_path).x_test, first.x_test)


# ------------------------------------------------------------------ the PU construction

def toy(n=100):
    y = torch.arange(n) % 4
    return LabeledData(torch.arange(2.0 * n).reshape(n, 2), y, torch.zeros(40, 2), torch.arange(40) % 4,
                       ["a", "b", "c", "d"])


def test_make_pu_is_seeded_and_disjoint_on_request():
    a, b = make_pu("toy", toy(), ["a"], 10, seed=3), make_pu("toy", toy(), ["a"], 10, seed=3)
    assert torch.equal(a.x_p, b.x_p)
    d = make_pu("toy", toy(), ["a", "b"], 10, seed=0, n_unlabeled=50)
    assert len(d.x_u) == 50 and not d.u_in_p.any()
    assert d.prior == pytest.approx(float((d.u_truth > 0).float().mean()))


def test_given_prior_overrides_with_a_warning():
    with pytest.warns(UserWarning, match="positive fraction of U is 0.2500"):
        d = make_pu("toy", toy(), ["a"], 10, prior=0.3)
    assert d.prior == 0.3


def test_unknown_positive_class_lists_the_valid_ones():
    with pytest.raises(ValueError, match=r"unknown positive class\(es\) \['z'\]; valid class names: \['a'"):
        make_pu("toy", toy(), ["a", "z"], 10)


def test_bad_sizes_are_rejected():
    with pytest.raises(ValueError, match="n_labeled=0"):
        make_pu("toy", toy(), ["a"], 0)
    with pytest.raises(ValueError, match="n_unlabeled"):
        make_pu("toy", toy(), ["a"], 10, n_unlabeled=1000)
    with pytest.raises(ValueError, match="unknown data set 'mnist'"):
        load_pu("mnist")


# ------------------------------------------------------------------ offline errors

@pytest.mark.parametrize("loader,expect", [
    (load_cifar10, "cifar-10-batches-py"), (load_cifar100, "cifar-100-python"),
    (load_20news, "20news-bydate"), (load_fashion_mnist, "FashionMNIST/raw"),
])
def test_missing_data_offline_names_files_and_three_fixes(tmp_path, loader, expect):
    with pytest.raises(DatasetNotFoundError) as err:
        loader(tmp_path, download=False)
    msg = str(err.value)
    assert expect in msg and str(tmp_path) in msg
    assert "download=True" in msg and "data_dir=" in msg and "PUSUPPORT_DATA" in msg


def test_failed_download_gives_the_same_clear_error(tmp_path, monkeypatch):
    import torchvision

    def offline(*a, **k):
        raise OSError("no route to host")
    monkeypatch.setattr(torchvision.datasets, "CIFAR10", offline)
    with pytest.raises(DatasetNotFoundError, match="download failed.*no route to host"):
        load_cifar10(tmp_path, download=True)


def test_environment_variable_points_at_the_data(tmp_path, monkeypatch):
    write_cifar100(tmp_path)
    monkeypatch.setenv("PUSUPPORT_DATA", str(tmp_path))
    assert len(load_cifar100(download=False).y_train) == 200


def test_training_runs_on_sparse_features():
    import scipy.sparse as sp
    from pusupport.core.sparse import SparseRows
    rng = np.random.default_rng(0)
    x = sp.random(120, 30, density=0.2, format="csr", random_state=0, dtype=np.float32)
    y = torch.tensor(rng.integers(0, 2, 120))
    raw = LabeledData(SparseRows.from_scipy(x[:80]), y[:80], SparseRows.from_scipy(x[80:]), y[80:],
                      ["neg", "pos"])
    d = make_pu("sparse", raw, ["pos"], 10)
    exact = dict(model="news_mlp", epochs=3, select_from=2, n_select=3, batch_size=32,
                 progress=False, autocast="off")        # float32: sparse layers have no bf16
    h = train(d, **exact).history
    assert h.n_selected.tolist()[:2] == [0, 3] and 3 <= h.n_selected.iloc[-1] <= 6
    assert h.test_error.notna().all()
    dense = make_pu("dense", LabeledData(torch.tensor(x[:80].toarray()), y[:80],
                                         torch.tensor(x[80:].toarray()), y[80:], ["neg", "pos"]),
                    ["pos"], 10)
    h_dense = train(dense, **exact).history
    cols = ["risk", "risk_negative", "test_error", "n_selected"]      # sparse inputs: the same model
    pd.testing.assert_frame_equal(h[cols], h_dense[cols], atol=1e-5, rtol=1e-5)


def test_sparse_rows_gather_and_concatenate_like_scipy():
    import scipy.sparse as sp
    from pusupport.core.sparse import SparseRows, cat_rows
    x = sp.random(50, 12, density=0.3, format="csr", random_state=1, dtype=np.float32)
    rows = SparseRows.from_scipy(x)
    assert len(rows) == 50 and rows.shape == (50, 12)
    index = [7, 0, 7, 49, 3]
    assert np.array_equal(rows[index].to_dense().numpy(), x[index].toarray())
    mask = torch.arange(50) % 3 == 0
    assert np.array_equal(rows[mask].to_dense().numpy(), x[mask.numpy()].toarray())
    assert np.array_equal(rows[10:20].to_dense().numpy(), x[10:20].toarray())
    both = cat_rows([rows[[1, 2]], rows[[40]], rows[5:9]])
    assert np.array_equal(both.to_dense().numpy(), sp.vstack([x[[1, 2]], x[[40]], x[5:9]]).toarray())
    assert torch.equal(rows[index].torch().to_dense(), rows[index].to_dense())


@pytest.mark.parametrize("method, who", [("vpu", "VPU"), ("distpu", "Dist-PU")])
def test_methods_that_mix_inputs_refuse_sparse_rows_with_the_fix(method, who):
    import scipy.sparse as sp
    from pusupport.core.methods import get_method
    from pusupport.core.sparse import SparseRows
    x = sp.random(120, 30, density=0.2, format="csr", random_state=0, dtype=np.float32)
    y = torch.tensor(np.random.default_rng(0).integers(0, 2, 120))
    raw = LabeledData(SparseRows.from_scipy(x[:80]), y[:80], SparseRows.from_scipy(x[80:]), y[80:],
                      ["neg", "pos"])
    assert get_method(method).mixes_inputs
    with pytest.raises(ValueError, match=f"{re.escape(who)} mixes input rows .MixUp., which needs "
                                         "dense rows; .* such as aapu or nnpu"):
        train(make_pu("sparse", raw, ["pos"], 10), method=method, model="news_mlp", epochs=3,
              select_from=2, batch_size=32, progress=False, autocast="off")
