"""bf16 autocast (the default on CPUs with native bf16) against float32, on what the
verdicts test: the paired aaPU − nnPU difference of final test error moves by less than a
quarter of its 95 % interval's half-width (synthetic and Fashion-MNIST setups, 6 seeds)."""
import os

import pytest

from pusupport.book.verdicts import paired_difference
from pusupport.core.training import train_seeds
from pusupport.data import synthetic


def _shift(make_data, **cfg):
    """(fp32 paired difference, bf16 paired difference) of aaPU − nnPU over 6 seeds."""
    errors = {}
    for method in ("nnpu", "aapu"):
        for autocast in ("off", "bf16"):
            runs = train_seeds(make_data, range(6), method=method, autocast=autocast, eval_every=0,
                               progress=False, device="cpu", **cfg)
            errors[method, autocast] = [r.history.test_error.iloc[-1] for r in runs]
    return (paired_difference(errors["aapu", "off"], errors["nnpu", "off"]),
            paired_difference(errors["aapu", "bf16"], errors["nnpu", "bf16"]))


def test_bf16_keeps_the_synthetic_paired_difference():
    """§4.1's model and settings, 200 epochs (selection from 100)."""
    fp32, bf16 = _shift(synthetic, epochs=200, select_from=100)
    assert abs(bf16.mean - fp32.mean) <= (fp32.high - fp32.low) / 8, (fp32, bf16)


def test_bf16_keeps_the_fashion_mnist_paired_difference():
    from pusupport.data.datasets import DatasetNotFoundError, FASHION_MNIST_POSITIVE, load_fashion_mnist, make_pu
    try:
        raw = load_fashion_mnist(os.environ.get("PUSUPPORT_DATA"), download=False)
    except DatasetNotFoundError as err:
        if os.environ.get("CI"):
            raise
        pytest.skip(str(err).splitlines()[0])
    data = lambda seed: make_pu("fashion_mnist", raw, FASHION_MNIST_POSITIVE, n_labeled=1000,  # noqa: E731
                                n_unlabeled=10_000, seed=seed)
    fp32, bf16 = _shift(data, epochs=6, batch_size=2000, select_from=2, n_select=750,
                        weight_decay=5e-4, lr_schedule={}, model={"name": "news_mlp", "activation": "relu"})
    assert abs(bf16.mean - fp32.mean) <= (fp32.high - fp32.low) / 8, (fp32, bf16)
