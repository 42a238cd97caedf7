"""Training loop: determinism, selection schedule, batching, validation."""
import json

import pandas as pd
import pytest
import torch

from pusupport.data import SYNTHETIC_PRIOR, PUData, flip_labels, supervised, synthetic
from pusupport.core.selection import top_k_purity, unlabeled_losses
from pusupport.book.records import save_results
from pusupport.core.runtime import resolve
from pusupport.core.batches import stratified_batches
from pusupport.core.training import TrainConfig, train

FAST = dict(epochs=6, select_from=3, n_select=4, batch_size=64, lr=1e-3, progress=False)
TIMING = ["wall_time"]


@pytest.fixture(scope="module")
def data():
    return synthetic(seed=0, n_labeled=40, n_unlabeled=300, n_test=500)


def test_same_seed_same_history(data):
    a = train(data, method="aapu", seed=3, **FAST)
    b = train(data, method="aapu", seed=3, **FAST)
    pd.testing.assert_frame_equal(a.history.drop(columns=TIMING), b.history.drop(columns=TIMING))
    assert a.picks.equals(b.picks)
    for p, q in zip(a.model.parameters(), b.model.parameters()):
        assert torch.equal(p, q)


def test_different_seeds_differ(data):
    a = train(data, method="nnpu", seed=0, **FAST)
    b = train(data, method="nnpu", seed=1, **FAST)
    assert not a.history.test_error.equals(b.history.test_error) or not a.history.risk.equals(b.history.risk)


def test_history_is_tidy_and_selection_follows_schedule(data):
    h = train(data, method="aapu", **FAST).history
    assert list(h.columns) == ["method", "seed", "epoch", "lr", "risk", "risk_positive",
                               "risk_negative", "corrected_fraction", "test_error", "test_auc",
                               "test_ap", "n_selected", "purity", "wall_time",
                               "test_error:nnpusb", "test_wrong:nnpusb", "test_wrong"]
    assert h.epoch.tolist() == list(range(1, 7))
    assert h.n_selected.tolist()[:2] == [0, 0]            # nothing before select_from
    sizes = h.n_selected.tolist()
    assert sizes[2] == 4 and all(0 <= b - a <= 4 for a, b in zip(sizes, sizes[1:]))



def test_reported_test_metrics_are_those_of_the_returned_model(data):
    from sklearn.metrics import average_precision_score, roc_auc_score
    from pusupport.core.models import predict
    r = train(data, method="aapu", **FAST)
    g = predict(r.model, data.x_test, amp=resolve(r.config).bf16)      # the run's precision
    last = r.history.iloc[-1]
    assert last.test_error == pytest.approx(float(((g > 0) != (data.y_test > 0)).double().mean()))
    assert last.test_auc == pytest.approx(roc_auc_score(data.y_test.numpy(), g.numpy()))
    assert last.test_ap == pytest.approx(average_precision_score(data.y_test.numpy() > 0, g.numpy()))
    assert last.test_error < 0.45                       # it learned something in six epochs


def test_the_final_per_point_errors_are_those_the_test_error_counts(data):
    """The last row keeps each test point's error, packed: their mean is ``test_error``
    exactly, alone and stacked, and nnPUSB's view keeps its own."""
    from pusupport.core.metrics import pack_rows, unpack_rows
    from pusupport.core.models import predict
    from pusupport.core.training import train_seeds
    assert pack_rows(torch.tensor([True, False, True, True, False])) == "5:b0"
    assert unpack_rows("5:b0") == [True, False, True, True, False]
    r = train(data, method="nnpu", **FAST)
    last = r.history.iloc[-1]
    g = predict(r.model, data.x_test, amp=resolve(r.config).bf16)
    assert unpack_rows(last.test_wrong) == ((g > 0) != (data.y_test > 0)).tolist()
    assert r.history.test_wrong.iloc[:-1].isna().all()
    for h in [r.history] + [x.history for x in train_seeds(lambda s: data, [0, 1], method="nnpu", **FAST)]:
        last = h.iloc[-1]
        for wrong, error in ((last.test_wrong, last.test_error),
                             (last["test_wrong:nnpusb"], last["test_error:nnpusb"])):
            assert len(unpack_rows(wrong)) == len(data.y_test)
            assert sum(unpack_rows(wrong)) / len(data.y_test) == error


def test_nnpu_and_upu_never_select(data):
    for method in ("nnpu", "upu"):
        assert (train(data, method=method, **FAST).history.n_selected == 0).all()


def test_hidden_labels_never_influence_training(data):
    shuffled = PUData(**{**data.__dict__, "u_truth": -data.u_truth})
    a = train(data, method="aapu", **FAST).history
    b = train(shuffled, method="aapu", **FAST).history
    cols = ["risk", "test_error", "n_selected"]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    assert (a.purity.dropna() + b.purity.dropna()).round(9).eq(1).all()


def test_lr_schedule_is_piecewise_constant():
    cfg = TrainConfig(lr=1e-4, lr_schedule={50: 5e-5, 100: 1e-5}, epochs=200)
    assert [cfg.lr_at(e) for e in (1, 50, 51, 100, 101, 200)] == [1e-4, 1e-4, 5e-5, 5e-5, 1e-5, 1e-5]
    h = train(synthetic(0, 20, 100, 100), epochs=3, lr_schedule={1: 1e-5}, method="nnpu",
              progress=False).history
    assert h.lr.tolist() == [1e-4, 1e-5, 1e-5]


def test_batches_keep_the_proportions():
    gen = torch.Generator().manual_seed(0)
    s = torch.arange(100, 150)
    batches = stratified_batches(100, 1000, s, 128, gen)
    assert len(batches) == 9
    assert sorted(torch.cat([b[0] for b in batches]).tolist()) == list(range(100))
    assert sorted(torch.cat([b[1] for b in batches]).tolist()) == list(range(1000))
    assert sorted(torch.cat([b[2] for b in batches]).tolist()) == s.tolist()
    for p, u, sel in batches:
        assert abs(len(p) / 100 - len(u) / 1000) < 0.01 and abs(len(sel) / 50 - len(p) / 100) < 0.03


@pytest.mark.parametrize("kwargs,match", [
    (dict(method="svm"), "unknown method 'svm'"),
    (dict(loss="hinge"), "unknown loss 'hinge'"),
    (dict(selection_loss="mse"), "unknown selection_loss"),
    (dict(model="resnet"), "unknown model"),
    (dict(n_select=-1), "n_select must be"),
    (dict(select_from=11, epochs=10), "select_from=11 is outside epochs 1..10"),
    (dict(epochs=0), "epochs must be"),
    (dict(batch_size=1.5), "batch_size"),
    (dict(beta=-0.1), "beta"),
    (dict(gamma=2), "gamma"),
    (dict(compile="yes"), "compile must be True or False"),
])
def test_bad_config_is_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TrainConfig(**kwargs)


def test_the_clamp_reading_is_refused_for_other_authors_methods():
    with pytest.raises(ValueError, match="nnpusb keeps its authors' rule; use correction='kiryo'"):
        TrainConfig(method="nnpusb", correction="clamp")
    with pytest.raises(ValueError, match=r"correction must be one of \('kiryo', 'clamp'\)"):
        TrainConfig(method="aapu", correction="literal")


def test_bad_device_and_prior(data):
    with pytest.raises(ValueError, match="device"):
        train(data, device="tpu", **FAST)
    with pytest.raises(ValueError, match="class prior"):
        synthetic(prior=1.2)


def test_empty_p_or_u_is_rejected():
    with pytest.raises(ValueError, match="P must not be empty"):
        synthetic(n_labeled=0)
    with pytest.raises(ValueError, match="U must not be empty"):
        synthetic(n_unlabeled=0)


def test_synthetic_data_follows_section_4_1():
    d = synthetic(seed=1)
    assert (len(d.x_p), len(d.x_u), len(d.x_test)) == (100, 1000, 10_000)
    assert d.prior == pytest.approx(0.4387, abs=1e-4) and d.prior == SYNTHETIC_PRIOR
    x, y = d.x_test, d.y_test
    assert x[:, 0].min() >= 0 and x[:, 0].max() <= 10
    # P lies above sin(x1)+0.2 shift; N below sin(x1)-0.2
    assert (x[y > 0, 1] > torch.sin(x[y > 0, 0]) + 0.2 - 1e-6).all()
    assert (x[y < 0, 1] < torch.sin(x[y < 0, 0]) - 0.2 + 1e-6).all()
    assert (d.x_p[:, 1] > torch.sin(d.x_p[:, 0]) + 0.2 - 1e-6).all()
    assert abs((y > 0).float().mean() - d.prior) < 0.02
    assert abs((d.u_truth > 0).float().mean() - d.prior) < 0.05


def test_results_are_written(tmp_path, data):
    h = pd.concat([train(data, method=m, seed=s, **FAST).history
                   for m in ("nnpu", "aapu") for s in (0, 1)])
    summary = save_results(h, tmp_path / "page", profile="smoke")
    on_disk = json.loads((tmp_path / "page" / "summary.json").read_text())
    assert on_disk == json.loads(json.dumps(summary))
    assert on_disk["methods"]["aapu"]["n_seeds"] == 2
    last = h[(h.epoch == 6) & (h.method == "nnpu")].test_error
    assert on_disk["methods"]["nnpu"]["test_error"]["mean"] == pytest.approx(last.mean())
    assert len(pd.read_csv(tmp_path / "page" / "history.csv")) == 24


def test_compiled_training_matches_eager():
    """``compile=True`` (torch.compile) changes the speed, not the maths."""
    data = synthetic(0, n_labeled=40, n_unlabeled=300, n_test=500)
    cfg = dict(method="aapu", epochs=4, select_from=2, n_select=3, batch_size=64, lr=1e-3,
               progress=False, autocast="off")          # bf16 rounding depends on fusion
    eager, compiled = train(data, **cfg), train(data, compile=True, **cfg)
    cols = ["risk", "risk_positive", "risk_negative", "test_error", "n_selected"]
    pd.testing.assert_frame_equal(compiled.history[cols], eager.history[cols], atol=1e-4, rtol=1e-4)
    assert torch.equal(compiled.selected.mask, eager.selected.mask)


def test_supervised_training_goes_through_the_same_loop_and_learns():
    """Method "pn" (Fig. 2's PN training): labelled P in the P slot, labelled N in the U slot."""
    d = synthetic(0, n_labeled=10, n_unlabeled=800, n_test=1000)
    data = supervised(d.x_u[d.u_truth > 0], d.x_u[d.u_truth < 0], d.x_test, d.y_test)
    assert data.prior == pytest.approx(float((d.u_truth > 0).float().mean()))
    h = train(data, method="pn", epochs=25, lr=3e-3, lr_schedule={}, batch_size=64,
              progress=False).history
    assert "train_error" in h.columns and (h.n_selected == 0).all()
    assert h.train_error.iloc[-1] < 0.1 and h.test_error.iloc[-1] < 0.1
    assert h.train_error.iloc[-1] < h.train_error.iloc[0]


def test_label_flipping_flips_the_asked_fraction_reproducibly():
    y = torch.where(torch.arange(10_000) % 3 == 0, 1, -1)
    assert torch.equal(flip_labels(y, 0.0, seed=1), y)
    noisy = flip_labels(y, 0.3, seed=1)
    assert torch.equal(noisy, flip_labels(y, 0.3, seed=1)) and not torch.equal(noisy, flip_labels(y, 0.3, 2))
    assert abs(float((noisy != y).float().mean()) - 0.3) < 0.015
    assert set(noisy.tolist()) == {-1, 1}
    with pytest.raises(ValueError, match="noise rate"):
        flip_labels(y, 1.0)


def test_u_loss_snapshots_are_the_losses_after_those_epochs(data):
    r = train(data, method="nnpu", epochs=4, record_u_losses=[2, 4], batch_size=64, progress=False)
    assert sorted(r.u_losses) == [2, 4]
    amp = resolve(r.config).bf16
    assert torch.allclose(r.u_losses[4], unlabeled_losses(r.model, data.x_u, amp=amp), atol=1e-6)
    assert not torch.allclose(r.u_losses[2], r.u_losses[4])


def test_top_k_purity_counts_true_positives_among_the_largest_losses():
    losses = torch.tensor([0.9, 0.1, 0.8, 0.7, 0.2, 0.95])
    truth = torch.tensor([1, -1, -1, 1, 1, 1])
    assert top_k_purity(losses, truth, 3) == pytest.approx(2 / 3)          # 5, 0, 2
    eligible = torch.tensor([True, True, True, True, True, False])
    assert top_k_purity(losses, truth, 3, eligible) == pytest.approx(2 / 3)  # 0, 2, 3
    assert top_k_purity(losses, truth, 1, eligible) == 1.0


def test_divergence_stops_with_a_clear_error():
    d = synthetic(0, n_labeled=20, n_unlabeled=100, n_test=50)
    d.x_u[0, 0] = float("nan")
    with pytest.raises(FloatingPointError, match="diverged — lower the learning rate or check the inputs"):
        train(d, method="nnpu", epochs=2, progress=False)


def test_final_only_evaluation_changes_nothing_but_the_metrics_in_between(data):
    every = train(data, method="aapu", **FAST).history
    final = train(data, method="aapu", eval_every=0, **FAST).history
    assert final.test_error.iloc[:-1].isna().all() and final.test_auc.iloc[:-1].isna().all()
    assert final.test_error.iloc[-1] == every.test_error.iloc[-1]
    cols = ["risk", "risk_positive", "risk_negative", "n_selected", "purity"]
    pd.testing.assert_frame_equal(final[cols], every[cols])
    third = train(data, method="nnpu", eval_every=3, **FAST).history
    assert third.test_error.notna().tolist() == [False, False, True, False, False, True]
