"""Checkpoint files without training: save, load, fingerprints, paths and refusals."""
import hashlib
import os
import pathlib
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from pusupport.core import checkpoint, identity
from pusupport.core.config import TrainConfig
from pusupport.core.sparse import SparseRows

pytestmark = pytest.mark.usefixtures("computed_afresh")
CFG = TrainConfig(method="aapu", epochs=6, select_from=3, lr=1e-3, checkpoint_dir="unused")


def data(name="synthetic", x_p=((1.0, 2.0), (3.0, 4.5)), n_u=5, prior=0.4):
    return SimpleNamespace(name=name, x_p=torch.tensor(x_p), x_u=torch.zeros(n_u, 2), prior=prior,
                           u_truth=torch.zeros(n_u), u_in_p=torch.zeros(n_u, dtype=torch.bool),
                           x_test=torch.ones(3, 2), y_test=torch.tensor([0, 1, 1]),
                           x_val_p=None, x_val_u=None)


def test_code_version_is_16_hex_digits_of_the_training_sources(monkeypatch):
    version = identity.code_version()
    assert len(version) == 16 and int(version, 16) >= 0
    assert version == identity.code_version()
    assert version != hashlib.sha256().hexdigest()[:16]       # the sources were hashed
    listing = pathlib.Path.rglob
    monkeypatch.setattr(pathlib.Path, "rglob", lambda self, pattern: reversed(sorted(listing(self, pattern))))
    assert identity.code_version() == version                  # independent of listing order


def _edited(monkeypatch, name: str) -> str:
    """The training-code version with ``name`` (a module of the package) edited."""
    real = pathlib.Path.read_bytes
    target = identity.PACKAGE / name
    monkeypatch.setattr(pathlib.Path, "read_bytes",
                        lambda self: real(self) + (b"\nEDITED = 1\n" if self == target else b""))
    edited = identity.code_version()
    monkeypatch.undo()
    return edited


def test_editing_a_figure_a_page_or_storage_keeps_the_version_editing_a_risk_changes_it(monkeypatch):
    version = identity.code_version()
    for shown in ("book/plots.py", "book/pages.py", "core/checkpoint.py", "core/progress.py",
                  "core/page_settings.py", "data/sizes.py", "core/identity.py",
                  "data/datasets.py"):         # a loader: what it gives a run is in the data's checksum
        assert _edited(monkeypatch, shown) == version, shown
    for trains in ("core/risks.py", "core/training.py", "core/baselines/vpu.py"):
        assert _edited(monkeypatch, trains) != version, trains


def test_code_version_of_a_commit_reads_git(monkeypatch):
    calls = []

    def run(args, **kw):
        calls.append(args)
        listing = "pusupport/core/risks.py\npusupport/core/progress.py\npusupport/data/x.txt\n"
        out = listing if "ls-tree" in args else (b"risk = 1" if kw.get("text") is None else "")
        return SimpleNamespace(stdout=out)
    monkeypatch.setattr(identity.subprocess, "run", run)
    version = identity.code_version("abc1234")
    assert [a[3] for a in calls] == ["ls-tree", "show", "show"]
    expected = hashlib.sha256(b"core/risks.py\0" + identity.meaning(b"risk = 1").encode() + b"\0")
    assert version == expected.hexdigest()[:16]      # progress.py left out, only .py read


def test_path_for_names_method_and_seeds():
    cfg = replace(CFG, checkpoint_dir="/tmp/ckpts", method="nnpu")
    assert checkpoint.path_for(cfg, [3, 1, 20]) == pathlib.Path("/tmp/ckpts/nnpu-seeds3_1_20.pt")
    assert checkpoint.path_for(cfg, [7]) == pathlib.Path("/tmp/ckpts/nnpu-seeds7.pt")


def test_fingerprint_holds_settings_code_seeds_and_data():
    fp = checkpoint.fingerprint(CFG, [data(), data(prior=0.3, n_u=7)], (4, 5))
    assert fp["code"] == identity.code_version()
    assert fp["seeds"] == [4, 5]
    assert fp["data"] == [identity.data_identity(data()), identity.data_identity(data(prior=0.3, n_u=7))]
    assert fp["data"][0]["prior"] == 0.4 and fp["data"][0] != fp["data"][1]
    assert fp["config"]["lr"] == 1e-3 and fp["config"]["method"] == "aapu"
    assert fp["config"]["model"] == {"name": "mlp", "width": 1.0, "dropout": None, "activation": None}
    assert fp["runtime"] == {"device": "cpu", "bf16": fp["runtime"]["bf16"], "channels_last": True,
                             "generators": "cpu", "seeded_dropout": False, "compile": False,
                             "bf16_instructions": fp["runtime"]["bf16_instructions"]}
    assert set(fp) == {"config", "code", "runtime", "seeds", "data"}


def test_runtime_settings_do_not_enter_the_fingerprint():
    fp = checkpoint.fingerprint(CFG, [data()], [0])
    assert not {"progress", "checkpoint_dir", "checkpoint_every", "device", "seed"} & set(fp["config"])
    other = replace(CFG, progress=False, checkpoint_dir="elsewhere", checkpoint_every=3,
                    device="cpu", seed=9)
    assert checkpoint.fingerprint(other, [data()], [0]) == fp
    assert checkpoint.fingerprint(replace(CFG, epochs=7), [data()], [0]) != fp


def test_a_held_out_validation_split_is_part_of_the_data_identity():
    """A split changes a run's history (its criterion), so it is in the identity; data without
    one keep the identity they had before splits existed (stored runs stay valid)."""
    plain = identity.data_identity(data())
    assert plain["tensors"] == identity.checksum(*(getattr(data(), k) for k in
                                                     ("x_p", "x_u", "u_truth", "u_in_p", "x_test", "y_test")))
    held = SimpleNamespace(**{**vars(data()), "x_val_p": torch.ones(1, 2), "x_val_u": torch.ones(2, 2)})
    other = SimpleNamespace(**{**vars(held), "x_val_u": torch.zeros(2, 2)})
    assert len({repr(identity.data_identity(d)) for d in (data(), held, other)}) == 3


def test_sparse_positives_are_identified_by_all_their_parts():
    def d(values):
        x_p = SparseRows(torch.tensor([0, 1, 3]), torch.tensor([0, 1, 2]), torch.tensor(values), 4)
        return SimpleNamespace(**{**vars(data()), "name": "20news", "x_p": x_p})
    assert identity.data_identity(d([1.5, 2.0, 4.0])) == identity.data_identity(d([1.5, 2.0, 4.0]))
    assert identity.data_identity(d([1.5, 2.0, 4.0])) != identity.data_identity(d([1.5, 2.0, 4.5]))


def test_save_then_load_round_trips_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "new" / "deeper" / "aapu-seeds0.pt"
    expected = checkpoint.fingerprint(CFG, [data()], [0])
    state = {"fingerprint": expected, "epoch": 5, "weights": torch.arange(4.0)}
    checkpoint.save(path, state)
    checkpoint.save(path, {**state, "epoch": 6})                      # overwrite in place
    assert os.listdir(path.parent) == ["aapu-seeds0.pt"]
    got = checkpoint.load(path, expected)
    assert got["epoch"] == 6 and torch.equal(got["weights"], torch.arange(4.0))


def test_save_writes_through_a_hidden_file_beside_the_target_and_closes_it(tmp_path, monkeypatch):
    path = tmp_path / "run.pt"
    written, real_save = [], torch.save
    monkeypatch.setattr(torch, "save", lambda obj, f: written.append(f) or real_save(obj, f))
    fds = len(os.listdir("/proc/self/fd"))
    checkpoint.save(path, {"epoch": 1})
    assert len(os.listdir("/proc/self/fd")) == fds                    # no descriptor left open
    tmp = pathlib.Path(written[0])
    assert tmp.parent == tmp_path and tmp.name.startswith(".run.pt.")
    assert not tmp.exists() and path.exists()


def test_failed_save_keeps_the_previous_checkpoint_and_no_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "run.pt"
    checkpoint.save(path, {"epoch": 1})

    def fail(obj, f):
        pathlib.Path(f).write_bytes(b"partial")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", fail)
    with pytest.raises(OSError, match="disk full"):
        checkpoint.save(path, {"epoch": 2})
    assert os.listdir(tmp_path) == ["run.pt"]
    assert torch.load(path, weights_only=False) == {"epoch": 1}


def test_history_with_numpy_values_and_rng_states_loads(tmp_path):
    """A run's history rows may hold numpy numbers; they must load back (not weights-only)."""
    path = tmp_path / "run.pt"
    state = {"fingerprint": {}, "history": [[{"epoch": 1, "test_error": np.float64(0.25)}]],
             "rng": np.random.default_rng(0).bit_generator.state, "u_losses": [{1: np.arange(3.0)}]}
    checkpoint.save(path, state)
    got = checkpoint.load(path, {})
    assert got["history"] == state["history"] and got["rng"] == state["rng"]
    assert np.array_equal(got["u_losses"][0][1], np.arange(3.0))


def test_missing_checkpoint_loads_as_none(tmp_path):
    assert checkpoint.load(tmp_path / "absent.pt", {}) is None


def test_truncated_checkpoint_names_its_path_and_says_delete_it(tmp_path):
    path = tmp_path / "aapu-seeds0.pt"
    checkpoint.save(path, {"fingerprint": {}, "epoch": 3, "big": torch.zeros(1000)})
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(ValueError) as err:
        checkpoint.load(path, {})
    assert str(err.value).startswith(f"checkpoint {path} cannot be read (")
    assert str(err.value).endswith("): it is truncated or not a checkpoint. Delete it to start afresh.")
    assert err.value.__cause__ is not None


def test_non_checkpoint_file_names_the_error_type(tmp_path):
    path = tmp_path / "notes.pt"
    path.write_text("not a checkpoint")
    with pytest.raises(ValueError, match=r"cannot be read \(UnpicklingError\)"):
        checkpoint.load(path, {})


def _refusal(tmp_path, old, new):
    path = tmp_path / "c.pt"
    checkpoint.save(path, {"fingerprint": old})
    with pytest.raises(ValueError) as err:
        checkpoint.load(path, new)
    return str(err.value).replace(str(path), "PATH")


def test_other_settings_are_named_in_sorted_order(tmp_path):
    old = checkpoint.fingerprint(CFG, [data()], [0])
    new = checkpoint.fingerprint(replace(CFG, lr=5e-4, beta=0.1), [data()], [0])
    assert _refusal(tmp_path, old, new) == (
        "checkpoint PATH was made with different settings ['beta', 'lr']: refusing to resume it. "
        "Delete it, or pass another checkpoint folder (checkpoint_dir; --checkpoint-dir on the "
        "command line), to start afresh.")


def test_a_setting_present_on_one_side_only_is_named(tmp_path):
    old = checkpoint.fingerprint(CFG, [data()], [0])
    new = {**old, "config": {**old["config"], "extra": 1}}
    assert "different settings ['extra']" in _refusal(tmp_path, old, new)
    assert "different settings ['extra']" in _refusal(tmp_path, new, old)


def test_other_code_is_named_before_other_data(tmp_path):
    old = checkpoint.fingerprint(CFG, [data()], [0])
    new = {**checkpoint.fingerprint(CFG, [data(prior=0.3)], [0]), "code": "edited"}
    assert _refusal(tmp_path, old, new) == (
        "checkpoint PATH was made with different training code: refusing to resume it. "
        "Delete it, or pass another checkpoint folder (checkpoint_dir; --checkpoint-dir on the "
        "command line), to start afresh.")


@pytest.mark.parametrize("change", [dict(prior=0.3), dict(n_u=6), dict(x_p=((1.0, 2.0), (3.0, 4.0)))])
def test_other_data_is_named(tmp_path, change):
    old = checkpoint.fingerprint(CFG, [data()], [0])
    new = checkpoint.fingerprint(CFG, [data(**change)], [0])
    assert _refusal(tmp_path, old, new).startswith("checkpoint PATH was made with different data (its rows, or π): ")


def test_other_seeds_and_other_device_choices_are_named(tmp_path):
    old = checkpoint.fingerprint(CFG, [data()], [0])
    assert "different seeds:" in _refusal(tmp_path, old, checkpoint.fingerprint(CFG, [data()], [1]))
    other = {**old, "runtime": {**old["runtime"], "seeded_dropout": True}}
    assert "different device choices (precision, dropout streams, memory format):" in _refusal(
        tmp_path, old, other)


def test_matching_checkpoint_is_returned_whole(tmp_path):
    fp = checkpoint.fingerprint(CFG, [data()], [0])
    path = tmp_path / "c.pt"
    checkpoint.save(path, {"fingerprint": fp, "epoch": 4})
    assert checkpoint.load(path, checkpoint.fingerprint(CFG, [data()], [0])) == {"fingerprint": fp, "epoch": 4}


def test_the_training_code_of_a_commit_equals_the_same_checkout_s(tmp_path, monkeypatch):
    """A package in a git repository of its own: its core modules hashed from the checkout
    and from the commit agree, by hand; an edit changes the checkout's version only; other
    folders (the data loaders' too), other files and the non-training modules stay out."""
    import subprocess
    package = tmp_path / "repo" / "pkg"
    files = {"core/risks.py": b"risk = 1\n", "data/sets.py": b"sets = 2\n", "core/sub/deep.py": b"d\n",
             "core/progress.py": b"bar\n", "core/notes.txt": b"not code\n", "book/plots.py": b"fig\n"}
    for name, text in files.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_bytes(text)
    git = ["git", "-C", str(package.parent), "-c", "user.name=t", "-c", "user.email=t@t"]
    for step in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "x"]):
        subprocess.run([*git, *step], check=True, capture_output=True)
    monkeypatch.setattr(identity, "PACKAGE", package)
    digest = hashlib.sha256()
    for name in ("core/risks.py", "core/sub/deep.py"):
        digest.update(name.encode() + b"\0" + identity.meaning(files[name]).encode() + b"\0")
    assert identity.code_version() == identity.code_version("HEAD") == digest.hexdigest()[:16]
    assert sorted(identity._sources("HEAD")) == sorted(identity._sources(None))
    (package / "core" / "risks.py").write_bytes(b"risk = 3\n")
    assert identity.code_version() != identity.code_version("HEAD") == digest.hexdigest()[:16]


def test_a_stack_s_checkpoint_names_its_runs_and_its_fork_point():
    """Several runs: method, the others' count and a digest of every run's settings; shared
    first epochs end in -to<stop>; a seed listed twice is named once."""
    one = replace(CFG, checkpoint_dir="/tmp/ckpts", method="nnpu")
    two = [one, replace(one, method="aapu", n_select=5)]
    digest = hashlib.sha256(repr([checkpoint.asdict(c) for c in two]).encode()).hexdigest()[:10]
    assert checkpoint.path_for(two, [1, 1, 2]) == pathlib.Path(f"/tmp/ckpts/nnpu+1runs-{digest}-seeds1_2.pt")
    assert checkpoint.path_for([one], [4], stop=60) == pathlib.Path("/tmp/ckpts/nnpu-seeds4-to60.pt")
    assert checkpoint.path_for(two[::-1], [1, 2]) != checkpoint.path_for(two, [1, 2])


def test_a_stack_s_fingerprint_holds_each_run_and_the_fork_point():
    runs = [CFG, replace(CFG, n_select=5)]
    fp = checkpoint.fingerprint(runs, [data()], [0], stop=3)
    assert [r["n_select"] for r in fp["config"]["runs"]] == [CFG.n_select, 5] and fp["stop"] == 3
    assert checkpoint.fingerprint([CFG], [data()], [0]) == checkpoint.fingerprint(CFG, [data()], [0])
    assert "runs" not in checkpoint.fingerprint([CFG], [data()], [0])["config"]
