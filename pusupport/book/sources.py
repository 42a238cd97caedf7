"""The PU data a page's runs see: a data set at some data settings, drawn per seed."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..core.config import DataConfig, merge


def data_for(dataset: str, data: DataConfig, data_dir: Path | None = None, **changes):
    """A function seed → PUData for ``dataset`` at data settings ``data`` with ``changes``
    (e.g. ``n_labeled=8000``), loaded once and drawn per seed. Raises
    :class:`~pusupport.data.DatasetNotFoundError` at once when the data set is neither on
    disk nor downloadable."""
    from ..data.synthetic import synthetic
    from ..data.datasets import DATASETS, make_pu, sample_test_split
    from ..core.problem import hold_out
    data = merge(data, changes, "data")
    if dataset == "synthetic":
        opts = data.kwargs("n_labeled", "n_unlabeled", "n_test")
        make = lambda seed: synthetic(seed, **opts)           # noqa: E731
    else:
        labeled, positive = sample_test_split(_labeled(dataset, data, data_dir), data.n_test), DATASETS[dataset][1]
        opts = data.kwargs("n_labeled", "n_unlabeled")
        make = lambda seed: make_pu(dataset, labeled, positive, seed=seed, **opts)  # noqa: E731
    if data.validation is None:
        return make
    return lambda seed: hold_out(make(seed), data.validation, seed)


def with_prior(make, prior: float | None):
    """``make`` (seed → PUData) with π ``prior`` given to the method (None: the data's)."""
    return make if prior is None else lambda seed: replace(make(seed), prior=prior)


def _labeled(dataset: str, data: DataConfig, data_dir: Path | None):
    from ..data.datasets import DATASETS
    return DATASETS[dataset][0](data_dir=data_dir, **data.kwargs("max_features"))


def data_source(dataset: str, data: DataConfig, data_dir: Path | None = None) -> dict:
    """What a page's PU data are drawn from on any seed: the data set's name and a checksum
    of its labelled train and test split as loaded (another copy of the data set, e.g. a
    re-encoded one, has another); the §4.1 data come from their generator."""
    if dataset == "synthetic":
        return {"name": "synthetic", "checksum": "drawn by pusupport.data.synthetic"}
    from ..core.identity import checksum
    d = _labeled(dataset, data, data_dir)
    return {"name": dataset, "checksum": checksum(d.x_train, d.y_train, d.x_test, d.y_test)}
