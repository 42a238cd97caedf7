"""bf16 autocast (the default on CPUs with native bf16) against float32: final test error
within a stated tolerance on the synthetic and Fashion-MNIST setups, paired by seed."""
import os

import pytest
import torch

from pusupport.data import synthetic
from pusupport.core.training import train_seeds

#: Largest accepted |mean over seeds of bf16 − fp32 final test error|.
TOLERANCE = 0.01


def _final_errors(make_data, seeds, **cfg):
    out = {}
    for autocast in ("off", "bf16"):
        runs = train_seeds(make_data, seeds, autocast=autocast, eval_every=0, progress=False,
                           device="cpu", **cfg)
        out[autocast] = torch.tensor([r.history.test_error.iloc[-1] for r in runs])
    return out["bf16"] - out["off"]


@pytest.mark.parametrize("method", ["nnpu", "aapu"])
def test_bf16_and_fp32_end_within_tolerance_on_synthetic(method):
    """§4.1's model and settings, 200 epochs (selection from 100), 5 seeds."""
    diff = _final_errors(synthetic, range(5), method=method, epochs=200, select_from=100)
    assert abs(float(diff.mean())) <= TOLERANCE, diff


def test_bf16_and_fp32_end_within_tolerance_on_fashion_mnist():
    from pusupport.data.datasets import DatasetNotFoundError, FASHION_MNIST_POSITIVE, load_fashion_mnist, make_pu
    try:
        raw = load_fashion_mnist(os.environ.get("PUSUPPORT_DATA"), download=False)
    except DatasetNotFoundError as err:
        if os.environ.get("CI"):
            raise
        pytest.skip(str(err).splitlines()[0])
    data = lambda seed: make_pu("fashion_mnist", raw, FASHION_MNIST_POSITIVE, n_labeled=1000,  # noqa: E731
                                n_unlabeled=10_000, seed=seed)
    diff = _final_errors(data, range(3), method="aapu", epochs=6, batch_size=2000, select_from=2,
                         n_select=750, weight_decay=5e-4, lr_schedule={},
                         model={"name": "news_mlp", "activation": "relu"})
    assert abs(float(diff.mean())) <= TOLERANCE, diff
