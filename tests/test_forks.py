"""A forked run is its run trained alone: aaPU's first epochs, shared with nnPU's, in float64."""
from dataclasses import replace

import pandas as pd
import pytest
import torch

from pusupport.core import forks, training
from pusupport.core.training import TrainConfig, fit, train, train_grid

from test_stacking import SEEDS, data, images

pytestmark = pytest.mark.usefixtures("float64")

BASE = dict(epochs=9, batch_size=64, lr=3e-3, lr_schedule={6: 1e-3}, progress=False)
#: Every history column but the clock, which a fork shares with its trunk.
SAME = lambda h: h.drop(columns=["wall_time"])  # noqa: E731


def stages(monkeypatch) -> list:
    """Each call of the loop, as (its runs' methods, the epoch it starts after, its stop)."""
    calls, real = [], training.fit

    def spy(datas, seeds, cfgs, stacked, start=None, stop=None):
        calls.append(([c.method for c in cfgs], start and start["epoch"], stop))
        return real(datas, seeds, cfgs, stacked, start, stop)
    monkeypatch.setattr(training, "fit", spy)
    return calls


def assert_same(forked, alone):
    pd.testing.assert_frame_equal(SAME(forked.history), SAME(alone.history), check_exact=True)
    assert forked.picks.values.tolist() == alone.picks.values.tolist()
    for a, b in zip(forked.model.state_dict().values(), alone.model.state_dict().values()):
        assert torch.equal(a, b)


def test_stacked_runs_fork_at_each_first_selection_and_equal_their_runs_alone(monkeypatch):
    """nnPU trains 3 epochs; two aaPU runs join it there, a third at epoch 5; the clamp
    reading forks from nnPU clamped; S added to P everywhere (naive) from nnPU; nnPU with
    the sigmoid loss shares nothing."""
    runs = [dict(method="nnpu"), dict(method="aapu", n_select=5, select_from=3),
            dict(method="aapu", n_select=5, select_from=3, s_weight="union"),
            dict(method="aapu", n_select=3, select_from=5, allow_repick=False),
            dict(method="nnpu", correction="clamp"),
            dict(method="aapu", n_select=5, select_from=3, correction="clamp"),
            dict(method="nnpu", loss="sigmoid"),
            dict(method="naive", n_select=5, select_from=3)]
    configs = [TrainConfig(**BASE, **r) for r in runs]
    calls = stages(monkeypatch)
    together = train_grid(data, SEEDS, configs)
    K = len(SEEDS)
    assert [(len(m), after, stop) for m, after, stop in calls] == [
        (3 * K, None, 3), (7 * K, 3, 5), (8 * K, 5, None)]
    monkeypatch.undo()
    for config, results in zip(configs, together):
        for seed, forked in zip(SEEDS, results):
            alone = train(data(seed), config, seed=seed)
            pd.testing.assert_frame_equal(SAME(forked.history), SAME(alone.history),
                                          atol=1e-9, rtol=1e-9)
            assert forked.picks["index"].tolist() == alone.picks["index"].tolist()
            for a, b in zip(forked.model.state_dict().values(), alone.model.state_dict().values()):
                assert torch.allclose(a, b, atol=1e-9)
    assert together[1][0].history.n_selected.iloc[2] == 5         # the fork epoch's own pick


def test_runs_one_by_one_fork_bit_for_bit_dropout_included(monkeypatch):
    """One seed at a time (a CNN with dropout: the global random stream goes on from the
    trunk's): each aaPU run equals its run alone exactly."""
    model = {"name": "kiryo_cnn", "width": 0.0625, "dropout": 0.5}
    configs = [TrainConfig(**{**BASE, "epochs": 5, "batch_size": 40}, model=model, **r) for r in
               (dict(method="aapu", n_select=7, select_from=2), dict(method="nnpu"),
                dict(method="aapu_oracle", n_select=7, select_from=3))]
    calls = stages(monkeypatch)
    forked = [r for r, in training.fit_shared([[images(0)]] * 3, [0], configs, stacked=False,
                                              together=False)]
    assert [(m, after, stop) for m, after, stop in calls] == [
        (["nnpu"], None, 2), (["aapu"], 2, None), (["nnpu"], 2, 3), (["aapu_oracle"], 3, None),
        (["nnpu"], 3, None)]
    monkeypatch.undo()
    for run, config in zip(forked, configs):
        assert_same(run, train(images(0), config, seed=0))


def test_what_forks_from_what():
    cfg = lambda **k: TrainConfig(**{**BASE, **k})  # noqa: E731
    runs = [("d0", cfg(method="nnpu")), ("d0", cfg(method="aapu", select_from=4)),
            ("d1", cfg(method="aapu", select_from=4)),                # other data or seeds
            ("d0", cfg(method="aapu", select_from=4, lr=1e-3)),        # another learning rate
            ("d0", cfg(method="aapu", select_from=9)),                 # selects only at the end
            ("d0", cfg(method="aapu", select_from=4, dry_run=1)),      # a dry run
            ("d0", cfg(method="upu")),
            ("d0", cfg(method="aapu_oracle", select_from=2, n_select=3, progress=True)),
            ("d0", cfg(method="naive", select_from=4))]
    assert forks.trunks(*map(list, zip(*runs))) == [None, 0, None, None, None, None, None, 0, 0]


@pytest.mark.parametrize("model, make", [("mlp", data), ("kiryo_cnn", images)])
def test_stacked_seeds_fork_run_by_run(monkeypatch, model, make):
    """Each run its own stack of seeds (the layout on a CPU): nnPU's stack trains to the
    fork, aaPU's goes on from a copy of its members (grouped convolutions, BatchNorm and
    dropout streams included)."""
    net = {"name": model, "width": 0.0625, "dropout": 0.5} if model != "mlp" else {}
    configs = [TrainConfig(**BASE, model=net, method="aapu", n_select=5, select_from=4),
               TrainConfig(**BASE, model=net, method="nnpu")]
    calls = stages(monkeypatch)
    datas = [make(s) for s in SEEDS]
    forked = training.fit_shared([datas, datas], SEEDS, configs, stacked=True, together=False)
    assert [(m, after, stop) for m, after, stop in calls] == [
        (["nnpu"] * 3, None, 4), (["aapu"] * 3, 4, None), (["nnpu"] * 3, 4, None)]
    monkeypatch.undo()
    for config, results in zip(configs, forked):
        for seed, run in zip(SEEDS, results):
            alone = train(make(seed), config, seed=seed)
            pd.testing.assert_frame_equal(SAME(run.history), SAME(alone.history), atol=1e-9, rtol=1e-9)
            for a, b in zip(run.model.state_dict().values(), alone.model.state_dict().values()):
                assert torch.allclose(a, b, atol=1e-9)


def test_a_forked_run_resumes_from_its_checkpoints(tmp_path):
    """The shared epochs checkpoint apart (they end at the fork); run again, every run is
    read back from its finished checkpoint, equal to the first time."""
    configs = [TrainConfig(**BASE, method=m, n_select=5, select_from=3, checkpoint_dir=str(tmp_path),
                           checkpoint_every=2) for m in ("nnpu", "aapu")]
    first = training.fit_shared([[data(0)]] * 2, [0], configs, stacked=False, together=False)
    assert sorted(p.name for p in tmp_path.glob("*.pt")) == [
        "aapu-seeds0.pt", "nnpu-seeds0-to3.pt", "nnpu-seeds0.pt"]
    again = training.fit_shared([[data(0)]] * 2, [0], configs, stacked=False, together=False)
    for (a,), (b,) in zip(again, first):
        pd.testing.assert_frame_equal(a.history, b.history)


def test_a_method_with_a_state_between_epochs_is_not_forked():
    state = fit([data(0)], [0], TrainConfig(**BASE, method="nnpu"), False, stop=2)
    with pytest.raises(ValueError, match="cannot fork"):
        forks.pick({**state, "method_state": [{"mean": torch.zeros(1)}]}, [0], [True])


class Kept:
    """Trunk states kept in memory between calls (the run store keeps them on disk)."""

    def __init__(self):
        self.states, self.put_at = {}, []

    def key(self, cfg, seeds, datas, stacked, epoch):
        return forks._prefix(cfg, cfg.method), tuple(seeds), forks.data_keys([datas])[0], stacked, epoch

    def get(self, *args):
        return self.states.get(self.key(*args))

    def put(self, *args):
        *args, state = args
        self.put_at.append((args[0].method, args[-1]))
        self.states[self.key(*args)] = state


def test_a_branch_whose_trunk_trained_in_an_earlier_job_trains_only_its_own_epochs(monkeypatch):
    """nnPU trained alone keeps its state at its first-selection epoch; two aaPU readings
    trained later, without it, start there (a spy on the loop) and equal their runs alone bit
    for bit; nnPU trained again after a branch stored the prefix starts there too."""
    nnpu = TrainConfig(**BASE, method="nnpu", n_select=5, select_from=3)
    branches = [replace(nnpu, method="aapu"), replace(nnpu, method="aapu", s_weight="union")]
    kept = Kept()
    (trunk,), = training.fit_shared([[data(0)]], [0], [nnpu], stacked=False, together=False, states=kept)
    assert kept.put_at == [("nnpu", 3)]
    calls = stages(monkeypatch)
    later = training.fit_shared([[data(0)]] * 2, [0], branches, stacked=False, together=False, states=kept)
    assert calls == [(["aapu"], 3, None), (["aapu"], 3, None)]
    monkeypatch.undo()
    for (run,), cfg in zip(later, branches):
        assert_same(run, train(data(0), cfg, seed=0))
    assert_same(trunk, train(data(0), nnpu, seed=0))
    fresh = Kept()                           # a branch first: it trains the prefix once, as nnPU
    calls = stages(monkeypatch)
    training.fit_shared([[data(0)]], [0], branches[:1], stacked=False, together=False, states=fresh)
    (again,), = training.fit_shared([[data(0)]], [0], [nnpu], stacked=False, together=False, states=fresh)
    assert calls == [(["nnpu"], None, 3), (["aapu"], 3, None), (["nnpu"], 3, None)]
    assert fresh.put_at == [("nnpu", 3)]
    monkeypatch.undo()
    assert_same(again, trunk)


def test_stacked_branches_start_from_a_stored_trunk_together_or_apart(monkeypatch):
    """Seeds stacked: the trunk's stack kept at the fork; branches in one network (settings
    stacked) or each in its own start from it and equal their runs alone."""
    nnpu = TrainConfig(**BASE, method="nnpu", n_select=5, select_from=4)
    branches = [replace(nnpu, method="aapu"), replace(nnpu, method="aapu_oracle")]
    datas = [data(s) for s in SEEDS]
    kept, K = Kept(), len(SEEDS)
    training.fit_shared([datas], SEEDS, [nnpu], stacked=True, together=False, states=kept)
    for together in (True, False):
        calls = stages(monkeypatch)
        out = training.fit_shared([datas, datas], SEEDS, branches, stacked=True, together=together,
                                  states=kept)
        assert [(len(m), after) for m, after, _ in calls] == ([(2 * K, 4)] if together else [(K, 4)] * 2)
        monkeypatch.undo()
        for cfg, results in zip(branches, out):
            for seed, run in zip(SEEDS, results):
                alone = train(data(seed), cfg, seed=seed)
                pd.testing.assert_frame_equal(SAME(run.history), SAME(alone.history), atol=1e-9, rtol=1e-9)


def test_a_trunk_run_keeps_its_state_only_where_a_branch_could_fork():
    """nnPU keeps its state at its select_from when that comes before its last epoch; not
    when it does not (no branch of its settings could fork), nor for a method nothing forks from."""
    assert forks.trunk_epoch(TrainConfig(**BASE, method="nnpu", select_from=4)) == 4
    assert forks.trunk_epoch(TrainConfig(**BASE, method="nnpu", select_from=200)) is None
    assert forks.trunk_epoch(TrainConfig(**BASE, method="nnpu", select_from=4, n_select=0)) is None
    assert forks.trunk_epoch(TrainConfig(**BASE, method="upu", select_from=4)) is None
    kept = Kept()
    training.fit_shared([[data(0)]], [0], [TrainConfig(**BASE, method="nnpu", select_from=200)],
                        stacked=False, together=False, states=kept)
    assert kept.put_at == []
