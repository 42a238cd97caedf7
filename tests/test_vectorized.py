"""Vectorised seeds are the same maths as separate runs."""
import pandas as pd
import pytest
import torch

from pusupport.data import synthetic
from pusupport.training import train
from pusupport.vectorized import train_seeds

SEEDS = [0, 1, 2]


@pytest.fixture(autouse=True)
def float64():
    """Compare in double precision, so that rounding cannot flip an nnPU branch or a pick."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)


def data(seed):
    return synthetic(seed, n_labeled=40, n_unlabeled=300, n_test=500)


@pytest.mark.parametrize("method", ["nnpu", "aapu", "upu"])
def test_vectorised_equals_sequential(method):
    cfg = dict(method=method, epochs=12, select_from=3, n_select=5, batch_size=64, lr=3e-3,
               lr_schedule={8: 1e-3}, progress=False)
    together = train_seeds(data, SEEDS, **cfg)
    for seed, vec in zip(SEEDS, together):
        seq = train(data(seed), seed=seed, **cfg)
        cols = ["risk", "risk_positive", "risk_negative", "corrected_fraction", "test_error",
                "test_auc", "n_selected", "purity"]
        pd.testing.assert_frame_equal(vec.history[cols], seq.history[cols], atol=1e-9, rtol=1e-9)
        assert torch.equal(vec.selected.mask, seq.selected.mask)
        assert vec.picks["index"].tolist() == seq.picks["index"].tolist()
        for a, b in zip(vec.model.state_dict().values(), seq.model.state_dict().values()):
            assert torch.allclose(a.double(), b.double(), atol=1e-9)
    if method == "nnpu":   # both branches of the nnPU rule were exercised
        corrected = pd.concat([r.history for r in together]).corrected_fraction
        assert (corrected > 0).any() and (corrected < 1).any()


def test_unsupported_settings_are_refused():
    with pytest.raises(ValueError, match="use train\\(\\) per seed"):
        train_seeds(data, SEEDS, model="kiryo_cnn")
    with pytest.raises(ValueError, match="use train\\(\\) per seed"):
        train_seeds(data, SEEDS, method="naive")
