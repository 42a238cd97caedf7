"""Real data sets turned into PU problems, online (official downloads) or offline.

Where data live: the ``data_dir`` argument, else the ``PUSUPPORT_DATA``
environment variable, else ``~/.cache/pusupport``. Each loader looks for the
official layout and for local copies (ImageFolder, the 20News bydate folders),
decodes once, and caches the decoded tensors under ``<data_dir>/cache``.
"""
from __future__ import annotations

import gzip
import pickle
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from ..core.atomic import replacing
from ..core.problem import LabeledData, PUData, make_pu
from ..core.sparse import SparseRows
from .files import DatasetNotFoundError, cached, data_root, fetch_official
from .images import load_image_folder

# ---------------------------------------------------------------- CIFAR

CIFAR10_POSITIVE = ["airplane", "automobile", "ship", "truck"]
CIFAR100_POSITIVE = ["aquatic_mammals", "fish", "insects", "large_carnivores",
                     "large_omnivores_and_herbivores", "medium_mammals",
                     "non-insect_invertebrates", "people", "reptiles", "small_mammals"]


def _unpickle(path: Path) -> dict:
    with open(path, "rb") as f:
        return pickle.load(f, encoding="latin1")


def _cifar_pickles(folder: Path, batches: list[str], label_key: str):
    xs, ys = [], []
    for b in batches:
        d = _unpickle(folder / b)
        xs.append(np.asarray(d["data"], dtype=np.uint8).reshape(-1, 3, 32, 32))
        ys += list(d[label_key])
    return torch.from_numpy(np.concatenate(xs)), torch.tensor(ys)


def load_cifar10(data_dir=None, download: bool = True) -> LabeledData:
    """CIFAR-10: official ``cifar-10-batches-py``, or an ImageFolder copy, or a download."""
    root = data_root(data_dir)
    for name in ("cifar10-jpeg", "cifar10"):
        if (root / name / "train").is_dir():
            return load_image_folder(root / name, data_dir=root)
    official = root / "cifar-10-batches-py"
    if not official.is_dir() and download:
        fetch_official(lambda where: __import__("torchvision").datasets.CIFAR10(where, download=True),
                  "CIFAR-10", root, ["cifar-10-batches-py/", "cifar10-jpeg/{train,test}/<class>/*"])
    if not official.is_dir():
        raise DatasetNotFoundError("CIFAR-10", root, ["cifar-10-batches-py/",
                                   "cifar10-jpeg/{train,test}/<class>/*", "cifar10/{train,test}/<class>/*"],
                                   "the official archive through torchvision")
    meta = _unpickle(official / "batches.meta")["label_names"]
    train = _cifar_pickles(official, [f"data_batch_{i}" for i in range(1, 6)], "labels")
    test = _cifar_pickles(official, ["test_batch"], "labels")
    return LabeledData(*train, *test, list(meta))


def load_cifar100(data_dir=None, download: bool = True) -> LabeledData:
    """CIFAR-100 with its 20 coarse (superclass) labels, from the official pickle.

    torchvision's class exposes only the fine labels, so the pickles are read here.
    """
    root = data_root(data_dir)
    if (root / "cifar100" / "train").is_dir():
        return load_image_folder(root / "cifar100", data_dir=root)
    official = root / "cifar-100-python"
    if not official.is_dir() and download:
        fetch_official(lambda where: __import__("torchvision").datasets.CIFAR100(where, download=True),
                  "CIFAR-100", root, ["cifar-100-python/{train,test,meta}",
                                      "cifar100/{train,test}/<superclass>/*"])
    if not (official / "train").exists():
        raise DatasetNotFoundError("CIFAR-100", root, ["cifar-100-python/{train,test,meta}",
                                   "cifar100/{train,test}/<superclass>/*"],
                                   "the official archive through torchvision")
    classes = _unpickle(official / "meta")["coarse_label_names"]
    train = _cifar_pickles(official, ["train"], "coarse_labels")
    test = _cifar_pickles(official, ["test"], "coarse_labels")
    return LabeledData(*train, *test, list(classes))


# ---------------------------------------------------------------- Fashion-MNIST

#: Chen et al. (2020, VPU), problem "F-MNIST-1": trouser, coat and sneaker are positive.
FASHION_MNIST_POSITIVE = ["Trouser", "Coat", "Sneaker"]
FASHION_MNIST_FILES = ["train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                       "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"]


def load_fashion_mnist(data_dir=None, download: bool = True) -> LabeledData:
    """Fashion-MNIST through torchvision (raw files in ``<data_dir>/FashionMNIST/raw``),
    decoded once and cached: a build that reads the cache imports no torchvision (3 s, its
    models import torch._dynamo).

    Images are 1×28×28 uint8.
    """
    root = data_root(data_dir)
    raw = root / "FashionMNIST" / "raw"
    for f in FASHION_MNIST_FILES:          # accept the .gz files alone (as Debian ships them)
        if not (raw / f).exists() and (raw / f"{f}.gz").exists():
            with gzip.open(raw / f"{f}.gz") as src, replacing(raw / f) as tmp, open(tmp, "wb") as dst:
                shutil.copyfileobj(src, dst)
    have = all((raw / f).exists() for f in FASHION_MNIST_FILES)
    if not have and download:
        from torchvision.datasets import FashionMNIST
        fetch_official(lambda where: FashionMNIST(where, download=True), "Fashion-MNIST", root,
                  [f"FashionMNIST/raw/{f}" for f in FASHION_MNIST_FILES])
        have = True
    if not have:
        raise DatasetNotFoundError("Fashion-MNIST", root, [f"FashionMNIST/raw/{f}[.gz]"
                                   for f in FASHION_MNIST_FILES], "the official files through torchvision")

    def build():
        from torchvision.datasets import FashionMNIST
        train, test = FashionMNIST(root, train=True), FashionMNIST(root, train=False)
        return {"train": (train.data.unsqueeze(1), train.targets), "test": (test.data.unsqueeze(1), test.targets),
                "classes": list(train.classes)}
    stats = {f: (raw / f).stat() for f in FASHION_MNIST_FILES}       # a file replaced: rebuilt
    signature = {"path": str(raw.resolve()), **{f: [s.st_size, s.st_mtime_ns] for f, s in stats.items()}}
    data = cached(root, "fashion-mnist", signature, build)
    return LabeledData(*data["train"], *data["test"], data["classes"])


# ---------------------------------------------------------------- 20 Newsgroups

NEWS_POSITIVE = ["sci.*", "soc.*", "talk.*"]


def most_frequent(documents, n: int) -> list[str]:
    """The ``n`` words most frequent in ``documents`` (scikit-learn's ``max_features``:
    counted over the whole corpus), ties broken alphabetically — a stable sort, where
    scikit-learn's unstable one keeps other tied words on another CPU's SIMD sort — in
    alphabetical order, as scikit-learn orders its columns."""
    from sklearn.feature_extraction.text import CountVectorizer
    counter = CountVectorizer(lowercase=True)
    counts = np.asarray(counter.fit_transform(documents).sum(axis=0)).ravel()
    words = counter.get_feature_names_out().astype(str)
    return sorted(words[np.lexsort((words, -counts))[:n]])


def load_20news(data_dir=None, download: bool = True, max_features: int | None = None) -> LabeledData:
    """20 Newsgroups (bydate split) as sparse tf-idf bag-of-words rows.

    Tokens: scikit-learn's default word pattern (2+ alphanumerics), lower-cased; the
    vocabulary is the training set's (optionally its ``max_features`` most frequent
    words, ties broken alphabetically: :func:`most_frequent`); weights: sublinear tf ×
    idf, each row L2-normalised. Documents are the raw posts (headers kept), as
    ``fetch_20newsgroups`` returns them.
    """
    from sklearn.datasets import fetch_20newsgroups, load_files
    from sklearn.feature_extraction.text import TfidfVectorizer
    root = data_root(data_dir)
    candidates = [root, root / "20news_home"]
    folder = next((c for c in candidates if (c / "20news-bydate-train").is_dir()), None)
    ties = {"ties": "alphabetical"} if max_features else {}      # caches from before most_frequent are stale
    if folder is not None:
        signature = {"path": str(folder.resolve()), "max_features": max_features, **ties}

        def read():
            return {s: load_files(folder / f"20news-bydate-{s}", encoding="latin1", shuffle=False)
                    for s in ("train", "test")}
    elif download:
        signature = {"path": "sklearn", "max_features": max_features, **ties}

        def read():
            return fetch_official(lambda where: {s: fetch_20newsgroups(data_home=str(where), subset=s,
                                                                  shuffle=False, download_if_missing=True)
                                            for s in ("train", "test")},
                             "20 Newsgroups", root, ["20news-bydate-train/<group>/*"])
    else:
        raise DatasetNotFoundError("20 Newsgroups", root,
                                   ["20news-bydate-{train,test}/<group>/*",
                                    "20news_home/20news-bydate-{train,test}/<group>/*"],
                                   "the bydate archive through scikit-learn")

    def build():
        raw = read()
        vocabulary = None if max_features is None else most_frequent(raw["train"].data, max_features)
        vec = TfidfVectorizer(lowercase=True, sublinear_tf=True, vocabulary=vocabulary, dtype=np.float32)
        x_train = vec.fit_transform(raw["train"].data)
        x_test = vec.transform(raw["test"].data)
        return {"train": (SparseRows.from_scipy(x_train), torch.tensor(raw["train"].target)),
                "test": (SparseRows.from_scipy(x_test), torch.tensor(raw["test"].target)),
                "classes": list(raw["train"].target_names)}
    data = cached(root, f"20news-{max_features or 'all'}", signature, build)
    return LabeledData(*data["train"], *data["test"], data["classes"])


# ---------------------------------------------------------------- registry

DATASETS = {
    "cifar10": (load_cifar10, CIFAR10_POSITIVE),
    "cifar100": (load_cifar100, CIFAR100_POSITIVE),
    "20news": (load_20news, NEWS_POSITIVE),
    "fashion_mnist": (load_fashion_mnist, FASHION_MNIST_POSITIVE),
}


def sample_test_split(labeled: LabeledData, n_test: int | None, clip: bool = False) -> LabeledData:
    """``labeled`` with ``n_test`` rows of its test split (None: all of them), drawn once
    for every seed (a generator seeded 0), so the seeds share one test set as in the paper;
    with ``clip`` (a profile's size on your own data), at most the split's rows."""
    total = len(labeled.y_test)
    n_test = min(n_test, total) if clip and n_test is not None else n_test
    if n_test is None or n_test == total:
        return labeled
    if n_test > total:
        raise ValueError(f"n_test={n_test}: the test split has only {total} rows; set data.n_test "
                         f"to at most {total}, or None for the whole split")
    rows = torch.randperm(total, generator=torch.Generator().manual_seed(0))[:n_test].sort().values
    return replace(labeled, x_test=labeled.x_test[rows], y_test=labeled.y_test[rows])


def load_pu(name: str, data_dir=None, n_labeled: int = 1000, seed: int = 0, positive=None,
            n_unlabeled: int | None = None, prior: float | None = None, download: bool = True,
            **load_kwargs) -> PUData:
    """The PU problem of Table 1 for data set ``name`` (see ``DATASETS``)."""
    if name not in DATASETS:
        raise ValueError(f"unknown data set {name!r}: use one of {sorted(DATASETS)} "
                         "or load_image_folder() for your own images")
    loader, default_positive = DATASETS[name]
    data = loader(data_dir=data_dir, download=download, **load_kwargs)
    return make_pu(name, data, positive or default_positive, n_labeled, seed, n_unlabeled, prior)
