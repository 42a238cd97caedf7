"""The run store: a run is trained once per output folder, read wherever it is needed again
with the history the page would have written, and never read for other data, settings,
threads or evaluation epochs it does not cover."""
import json
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
import torch

from pusupport.book.page import Page
from pusupport.book.plan import KEPT
from pusupport.book.pages import resolve_page
from pusupport.book.store import RunStore, run_key
from pusupport.book.registry import get
from pusupport.core import training
from pusupport.core.config import TrainConfig
from pusupport.core.training import RunResult
from pusupport.data import synthetic

ROOT = Path(__file__).resolve().parent.parent
BASE = dict(device="cpu", seeds=[0, 1], data_dir=None, dry_run=0, checkpoints=None,
            runner=None, profile="smoke", epochs=6, lr=None)


def page(name, output_dir, **kw):
    params = {**BASE, **{k: None for k in get(name).parameters if k not in BASE}, **kw}
    return resolve_page(name, output_dir=str(output_dir), **params)


def no_training(*args, **kwargs):
    raise AssertionError("trained a run that is in the store")


def test_a_page_built_twice_trains_nothing_the_second_time(tmp_path, monkeypatch, capsys):
    first = page("synthetic", tmp_path).run()
    assert "read from the run store" not in capsys.readouterr().out
    monkeypatch.setattr("pusupport.core.training.fit", no_training)
    again = page("synthetic", tmp_path).run()
    pd.testing.assert_frame_equal(again.drop(columns="wall_time"), first.drop(columns="wall_time"))
    said = capsys.readouterr().out
    assert said.count("trained by the synthetic page") == 1           # each trainer named once
    assert "not trained again: nnpu, aapu (trained by the synthetic page)" in said
    # built with Ray, run again once its cluster is gone (as nbval re-runs a built page):
    # every run is stored, so nothing goes to the cluster
    monkeypatch.setattr("pusupport.book.cluster.fan_out", no_training)
    gone = {"address": "127.0.0.1:1", "task": {"num_cpus": 1}}
    again = page("synthetic", tmp_path, runner=gone).run()
    pd.testing.assert_frame_equal(again.drop(columns="wall_time"), first.drop(columns="wall_time"))


def test_a_page_reads_another_pages_run_with_its_own_evaluation_epochs(tmp_path, monkeypatch, capsys):
    trained = page("synthetic", tmp_path).run()                 # evaluated every epoch
    readings = page("readings", tmp_path)                        # evaluates the last epoch only
    assert readings.settings.train.eval_every == 0
    monkeypatch.setattr("pusupport.core.training.fit", no_training)
    book_reading = [s for s in readings.plan() if s.label in ("aapu", "nnpu")]
    read = readings.run(book_reading)
    assert "not trained again: aapu, nnpu (trained by the synthetic page)" in capsys.readouterr().out
    last = read.epoch == 6
    assert read[~last].test_error.isna().all() and read[last].test_error.notna().all()
    # the numbers the page would have trained itself
    monkeypatch.undo()
    own = page("readings", tmp_path / "fresh").run(book_reading)
    cols = ["method", "seed", "epoch", "risk", "test_error", "test_auc", "n_selected", "purity"]
    pd.testing.assert_frame_equal(read[cols], own[cols])
    assert trained[trained.epoch == 6].test_error.tolist() == read[last].test_error.tolist()


def _history(cfg):
    epochs = range(1, cfg.epochs + 1)
    return [pd.DataFrame({"method": cfg.method, "seed": 0, "epoch": list(epochs), "risk": 0.5,
                          "test_error": [0.1 * e for e in epochs], "wall_time": 1.0})]


def one(store, cfg, data, train):
    """(histories, trainer) of one single-seed run through the store."""
    results, trainer = store.runs([(cfg, [0], data, ())], False,
                                  lambda todo: [[RunResult(h, None, None, cfg) for h in train()]])[0]
    return [r.history for r in results], trainer


def test_a_stored_run_serves_only_the_evaluation_epochs_it_covers(tmp_path):
    store, data = RunStore(tmp_path, "p"), [synthetic(0, n_labeled=10, n_unlabeled=50, n_test=20)]
    calls = []

    def train(cfg):
        return lambda: calls.append(cfg.eval_every) or _history(cfg)
    last_only = TrainConfig(method="nnpu", epochs=4, eval_every=0, progress=False)
    every = replace(last_only, eval_every=1)
    _, source = one(store, last_only, data, train(last_only))
    assert source is None and calls == [0]
    _, source = one(store, every, data, train(every))     # not covered: trained
    assert source is None and calls == [0, 1]
    (history,), source = one(store, last_only, data, train(last_only))
    assert source == "the p page" and calls == [0, 1]                                # covered: read
    assert history.test_error.isna().tolist() == [True, True, True, False]


def test_each_run_records_its_share_of_its_jobs_training_time(tmp_path):
    """Runs trained together in one job share its seconds; a run read again adds none; a
    build sums them per page (where its training time went)."""
    import time
    from pusupport.book.store import training_seconds
    data = [synthetic(0, n_labeled=10, n_unlabeled=50, n_test=20)]
    cfgs = [TrainConfig(method=m, epochs=4, select_from=2, progress=False) for m in ("nnpu", "aapu")]

    def taking(seconds):
        def train(todo):
            time.sleep(seconds)
            return [[RunResult(_history(cfgs[i])[0], None, None, cfgs[i])] for i in todo]
        return train
    runs = [(cfg, [0], data, ()) for cfg in cfgs]
    RunStore(tmp_path, "p").runs(runs, False, taking(0.4))
    shares = [json.loads(p.read_text())["trained"]["seconds"] for p in tmp_path.glob("*.json")]
    assert len(shares) == 2 and shares[0] == shares[1] and 0.2 <= shares[0] < 0.4
    RunStore(tmp_path, "q").runs(runs, False, no_training)               # read: nothing trained
    RunStore(tmp_path, "q").runs([(replace(cfgs[0], lr=1e-3), [0], data, ())], False, taking(1.0))
    spent = training_seconds(tmp_path.glob("*.json"))
    assert list(spent) == ["q", "p"] and spent["p"] == pytest.approx(sum(shares))
    assert 1.0 <= spent["q"] < 1.5


def test_the_key_changes_with_data_settings_threads_and_stacking(monkeypatch):
    cfg = TrainConfig(method="nnpu", epochs=4, progress=False)
    data = [synthetic(0, n_labeled=10, n_unlabeled=50, n_test=20)]
    key = run_key(cfg, [0], data, False)
    assert run_key(replace(cfg, progress=True, eval_every=3, checkpoint_dir="x"), [0], data, False) == key
    others = [run_key(replace(cfg, lr=2e-4), [0], data, False),
              run_key(cfg, [0], [replace(data[0], prior=0.3)], False),
              run_key(cfg, [0], [synthetic(0, n_labeled=10, n_unlabeled=50, n_test=21)], False),
              run_key(cfg, [0], data, True)]
    monkeypatch.setattr(torch, "get_num_threads", lambda: 7)
    others.append(run_key(cfg, [0], data, False))
    assert key not in others and len(set(others)) == len(others)


def test_a_dry_run_never_uses_the_store(tmp_path):
    page("synthetic", tmp_path, dry_run=1).run()
    assert not (tmp_path / "runs").exists()
    page("synthetic", tmp_path).run()
    assert len(list((tmp_path / "runs").glob("*.json"))) == 2



def test_a_run_another_page_is_training_is_waited_for_and_read(tmp_path, capsys):
    """Two pages at once (Ray workers) need the same run: the second waits, then reads it."""
    cfg, data = TrainConfig(method="nnpu", epochs=4, progress=False), [synthetic(0, n_labeled=10,
                                                                                 n_unlabeled=50)]
    started, release, got = threading.Event(), threading.Event(), {}

    def slow_training():
        started.set()
        release.wait(10)
        return _history(cfg)

    first = threading.Thread(target=lambda: got.setdefault(
        "first", one(RunStore(tmp_path, "synthetic"), cfg, data, slow_training)))
    first.start()
    started.wait(10)
    second = threading.Thread(target=lambda: got.setdefault(
        "second", one(RunStore(tmp_path, "readings"), cfg, data, no_training)))
    second.start()
    second.join(0.5)
    assert second.is_alive() and "readings: waiting for another page" in capsys.readouterr().out
    release.set()
    first.join(10)
    second.join(10)
    assert got["first"][1] is None and got["second"][1] == "the synthetic page"
    pd.testing.assert_frame_equal(got["second"][0][0], got["first"][0][0])


def test_a_whole_result_is_trained_once_and_read_back_as_it_was(tmp_path, monkeypatch, capsys):
    """What a page reads beyond the history (the model, U's losses, S, the threshold:
    the histogram, memorisation, biased-selection and own-data pages, the prior
    estimator) is trained once per output folder too: read back equal, said on the
    console; other seeds are trained, and a dry run stores nothing."""
    import pytest
    from pusupport.apps.prior import estimate_prior
    biased, data = page("biased_selection", tmp_path), synthetic(0, n_labeled=20, n_unlabeled=100, n_test=50)
    cfg = biased.train_config("aapu", epochs=3, select_from=2, n_select=5, record_u_losses=[2])
    first = biased.train(data, cfg)
    estimates = estimate_prior(data.x_p, data.x_u, seed=0, epochs=2, trainer=biased.train)
    assert "read from the run store" not in capsys.readouterr().out
    monkeypatch.setattr("pusupport.core.training.fit", no_training)
    other = page("histograms", tmp_path)
    again = other.train(data, cfg)
    read = estimate_prior(data.x_p, data.x_u, seed=0, epochs=2, trainer=other.train)
    assert [replace(e, seconds=0) for e in read.values()] == [replace(e, seconds=0) for e in estimates.values()]
    assert all(r.seconds >= e.seconds - 0.02 for r, e in zip(read.values(), estimates.values()))  # its training
    said = capsys.readouterr().out
    assert said.count("(trained by the biased_selection page)") == 2
    assert "aapu (trained by the biased_selection page)" in said
    assert again.history.equals(first.history)                        # number for number
    assert again.u_losses.keys() == {2} and torch.equal(again.u_losses[2], first.u_losses[2])
    assert again.selected.indices.tolist() == first.selected.indices.tolist() != []
    assert again.threshold == first.threshold
    for a, b in zip(again.model.state_dict().values(), first.model.state_dict().values()):
        assert torch.equal(a, b)
    with pytest.raises(AssertionError, match="trained a run"):
        other.train(data, replace(cfg, seed=1))
    monkeypatch.undo()
    page("histograms", tmp_path / "dry", dry_run=1).train(data, cfg)
    assert not (tmp_path / "dry" / "runs").exists()


def test_a_history_is_stored_in_float32_digits_where_those_read_back_exactly(tmp_path):
    """The loop's risks are float32 means: written in float32's shortest digits (the
    committed runs' size) and read back to the same float64 numbers; a column that is not
    all float32 (a test error k/n, the wall time) keeps every digit; a NaN stays NaN."""
    import io
    from pusupport.book.records import history_csv, read_history
    history = training.train(synthetic(0, n_labeled=20, n_unlabeled=100, n_test=30),
                             TrainConfig(method="aapu", epochs=12, select_from=2, n_select=5,
                                         eval_every=4, progress=False)).history
    text, float32 = history_csv(history)
    assert {"risk", "risk_positive", "risk_negative", "corrected_fraction"} <= set(float32)
    assert not {"test_error", "wall_time", "epoch"} & set(float32) and history.test_error.isna().any()
    assert len(text) < 0.85 * len(history.to_csv(index=False))
    back = read_history(io.StringIO(text), float32)
    assert back.equals(history) and (back.dtypes == history.dtypes).all()
    assert not read_history(io.StringIO(text)).equals(history)     # read as written: other numbers


def test_a_probe_whose_history_alone_is_read_is_stored_without_its_model(tmp_path, monkeypatch):
    """π's P-vs-U classifier chosen at its best held-out epoch: the probe run that picks
    the epoch keeps only its history; the classifier trained to that epoch keeps its model
    (which scores the held-out halves); another page reads both, training nothing."""
    from pusupport.apps.prior import estimate_prior
    data = synthetic(0, n_labeled=20, n_unlabeled=100, n_test=10)
    first = estimate_prior(data.x_p, data.x_u, seed=0, epochs=3, select_epoch=True,
                           trainer=page("own_data", tmp_path).train)
    kept = sorted(json.loads(p.read_text())["kept"] for p in (tmp_path / "runs").glob("*.json"))
    assert kept == [[], ["model", "selected", "u_losses", "threshold"]]
    assert len(list((tmp_path / "runs").glob("*.pt"))) == 1
    monkeypatch.setattr("pusupport.core.training.fit", no_training)
    again = estimate_prior(data.x_p, data.x_u, seed=0, epochs=3, select_epoch=True,
                           trainer=page("prior", tmp_path).train)
    assert [replace(e, seconds=0) for e in again.values()] == [replace(e, seconds=0) for e in first.values()]


def test_a_page_s_branches_start_from_the_trunk_another_page_stored(tmp_path, monkeypatch):
    """The readings page reads the synthetic page's nnPU and aaPU: its reading on nnPU's
    settings (S weighted as P) trains only the epochs after its fork (epoch 6 of 10), from the
    state the synthetic page kept; the reading forking at 3 trains nnPU's first 3 epochs once;
    and every reading equals the page's own run trained into an empty store."""
    calls, real = [], training.fit

    def spy(datas, seeds, cfgs, stacked, start=None, stop=None):
        calls.append((cfgs[0].method, start and start["epoch"], stop))
        return real(datas, seeds, cfgs, stacked, start, stop)
    page("synthetic", tmp_path, epochs=10).run()
    assert len(list(tmp_path.glob("runs/trunk-*.pt"))) == 1
    readings = page("readings", tmp_path, epochs=10)
    specs = [s for s in readings.plan() if s.label in ("nnpu", "aapu", "aapu s_weight=union",
                                                        "aapu select_from=3")]
    monkeypatch.setattr(training, "fit", spy)
    read = readings.run(specs)
    monkeypatch.undo()
    assert sorted(calls, key=str) == sorted([("aapu", 6, None), ("nnpu", None, 3), ("aapu", 3, None)],
                                            key=str)
    own = page("readings", tmp_path / "fresh", epochs=10).run(specs)
    cols = ["method", "seed", "epoch", "risk", "test_error", "n_selected", "purity"]
    pd.testing.assert_frame_equal(read[cols], own[cols], check_exact=True)


def test_a_trunk_state_is_read_only_where_it_was_evaluated_as_often(tmp_path, monkeypatch):
    """A trunk kept from a run evaluated at its last epoch only cannot serve a branch that
    evaluates every epoch (its first epochs' test errors are missing): the branch trains
    them itself; kept from a run evaluated every epoch, it serves one that evaluates less,
    its other epochs' test metrics blanked."""
    store, data = RunStore(tmp_path, "p"), [synthetic(0, n_labeled=10, n_unlabeled=50, n_test=20)]
    nnpu = TrainConfig(method="nnpu", epochs=5, select_from=3, n_select=2, progress=False, eval_every=0)
    training.fit_shared([data], [0], [nnpu], stacked=False, together=False, states=store)
    branch = replace(nnpu, method="aapu", eval_every=1)
    assert store.get(replace(branch, method="nnpu"), [0], data, False, 3) is None
    every = replace(nnpu, eval_every=1)
    training.fit_shared([data], [0], [every], stacked=False, together=False, states=store)
    kept = store.get(replace(nnpu, method="nnpu"), [0], data, False, 3)
    assert [row["epoch"] for row in kept["history"][0]] == [1, 2, 3]
    assert all(row["test_error"] != row["test_error"] for row in kept["history"][0])   # NaN: not asked


def test_a_run_is_stored_once_with_what_its_readers_keep(tmp_path, monkeypatch):
    """One store format: a run stored with its history only is trained again for a reader
    that keeps U's losses (then stored with them, one entry); a later build keeping them,
    and a reader of the history only, read it — the kept losses equal those trained."""
    import pytest
    from pusupport.book.plan import RunSpec
    biased = page("biased_selection", tmp_path)
    make = biased.data()
    spec = RunSpec("snap", "nnpu", {"train": {"epochs": 3, "record_u_losses": [2]}}, seeds=1, stacks=False)
    biased.run([spec], make)
    kept = RunSpec("snap", "nnpu", spec.changes, seeds=1, stacks=False, keeps=("u_losses",))
    trained = biased.results([kept], make)[("snap", 0)]
    assert list(trained.u_losses) == [2] and len(list((tmp_path / "runs").glob("*.json"))) == 1
    monkeypatch.setattr("pusupport.core.training.fit", no_training)
    read = page("biased_selection", tmp_path).results([kept], make)[("snap", 0)]   # a later build
    assert torch.equal(read.u_losses[2], trained.u_losses[2]) and read.model is None
    pd.testing.assert_frame_equal(biased.run([spec], make), biased.run([kept], make))
    with pytest.raises(ValueError, match="keeps only"):
        RunSpec("x", "nnpu", keeps=("weights",))


def test_committed_runs_are_read_on_another_machine_and_retrained_once_their_identity_moves(
        tmp_path, monkeypatch, capsys):
    """Runs committed with the book (``make commit-runs``) are read by a build in another
    folder on a machine with other threads and no native bf16 (which would train in
    float32), which says who trained them, where, at what precision and when;
    a change of settings or of the training code, or ``make book FRESH=1``, trains instead
    — a committed run is never read for another identity."""
    from pusupport.book import store as stores
    first = page("synthetic", tmp_path / "here").run()
    committed = tmp_path / "committed"
    assert stores.commit_runs(tmp_path / "here" / "runs", committed)["committed"] == 2
    assert sorted(p.suffixes[-1] for p in committed.iterdir()) == [".gz"] * 2 + [".json"] * 2
    monkeypatch.setattr("pusupport.book.page.committed_runs", lambda profile: committed)
    monkeypatch.setattr(torch, "get_num_threads", lambda: 7)        # another machine: its threads,
    monkeypatch.setattr("pusupport.core.runtime.cpu_bf16_instructions", lambda: None)  # no bf16
    monkeypatch.setattr("pusupport.core.training.fit", no_training)
    elsewhere = page("synthetic", tmp_path / "there")
    read = elsewhere.run()
    pd.testing.assert_frame_equal(read, first)
    said = capsys.readouterr().out
    made = json.loads(next(committed.glob("*.json")).read_text())["trained"]   # this machine's precision
    assert "(trained by the synthetic page, committed: " in said
    assert f", {'bf16' if made['numbers']['bf16'] else 'float32'}, " in said
    shown = elsewhere.where_from()
    assert "read, not trained: " in shown and "committed: " in shown and "trained here" not in shown
    monkeypatch.undo()
    trained = []
    real_fit = training.fit
    monkeypatch.setattr("pusupport.book.page.committed_runs", lambda profile: committed)
    monkeypatch.setattr("pusupport.core.training.fit", lambda *a, **k: trained.append(1) or real_fit(*a, **k))
    page("synthetic", tmp_path / "lr", lr=2e-4).run()                # other settings
    assert trained and "committed" not in capsys.readouterr().out
    trained.clear()
    monkeypatch.setattr(stores, "code_version", lambda *a, **k: "moved")  # other training code
    page("synthetic", tmp_path / "code").run()
    assert trained and "committed" not in capsys.readouterr().out
    monkeypatch.undo()
    monkeypatch.setattr(stores, "REFERENCE", tmp_path / "reference")  # as the book finds them
    (tmp_path / "reference" / "smoke").mkdir(parents=True)
    committed.rename(tmp_path / "reference" / "smoke" / "runs")
    assert stores.committed_runs("smoke") == tmp_path / "reference" / "smoke" / "runs"
    assert stores.committed_runs("cpu") is None
    monkeypatch.setenv(stores.FRESH, "1")                             # make book FRESH=1
    assert stores.committed_runs("smoke") is None


def test_commit_runs_indexes_the_pages_a_build_need_not_train(tmp_path, monkeypatch, capsys):
    """``make commit-runs`` writes the committed runs and an index of each page's
    fingerprint, plan and the training code of the methods it runs: a build projects those
    pages as read, until the page's settings, its plan (not a label) or that code move (not
    another method's)."""
    import importlib.util
    from pusupport.book import committed as committed_runs
    spec = importlib.util.spec_from_file_location("commit_runs", ROOT / "book" / "commit_runs.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    page("synthetic", tmp_path / "build").run()
    monkeypatch.setattr(committed_runs, "page_at", lambda name, profile: page(name, tmp_path))
    assert script.main(["--store", str(tmp_path / "build" / "runs"), "--profile", "smoke",
                        "--reference", str(tmp_path / "reference")]) == 0
    assert "2 runs added, 0 stale ones removed: 2 runs of 1 pages" in capsys.readouterr().out
    index = json.loads((tmp_path / "reference" / "smoke" / "runs" / "index.json").read_text())
    assert list(index["pages"]) == ["synthetic"]
    assert committed_runs.pages_committed("smoke", tmp_path / "reference") == {"synthetic"}
    folder = tmp_path / "reference" / "smoke" / "runs"          # a page whose committed runs went stale
    stale = json.loads(next(folder.glob("*.json")).read_text())  # unseen (e.g. its plan grew) and that
    (folder / f"{'0' * 20}.json").write_text(json.dumps({**stale, "page": "own_data"}))  # trained nothing
    assert script.main(["--store", str(tmp_path / "build" / "runs"), "--profile", "smoke",   # here is
                        "--reference", str(tmp_path / "reference")]) == 0                     # not indexed
    assert list(json.loads((folder / "index.json").read_text())["pages"]) == ["synthetic"]
    (folder / f"{'0' * 20}.json").unlink()
    real = committed_runs.code_version
    for moved, still in (("robustpu", {"synthetic"}), ("nnpu", set())):   # a method it does not run, one it does
        monkeypatch.setattr(committed_runs, "code_version",
                            lambda ref=None, methods=None, m=moved: real(ref, methods) + ("'" if m in methods else ""))
        assert committed_runs.pages_committed("smoke", tmp_path / "reference") == still, moved
    monkeypatch.setattr(committed_runs, "code_version", real)
    planned = page("synthetic", tmp_path).plan()
    for plan, still in (([replace(planned[0], label="renamed"), *planned[1:]], {"synthetic"}),
                        ([*planned, replace(planned[0], seeds=1)], set())):   # e.g. more π halvings
        monkeypatch.setattr(Page, "plan", lambda self, plan=plan: plan)
        assert committed_runs.pages_committed("smoke", tmp_path / "reference") == still
    monkeypatch.undo()
    monkeypatch.setattr(committed_runs, "page_at", lambda name, profile: page(name, tmp_path, lr=1e-3))
    assert committed_runs.pages_committed("smoke", tmp_path / "reference") == set()


def test_commit_runs_removes_the_runs_no_page_uses_any_more_and_the_models_none_reads(
        tmp_path, monkeypatch, capsys):
    """The index lists the runs each page used (trained or read) in the build that indexed
    it: once a page's settings move, its old runs, which no page uses, go at the next
    ``make commit-runs``, while another page's, not rebuilt, stay; a committed model that no
    page reads any more is dropped, its history kept; an index from before uses were
    recorded prunes nothing."""
    import importlib.util
    from pusupport.book import committed as committed_runs, store as stores
    from pusupport.book.same_numbers import run_records
    spec = importlib.util.spec_from_file_location("commit_runs", ROOT / "book" / "commit_runs.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    monkeypatch.setattr(committed_runs, "page_at", lambda name, profile: page(name, tmp_path))
    folder = tmp_path / "reference" / "smoke" / "runs"
    monkeypatch.setattr("pusupport.book.page.committed_runs", lambda profile: folder)
    data = synthetic(0, n_labeled=20, n_unlabeled=100, n_test=50)
    biased = page("biased_selection", tmp_path / "one")
    cfg = biased.train_config("aapu", epochs=3, select_from=2, n_select=5)

    def commit(build):
        assert script.main(["--store", str(tmp_path / build / "runs"), "--profile", "smoke",
                            "--reference", str(tmp_path / "reference")]) == 0
        index = json.loads((folder / "index.json").read_text())["pages"]
        return index, {p.stem: json.loads(p.read_text()) for p in folder.glob("*.json")
                       if p.name != "index.json"}
    page("synthetic", tmp_path / "one").run()
    biased.train(data, cfg)
    stored = run_records(tmp_path / "one" / "runs")
    assert all(stores.committable(p, folder) is not None for p in stored)
    index, runs = commit("one")
    assert all(stores.committable(p, folder) is None for p in stored)      # nothing left to commit
    assert set(index) == {"synthetic", "biased_selection"} and len(runs) == 3
    old = set(index["synthetic"]["runs"])
    assert old <= set(runs) and len(old) == 2
    model = next(k for k, m in runs.items() if m["page"] == "biased_selection")
    assert index["biased_selection"]["runs"] == {model: sorted(KEPT)} and (folder / f"{model}.pt").exists()
    page("synthetic", tmp_path / "two", lr=2e-4).run()              # its settings move
    index, runs = commit("two")
    assert "2 runs no page uses removed, 0 kept models no page reads" in capsys.readouterr().out
    assert len(runs) == 3 and not old & set(runs) and model in runs    # the other page's run stays
    page("biased_selection", tmp_path / "three").train(data, cfg, keeps=())   # its history alone read
    index, runs = commit("three")
    assert "0 runs no page uses removed, 1 kept models no page reads" in capsys.readouterr().out
    assert runs[model]["kept"] == [] and not (folder / f"{model}.pt").exists() and len(runs) == 3
    with_model = next(p for p in stored if json.loads(p.read_text())["page"] == "biased_selection")
    assert stores.committable(with_model, folder) is not None                # its model would be new
    largest = stores.MAX_KEPT
    monkeypatch.setattr(stores, "MAX_KEPT", 0)                  # unless too large to commit: then a
    assert stores.committable(with_model, folder) is None       # build that trained it has nothing to say
    monkeypatch.setattr(stores, "MAX_KEPT", largest)
    del index["biased_selection"]["runs"]                            # an index from before
    (folder / "index.json").write_text(json.dumps({"pages": index}))
    page("synthetic", tmp_path / "four").run()
    index, runs = commit("four")
    assert "no run pruned: the pages biased_selection have not recorded" in capsys.readouterr().out
    assert len(runs) == 5


def test_a_check_build_trains_again_the_first_committed_run_of_each_method(tmp_path, monkeypatch, capsys):
    """``make check-runs``: with ``$PUSUPPORT_CHECK`` a page trains again the first run of
    each method it would read from the committed runs and reads the rest; trained on the
    same machine, each equals the committed one number for number; a committed history that
    was changed is named (exit 1); against a run from another machine, the difference is
    held against its data set's committed spread."""
    import gzip
    import importlib.util
    from pusupport.book import store as stores
    spec = importlib.util.spec_from_file_location("commit_runs", ROOT / "book" / "commit_runs.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    for seeds in ([0, 1], [2, 3]):                  # two jobs of each method (the MLP stacks seeds)
        page("synthetic", tmp_path / "build", seeds=seeds).run()
    reference = tmp_path / "reference"
    committed = reference / "smoke" / "runs"
    assert stores.commit_runs(tmp_path / "build" / "runs", committed)["committed"] == 4
    monkeypatch.setattr("pusupport.book.page.committed_runs", lambda profile: committed)
    monkeypatch.setattr(script, "page_at", lambda name, profile: page(name, tmp_path))
    monkeypatch.setenv(stores.CHECK, "1")
    trained = []
    real_fit = training.fit
    monkeypatch.setattr("pusupport.core.training.fit", lambda *a, **k: trained.append(1) or real_fit(*a, **k))
    for seeds in ([0, 1], [2, 3]):
        page("synthetic", tmp_path / "check", seeds=seeds).run()
    assert len(trained) == 2                        # nnPU and aaPU on seeds 0, 1; seeds 2, 3 read
    record = replace(page("synthetic", tmp_path / "record"), committed=committed)
    record.run()                                    # a page's record (its own committed folder) is
    assert len(trained) == 2                        # not checked: the paper's would train for hours

    def check(*flags):
        code = script.main(["--check", "--store", str(tmp_path / "check" / "runs"), "--profile", "smoke",
                            "--reference", str(reference), *flags])
        return code, capsys.readouterr().out
    code, said = check()
    assert code == 0 and "2 runs held against the committed ones: 2 trained on the same machine, 2 of them equal" in said
    first = json.loads((tmp_path / "check" / "runs" / next(
        p.name for p in (tmp_path / "check" / "runs").glob("*.json"))).read_text())
    path = committed / f"{first['portable']}.csv.gz"
    text = gzip.decompress(path.read_bytes()).decode().replace(",0.", ",1.", 1)
    path.write_bytes(gzip.compress(text.encode()))
    code, said = check()
    assert code == 1 and "1 of them equal number for number" in said and "DIFFERS: synthetic" in said
    path = path.with_name(path.name.replace(".csv.gz", ".json"))
    meta = json.loads(path.read_text())
    meta["trained"]["cpu"] = "another CPU"
    path.write_text(json.dumps(meta))
    (reference / "smoke" / "spread.json").write_text(json.dumps({"datasets": {"synthetic": {"per_seed": 0.5}}}))
    code, said = check()
    assert code == 0 and "1 trained on the same machine, 1 of them equal" in said
    assert f"against a run from another machine (another CPU, {'bf16' if meta['trained']['numbers']['bf16'] else 'float32'}): " \
           f"synthetic {meta['method']} seeds [0, 1]: final test error up to" in said
    assert "within one seed's committed spread 0.5000" in said


def test_a_second_refactor_keeps_the_pages_indexed_after_the_first(tmp_path, monkeypatch):
    """Runs trained by code C0, proven the same as C1 and indexed under C1 (``make
    commit-runs`` after the first refactor), then proven the same as C2: C1, which no run
    was trained by, is the same as C2 through C0, so the page is still projected as read."""
    from pusupport.book import committed as committed_index, same_numbers, store as stores
    monkeypatch.setattr(committed_index, "page_at", lambda name, profile: page(name, tmp_path))
    page("synthetic", tmp_path / "build").run()
    reference, real = tmp_path / "reference", stores.code_version
    committed = reference / "smoke" / "runs"
    stores.commit_runs(tmp_path / "build" / "runs", committed)
    (committed / "index.json").write_text(json.dumps(committed_index.runs_index("smoke", ["synthetic"])))
    digests = {name: {"risk": "x"} for name in same_numbers.suite.RUNS}
    old = json.loads(same_numbers.run_records(committed)[0].read_text())["trained"]["code"]
    for today in ("'", "''"):                                # two refactors, one after the other
        moved = lambda ref=None, methods=None, t=today: real(None, methods) + t   # noqa: E731
        for module in (stores, committed_index, same_numbers):
            monkeypatch.setattr(module, "code_version", moved)
        rows = same_numbers.prove(committed, lambda commit: {**digests, same_numbers.suite.CODE: {
            m: old if commit else moved(methods=[m]) for m in ("nnpu", "aapu")}})
        assert all(r["proven"] for r in rows)
        assert committed_index.pages_committed("smoke", reference) == {"synthetic"}, today
        (committed / "index.json").write_text(json.dumps(committed_index.runs_index("smoke", ["synthetic"])))
    assert same_numbers.older("nnpu", committed) == [old, real(None, ["nnpu"]) + "'"]


def test_where_a_page_s_numbers_come_from_counts_every_run_even_of_one_label(tmp_path):
    """Two runs of one label (the prior page's P-vs-U classifiers, one per data set), one
    read and one trained now: the page's last line names both, each by its source."""
    shown = page("synthetic", tmp_path)
    shown.sources += [("pn", "the prior page, committed: AMD EPYC, bf16, 2026-11-27, commit abc1234"),
                      ("pn", None), *[(f"run {i}", "the readings page") for i in range(5)],
                      *[("pn", "the own-data page")] * 6, ("aapu", "the own-data page")]
    lines = shown.where_from().splitlines()
    assert lines[0] == "trained here, now: pn"
    assert lines[1] == "read, not trained: pn, trained by the prior page, committed: AMD EPYC, bf16, 2026-11-27, commit abc1234"
    assert lines[2] == "read, not trained: 5 runs, trained by the readings page"
    assert lines[3] == "read, not trained: pn × 6; aapu, trained by the own-data page"   # π's halvings, then the method
    assert lines[4].startswith("page wall time")


def test_a_refactor_keeps_the_committed_runs_that_the_reference_suite_shows_unchanged(
        tmp_path, monkeypatch, capsys):
    """After a change to the training code (every run's key moves), ``make same-numbers``
    keeps each method's committed runs where the reference suite's runs that method reaches
    give the same numbers at the commit that trained them and now: a build reads them under
    their old keys and projects their pages as read, ``make commit-runs`` keeps them and a
    check build finds them; where a reached suite run differs they are stale, named and
    trained again — and a difference in another method's own suite run does not count."""
    import importlib.util
    from pusupport.book import committed as committed_index, same_numbers, store as stores
    spec = importlib.util.spec_from_file_location("commit_runs", ROOT / "book" / "commit_runs.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    monkeypatch.setattr(committed_index, "page_at", lambda name, profile: page(name, tmp_path))
    real_fit = training.fit
    page("synthetic", tmp_path / "build").run()
    reference = tmp_path / "reference"
    committed = reference / "smoke" / "runs"
    assert script.main(["--store", str(tmp_path / "build" / "runs"), "--profile", "smoke",
                        "--reference", str(reference)]) == 0
    for path in same_numbers.run_records(committed):         # trained at a commit of the history
        meta = json.loads(path.read_text())
        meta["trained"]["commit"] = "a" * 40
        path.write_text(json.dumps(meta))
    old = json.loads(same_numbers.run_records(committed)[0].read_text())["trained"]["code"]
    real = stores.code_version
    moved = lambda ref=None, methods=None: real(None, methods) + ("" if ref else "'")   # noqa: E731
    for module in (stores, committed_index, same_numbers):   # the code moved since
        monkeypatch.setattr(module, "code_version", moved)
    monkeypatch.setattr("pusupport.book.page.committed_runs", lambda profile: committed)
    digests = {name: {"risk": "x"} for name in same_numbers.suite.RUNS}

    def suite_at(differ):                                     # the code versions each commit's identity gives
        return lambda commit: {**digests, **({differ: {"risk": "y"}} if commit and differ else {}),
                               same_numbers.suite.CODE: {m: old if commit else "new" for m in ("nnpu", "aapu")}}
    reached = same_numbers.reached("vpu")                    # every shared path, its own run, no other's
    assert "nnpu and aapu, Kiryo's CNN with dropout" in reached and "vpu alone" in reached
    assert "distpu alone" not in reached
    rows = same_numbers.prove(committed, suite_at("vpu alone"))   # another method's run differs
    assert sorted(r["method"] for r in rows if r["proven"]) == ["aapu", "nnpu"]
    assert "nnpu and aapu forked" in json.loads((committed / same_numbers.FILE).read_text())["proofs"][0]["suite_runs_equal"]
    assert committed_index.pages_committed("smoke", reference) == {"synthetic"}
    monkeypatch.setattr("pusupport.core.training.fit", no_training)
    page("synthetic", tmp_path / "after").run()
    assert "committed: " in capsys.readouterr().out
    assert stores.commit_runs(tmp_path / "after" / "runs", committed) == {"added": 0, "committed": 2, "removed": 0}
    trained = []
    monkeypatch.setattr("pusupport.core.training.fit", lambda *a, **k: trained.append(1) or real_fit(*a, **k))
    monkeypatch.setenv(stores.CHECK, "1")                     # a check build finds them under their old keys
    page("synthetic", tmp_path / "check").run()
    assert [r["equal"] for r in stores.check_runs(tmp_path / "check" / "runs", committed)] == [True, True]
    monkeypatch.delenv(stores.CHECK)
    assert script.main(["--same-numbers", "--reference", str(reference)]) == 0   # a commit not in the clone
    said = capsys.readouterr().out
    assert "smoke/runs: 2 runs; 0 older code versions of a method shown to train today's numbers" in said
    assert f"nnpu at {old} (commit aaaaaaaaaaaa): stale, retrained by the next build — the reference " \
           "suite could not run at aaaaaaaaaaaa" in said and "fetch that commit" in said
    identity = sys.modules["pusupport.core.identity"]
    monkeypatch.setitem(sys.modules, "pusupport.core.identity", None)   # a commit from before identity.py:
    assert same_numbers.suite.code_versions().startswith("error: ")     # its suite still runs, and
    monkeypatch.setitem(sys.modules, "pusupport.core.identity", identity)
    rows = same_numbers.prove(committed, lambda commit: {**digests, same_numbers.suite.CODE: "error: old"})
    assert not any(r["proven"] for r in rows) and "its training code is not its commit's (error: old)" in rows[0]["why"]
    rows = same_numbers.prove(committed, suite_at("nnpu and aapu, Kiryo's CNN with dropout"))
    assert not any(r["proven"] for r in rows) and not (committed / same_numbers.FILE).exists()
    assert "the reference suite's run \"nnpu and aapu, Kiryo's CNN with dropout\": its risk differs" in rows[0]["why"]
    assert committed_index.pages_committed("smoke", reference) == set()
    trained.clear()
    page("synthetic", tmp_path / "stale").run()
    assert trained and "committed" not in capsys.readouterr().out
    assert stores.commit_runs(tmp_path / "stale" / "runs", committed)["removed"] == 2
    assert all(json.loads(p.read_text())["trained"]["code"] != old for p in same_numbers.run_records(committed))
