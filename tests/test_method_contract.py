"""The method contract: a method that needs the batch's inputs, a second forward pass on
mixed inputs and per-U-point state trains through the unchanged loop, single and stacked."""
import pandas as pd
import pytest
import torch

from pusupport.core import checkpoint
from pusupport.core.losses import logistic_loss
from pusupport.core.methods import METHODS, Method, register
from pusupport.core.risks import Risk, nnpu_risk
from pusupport.core.training import train, train_seeds
from pusupport.data import synthetic

SEEDS = [0, 1, 2]


def _mix_risk(batch) -> Risk:
    """nnPU plus a mixup consistency term (VPU-style): mix each U row with a P row, score the
    mix in a second forward pass, and pull it towards the mixed scores; U rows are weighted
    by a per-point weight that :func:`_reweight` updates between epochs."""
    base = nnpu_risk(batch.g_p, batch.g_u, batch.prior, batch.config.loss)
    x_p, x_u, _ = batch.inputs()
    n = min(x_p.shape[1], x_u.shape[1])
    mu = 0.3
    mixed = mu * x_u[:, :n] + (1 - mu) * x_p[:, :n]
    target = (mu * torch.sigmoid(batch.g_u[:, :n]) + (1 - mu) * torch.sigmoid(batch.g_p[:, :n])).detach()
    weight = batch.state["weight"].gather(1, batch.index_u[:, :n])
    consistency = (weight * (torch.sigmoid(batch.forward(mixed)) - target) ** 2).mean(-1)
    objective = base.objective + 0.1 * consistency
    return Risk(base.value + 0.1 * consistency.detach(), objective, base.positive, base.negative,
                base.corrected)


def _reweight(end) -> None:
    """Between epochs: U points that look positive (small ℓ(g), large ℓ(−g)) weigh less."""
    end.state["weight"].copy_(torch.exp(-logistic_loss(-end.u_losses().clamp(max=20.0))))
    end.state["epochs_seen"] += 1


@pytest.fixture(scope="module", autouse=True)
def mix_method():
    method = register(Method(
        "test_mix", "mixup test method", "nnPU + mixup consistency, per-point weights (test only)",
        risk=_mix_risk, passes=6,
        init_state=lambda n_u, seeds, device: {"weight": torch.ones(len(seeds), n_u, device=device),
                                                "epochs_seen": torch.zeros(len(seeds), device=device)},
        end_epoch=_reweight))
    yield method
    del METHODS[method.name]


pytestmark = pytest.mark.usefixtures("float64")


def data(seed):
    return synthetic(seed, n_labeled=40, n_unlabeled=300, n_test=500)


CFG = dict(method="test_mix", epochs=6, batch_size=64, lr=3e-3, lr_schedule={}, progress=False)


def test_a_mixup_method_trains_single_and_stacked_with_the_same_maths():
    together = train_seeds(data, SEEDS, **CFG)
    cols = ["risk", "risk_positive", "risk_negative", "test_error", "test_auc"]
    for seed, stacked in zip(SEEDS, together):
        single = train(data(seed), seed=seed, **CFG)
        pd.testing.assert_frame_equal(stacked.history[cols], single.history[cols],
                                      atol=1e-9, rtol=1e-9)
        assert stacked.history.test_error.iloc[-1] < 0.45       # it learned something
    # the mixup term moved the weights: not plain nnPU
    nnpu = train(data(0), seed=0, **{**CFG, "method": "nnpu"})
    assert not nnpu.history.risk.equals(train(data(0), seed=0, **CFG).history.risk)


def test_its_per_point_state_is_checkpointed_and_resumed(tmp_path, monkeypatch):
    cfg = {**CFG, "checkpoint_dir": str(tmp_path / "run"), "checkpoint_every": 3}
    whole = train(data(1), seed=1, **{**cfg, "checkpoint_dir": str(tmp_path / "whole")})
    save = checkpoint.save

    def crash_after_first(path, state):          # the run dies after its epoch-3 checkpoint
        save(path, state)
        raise KeyboardInterrupt

    monkeypatch.setattr(checkpoint, "save", crash_after_first)
    with pytest.raises(KeyboardInterrupt):
        train(data(1), seed=1, **cfg)
    monkeypatch.setattr(checkpoint, "save", save)
    saved = torch.load(next((tmp_path / "run").glob("*.pt")), weights_only=False)
    assert saved["epoch"] == 3 and float(saved["method_state"][0]["epochs_seen"][0]) == 3
    assert not torch.all(saved["method_state"][0]["weight"] == 1)
    resumed = train(data(1), seed=1, **cfg)
    pd.testing.assert_frame_equal(resumed.history.drop(columns="wall_time"),
                                  whole.history.drop(columns="wall_time"))


def test_a_threshold_read_from_rows_the_loop_does_not_score_is_refused():
    with pytest.raises(ValueError, match="use 'x_u' .* or 'x_test'"):
        register(Method("bad_threshold", "bad", "", risk=lambda b: None, threshold_on="x_val"))


def test_a_method_with_a_choice_of_its_own_says_which_in_words():
    """The standing page's table names each method's label-free choice from its declaration:
    a method with its own criterion or early stop says which (VPU, Robust-PU); the others
    read the book's."""
    for m in METHODS.values():
        assert bool(m.criterion) == bool(m.validation or m.stop), m.name
