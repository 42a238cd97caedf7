"""Vectorised seeds are the same maths as separate runs."""
import pandas as pd
import pytest
import scipy.sparse
import torch

from pusupport.core import checkpoint, training
from pusupport.data import PUData, synthetic
from pusupport.core.sparse import SparseRows
from pusupport.core.stacking import NotStackable
from dataclasses import replace

from pusupport.core.training import TrainConfig, train, train_grid, train_seeds

SEEDS = [0, 1, 2]


pytestmark = pytest.mark.usefixtures("float64")


def data(seed):
    return synthetic(seed, n_labeled=40, n_unlabeled=300, n_test=500)


@pytest.mark.parametrize("method", ["nnpu", "aapu", "upu", "naive"])
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


def images(seed):
    """A tiny image PU problem (P drawn per seed, U and test shared): bright = positive."""
    gen = torch.Generator().manual_seed(100)
    y = torch.where(torch.rand(90, generator=gen) < 0.4, 1, -1)
    x = torch.rand(90, 3, 32, 32, generator=gen) * 0.5 + 0.25 * (y[:, None, None, None] > 0)
    pool = torch.randperm(200, generator=torch.Generator().manual_seed(seed))[:24]
    x_p = torch.rand(200, 3, 32, 32, generator=torch.Generator().manual_seed(7))[pool] * 0.5 + 0.25
    return PUData("images", x_p, x[:60], y[:60], torch.zeros(60, dtype=torch.bool),
                  x[60:], y[60:], 0.4)


@pytest.mark.parametrize("model, kwargs, method", [
    ("kiryo_cnn", {}, "aapu"), ("coteaching_cnn", {}, "aapu"),
    ("news_mlp", {"activation": "relu"}, "aapu"), ("news_mlp", {"activation": "relu"}, "naive")])
def test_vectorised_image_models_equal_sequential(model, kwargs, method):
    """Grouped convolutions, per-member BatchNorm (masked when S batches differ) and dropout;
    S's padding masked in the risk too (naive's means over P ∪ S count S's real entries)."""
    cfg = dict(method=method, model={"name": model, "width": 0.0625, "dropout": 0.5, **kwargs},
               epochs=5, select_from=2, n_select=7, batch_size=40, lr=3e-3, lr_schedule={},
               progress=False)
    together = train_seeds(images, SEEDS, **cfg)
    sizes = set()
    for seed, vec in zip(SEEDS, together):
        seq = train(images(seed), seed=seed, **cfg)
        cols = ["risk", "risk_positive", "risk_negative", "test_error", "test_auc", "n_selected"]
        pd.testing.assert_frame_equal(vec.history[cols], seq.history[cols], atol=1e-9, rtol=1e-9)
        assert torch.equal(vec.selected.mask, seq.selected.mask)
        for a, b in zip(vec.model.state_dict().values(), seq.model.state_dict().values()):
            assert torch.allclose(a.double(), b.double(), atol=1e-9)
        sizes.add(tuple(vec.history.n_selected))
    assert len(sizes) > 1, "the members' S never differed in size: the masked path went untested"


def test_vectorised_run_resumes_from_its_checkpoint(tmp_path, monkeypatch):
    cfg = dict(method="aapu", epochs=10, select_from=2, n_select=5, batch_size=64, lr=3e-3,
               progress=False, checkpoint_every=3)
    straight = train_seeds(data, SEEDS, **cfg)
    epochs = iter(range(1, 100))

    def interrupted(iterable, *args, **kwargs):         # stop the run during epoch 8
        def epochs_until_8():
            for epoch in iterable:
                if next(epochs) == 8:
                    raise KeyboardInterrupt
                yield epoch
        return real_progress(epochs_until_8(), False)
    real_progress = training.progress
    monkeypatch.setattr(training, "progress", interrupted)
    with pytest.raises(KeyboardInterrupt):
        train_seeds(data, SEEDS, checkpoint_dir=str(tmp_path), **cfg)
    monkeypatch.undo()
    saved = torch.load(checkpoint.path_for(TrainConfig(**cfg, checkpoint_dir=str(tmp_path)), SEEDS),
                       weights_only=False)
    assert saved["epoch"] == 6
    resumed = train_seeds(data, SEEDS, checkpoint_dir=str(tmp_path), **cfg)
    for a, b in zip(resumed, straight):
        cols = [c for c in b.history.columns if c != "wall_time"]
        pd.testing.assert_frame_equal(a.history[cols], b.history[cols])
        assert torch.equal(a.selected.mask, b.selected.mask)
    with pytest.raises(ValueError, match=r"different settings \['lr'\]"):
        train_seeds(data, SEEDS, checkpoint_dir=str(tmp_path), **{**cfg, "lr": 1e-3})


def test_each_member_of_a_settings_stack_equals_its_single_run():
    """Settings stacked as one network — π, the loss, n_select, select_from, re-picks, S's
    weight, the max(0, ·) rule and the method differing by member — give each member its own
    run's numbers."""
    base = dict(epochs=10, batch_size=64, lr=3e-3, lr_schedule={7: 1e-3}, progress=False)
    runs = [(dict(method="aapu", n_select=5, select_from=3), data),
            (dict(method="aapu", n_select=3, select_from=5, allow_repick=False), data),
            (dict(method="aapu", n_select=5, select_from=3, s_weight="union"), data),
            (dict(method="aapu", n_select=5, select_from=3, correction="clamp"), data),
            (dict(method="nnpu", loss="sigmoid"), data),
            (dict(method="nnpu"), lambda seed: replace(data(seed), prior=0.3)),
            (dict(method="upu"), data)]
    configs = [TrainConfig(**base, **changes) for changes, _ in runs]
    together = train_grid([make for _, make in runs], SEEDS, configs)
    cols = ["risk", "risk_positive", "risk_negative", "corrected_fraction", "test_error",
            "test_auc", "n_selected"]
    for config, (_, make), results in zip(configs, runs, together):
        for seed, stacked in zip(SEEDS, results):
            single = train(make(seed), config, seed=seed)
            assert stacked.config == single.config
            pd.testing.assert_frame_equal(stacked.history[cols], single.history[cols],
                                          atol=1e-9, rtol=1e-9)
            assert stacked.picks["index"].tolist() == single.picks["index"].tolist()
            for a, b in zip(stacked.model.state_dict().values(), single.model.state_dict().values()):
                assert torch.allclose(a.double(), b.double(), atol=1e-9)
    assert together[1][0].picks.groupby("epoch").new.all().all()       # never re-picked
    assert together[0][0].history.n_selected.iloc[-1] != together[1][0].history.n_selected.iloc[-1]


def test_settings_that_change_the_network_or_schedule_cannot_share_a_stack():
    configs = [TrainConfig(method="nnpu", epochs=2), TrainConfig(method="nnpu", epochs=2, lr=1e-3)]
    with pytest.raises(NotStackable, match=r"must share \['lr'\]"):
        train_grid(data, SEEDS, configs)


def test_unsupported_settings_are_refused():
    sparse = PUData("sparse", SparseRows.from_scipy(scipy.sparse.random(5, 4, 0.5, format="csr")),
                    SparseRows.from_scipy(scipy.sparse.random(9, 4, 0.5, format="csr")),
                    torch.ones(9), torch.zeros(9, dtype=torch.bool), torch.zeros(0, 4), torch.zeros(0), 0.3)
    with pytest.raises(NotStackable, match="sparse"):
        train_seeds(lambda s: sparse, SEEDS, model="news_mlp", method="nnpu", epochs=1)


def test_members_may_have_their_own_prior():
    """Subsampled U gives each seed its own π: each member's risk uses its own."""
    def drawn(seed):
        return synthetic(seed, n_labeled=40, n_unlabeled=300, n_test=500, prior=0.40 + 0.02 * seed)
    cfg = dict(method="aapu", epochs=6, select_from=3, n_select=5, batch_size=64, lr=3e-3,
               progress=False)
    for seed, vec in zip(SEEDS, train_seeds(drawn, SEEDS, **cfg)):
        seq = train(drawn(seed), seed=seed, **cfg)
        pd.testing.assert_frame_equal(vec.history[["risk", "test_error", "n_selected"]],
                                      seq.history[["risk", "test_error", "n_selected"]], atol=1e-9, rtol=1e-9)


def test_no_test_set_gives_nan_metrics():
    def no_test(seed):
        d = data(seed)
        d.x_test, d.y_test = d.x_test[:0], d.y_test[:0]
        return d
    runs = train_seeds(no_test, SEEDS, method="nnpu", epochs=2, progress=False)
    assert all(r.history.test_error.isna().all() and r.history.test_auc.isna().all() for r in runs)


def test_a_stack_scores_the_same_at_any_batch_size():
    """Stacked members score ``eval_batch_size`` rows at a time across the stack, BatchNorm
    folded once a scoring: the batching moves no number — test metrics, U's selection."""
    cfg = dict(method="aapu", epochs=4, select_from=2, n_select=5, batch_size=64, lr=3e-3,
               progress=False)
    runs = {size: train_seeds(data, SEEDS, eval_batch_size=size, **cfg) for size in (4096, 7, 2)}
    for size in (7, 2):
        for a, b in zip(runs[4096], runs[size]):
            pd.testing.assert_frame_equal(a.history.drop(columns="wall_time"),
                                          b.history.drop(columns="wall_time"), check_exact=True)
            assert torch.equal(a.selected.mask, b.selected.mask)
