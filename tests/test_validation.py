"""Model selection without labels: a PU validation split held out of the training data, each
method's criterion on it (VPU's variational loss; the non-negative PU sigmoid risk for a
method whose authors give none), and the epoch it chooses — from that split alone."""
import math

import pandas as pd
import pytest
import torch
import torch.nn.functional as F
from dataclasses import replace

from pusupport.core.config import DataConfig
from pusupport.core.evaluation import at_own_choice
from pusupport.core.problem import hold_out
from pusupport.core.risks import nnpu_risk
from pusupport.core.baselines.vpu import variational_loss
from pusupport.core.training import train, train_seeds
from pusupport.data import synthetic

RUN = dict(epochs=12, eval_every=3, select_from=4, n_select=3, batch_size=64, lr=3e-3,
           lr_schedule={}, progress=False)


def data(seed):
    return hold_out(synthetic(seed, n_labeled=48, n_unlabeled=360, n_test=400), 1 / 12, seed)


def test_the_split_takes_a_twelfth_of_p_and_of_u_out_of_training_and_keeps_no_label():
    full = synthetic(0, n_labeled=48, n_unlabeled=360, n_test=400)
    held = hold_out(full, 1 / 12, 0)
    assert (len(held.x_p), len(held.x_val_p), len(held.x_u), len(held.x_val_u)) == (44, 4, 330, 30)
    assert len(held.u_truth) == len(held.u_in_p) == 330
    rows = {tuple(r.tolist()) for r in full.x_u}
    assert {tuple(r.tolist()) for r in held.x_val_u} <= rows
    assert not {tuple(r.tolist()) for r in held.x_val_u} & {tuple(r.tolist()) for r in held.x_u}
    assert torch.equal(held.x_test, full.x_test)
    with pytest.raises(ValueError, match="between 0 and 0.5"):
        hold_out(full, 0.6)
    with pytest.raises(ValueError, match=r"validation must be a fraction .* 1/12\) or None, got 2"):
        DataConfig(validation=2)


@pytest.mark.usefixtures("float64")
@pytest.mark.parametrize("method", ["nnpu", "vpu"])
def test_each_criterion_is_its_hand_computed_value_on_the_split(method):
    """VPU: log mean_U φ − mean_P log φ; nnPU (no criterion of its own): Eq. 9's reported
    value with the sigmoid loss at π — on the final model's validation scores."""
    d = data(0)
    r = train(d, method=method, **RUN)
    r.model.eval()
    with torch.no_grad():
        g_p, g_u = r.model(d.x_val_p)[None], r.model(d.x_val_u)[None]
    expected = (variational_loss(F.logsigmoid(g_p), F.logsigmoid(g_u)) if method == "vpu" else
                nnpu_risk(g_p, g_u, d.prior, "sigmoid").value)
    assert r.history.val_risk.iloc[-1] == pytest.approx(float(expected), abs=1e-9)
    assert r.history.val_risk.isna().sum() == 12 - 4           # scored at evaluated epochs only


def test_vpus_chosen_epoch_comes_from_the_validation_split_only():
    """Corrupting every test label changes the test errors, not the choice."""
    d = data(0)
    clean = train(d, method="vpu", **RUN).history
    corrupt = train(replace(d, y_test=-d.y_test), method="vpu", **RUN).history
    pd.testing.assert_series_equal(clean.val_risk, corrupt.val_risk)
    assert not clean.test_error.dropna().equals(corrupt.test_error.dropna())
    a, b = at_own_choice(clean), at_own_choice(corrupt)
    assert a.epoch.tolist() == b.epoch.tolist()
    assert a.val_risk.iloc[0] == clean.val_risk.min()
    assert a.test_error.iloc[0] + b.test_error.iloc[0] == pytest.approx(1.0)


@pytest.mark.usefixtures("float64")
def test_stacked_seeds_score_the_split_as_single_runs_do():
    together = train_seeds(data, [0, 1], method="aapu", **RUN)
    for seed, run in zip([0, 1], together):
        alone = train(data(seed), seed=seed, method="aapu", **RUN)
        pd.testing.assert_series_equal(run.history.val_risk, alone.history.val_risk, atol=1e-9, rtol=1e-9)


def test_runs_without_a_split_record_no_criterion_and_have_no_choice():
    history = train(synthetic(0, n_labeled=48, n_unlabeled=360, n_test=400), method="nnpu", **RUN).history
    assert "val_risk" not in history
    assert at_own_choice(history).empty
    ties = pd.DataFrame({"method": "m", "seed": 0, "epoch": [3, 6, 9], "val_risk": [0.2, 0.1, 0.1]})
    assert at_own_choice(ties).epoch.tolist() == [6]
    assert math.isnan(pd.DataFrame({"val_risk": [math.nan]}).val_risk.min())


#: Every method that trains and chooses its own epoch (the oracle reads U's hidden labels by
#: design: a counterfactual, never chosen for; nnPUSB is nnPU's run).
CHOOSING = ("nnpu", "nnpu_sigmoid", "aapu", "vpu", "distpu", "robustpu", "negsel")


def _fashion_mnist(seed):
    from test_datasets import DATA, need
    from pusupport.data.datasets import load_pu
    need(DATA is not None, "PUSUPPORT_DATA with Fashion-MNIST (make data)")
    d = load_pu("fashion_mnist", DATA, n_labeled=48, n_unlabeled=360, seed=seed, download=False)
    return hold_out(replace(d, x_test=d.x_test[:400], y_test=d.y_test[:400]), 1 / 12, seed)


@pytest.mark.parametrize("make", [data, _fashion_mnist], ids=["synthetic", "fashion_mnist"])
def test_every_method_s_own_choice_reads_only_the_held_out_split(make):
    """Every test label and every hidden label of U flipped: each method's criterion on the
    split and its chosen epoch are unchanged, its test errors are not."""
    d = make(0)
    blind = replace(d, y_test=-d.y_test, u_truth=-d.u_truth)
    for method in CHOOSING:
        clean, flipped = (train(x, method=method, **RUN).history for x in (d, blind))
        assert clean.val_risk.notna().sum() >= 2, method               # a choice among epochs
        pd.testing.assert_series_equal(clean.val_risk, flipped.val_risk, obj=method)
        assert at_own_choice(clean).epoch.tolist() == at_own_choice(flipped).epoch.tolist(), method
        assert not clean.test_error.dropna().equals(flipped.test_error.dropna()), method


@pytest.mark.usefixtures("float64")
def test_your_data_keep_a_stopping_recipes_model_at_its_stop():
    """Robust-PU through the command line, the Python estimator or the own-data page
    (``own.fit``): its patience reads a PU split held out of training, and the model kept is
    the run's at the stop, trained again — every epoch it shares with the run equal to it. A
    method that never stops trains once, on all of the data."""
    from pusupport.apps import own
    from pusupport.core.config import TrainConfig, authors_recipe
    full = synthetic(0, n_labeled=48, n_unlabeled=360, n_test=400)
    cfg = authors_recipe(TrainConfig(method="robustpu", **{**RUN, "epochs": 40}))
    kept, said = own.fit(full, cfg)
    whole = train(hold_out(full, own.STOP_SPLIT, cfg.seed), cfg).history
    stop = int(at_own_choice(whole).epoch.iloc[0])
    assert 4 < stop < whole.epoch.max() == 40                  # a weighted epoch, before the last
    assert kept.history.epoch.max() == stop and f"after epoch {stop} of the 40 trained" in said
    assert "(4 labelled, 30 unlabelled)" in said
    shared = ["epoch", "risk", "test_error", "test_auc", "val_risk"]
    pd.testing.assert_frame_equal(kept.history[shared].reset_index(drop=True),
                                  whole[whole.epoch <= stop][shared].reset_index(drop=True))
    plain = TrainConfig(method="nnpu", **RUN)
    kept, said = own.fit(full, plain)
    assert said == "" and len(kept.history) == 12
    pd.testing.assert_frame_equal(kept.history.drop(columns="wall_time"),
                                  train(full, plain).history.drop(columns="wall_time"))
