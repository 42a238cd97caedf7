"""Long runs checkpoint and resume: a killed run, resumed, ends as an uninterrupted one."""
import signal
import subprocess
import sys
import textwrap
import time

import pandas as pd
import pytest
import torch

from pusupport.core import checkpoint
from pusupport.data import synthetic
from pusupport.core.training import train

SETTINGS = dict(method="aapu", epochs=300, select_from=3, n_select=2, batch_size=64, lr=1e-3,
                lr_schedule={150: 1e-4}, seed=5, progress=False, checkpoint_every=5)
DATA = dict(seed=0, n_labeled=40, n_unlabeled=300, n_test=500)

SCRIPT = textwrap.dedent("""
    import sys, torch
    torch.set_num_threads({threads})
    from pusupport.data import synthetic
    from pusupport.core.training import train
    train(synthetic(**{data}), checkpoint_dir=sys.argv[1], **{settings})
""")


def test_killed_run_resumes_to_the_same_history(tmp_path):
    ckpt = tmp_path / "ckpt"
    script = SCRIPT.format(threads=torch.get_num_threads(), data=DATA, settings=SETTINGS)
    proc = subprocess.Popen([sys.executable, "-c", script, str(ckpt)])
    target = ckpt / "aapu-seeds5.pt"
    deadline = time.time() + 120
    while not target.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)                # a real interruption, mid-run
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run finished before it could be killed"
    saved = torch.load(target, weights_only=False)["epoch"]
    assert 5 <= saved < SETTINGS["epochs"]

    resumed = train(synthetic(**DATA), checkpoint_dir=str(ckpt), **SETTINGS)
    straight = train(synthetic(**DATA), **SETTINGS)
    cols = [c for c in straight.history.columns if c != "wall_time"]
    pd.testing.assert_frame_equal(resumed.history[cols], straight.history[cols])
    assert torch.equal(resumed.selected.mask, straight.selected.mask)
    assert resumed.picks.equals(straight.picks)
    for a, b in zip(resumed.model.state_dict().values(), straight.model.state_dict().values()):
        assert torch.equal(a, b)


def test_finished_run_is_not_repeated(tmp_path):
    quick = {**SETTINGS, "epochs": 6}
    first = train(synthetic(**DATA), checkpoint_dir=str(tmp_path), **quick)
    again = train(synthetic(**DATA), checkpoint_dir=str(tmp_path), **quick)
    pd.testing.assert_frame_equal(first.history, again.history)      # wall times included


def test_changed_configuration_refuses_a_stale_checkpoint(tmp_path):
    quick = {**SETTINGS, "epochs": 6}
    train(synthetic(**DATA), checkpoint_dir=str(tmp_path), **quick)
    with pytest.raises(ValueError, match=r"different settings \['lr'\].*Delete it"):
        train(synthetic(**DATA), checkpoint_dir=str(tmp_path), **{**quick, "lr": 5e-4})
    with pytest.raises(ValueError, match="different data"):
        train(synthetic(**{**DATA, "seed": 1}), checkpoint_dir=str(tmp_path), **quick)


def test_checkpoint_from_other_code_is_refused(tmp_path, monkeypatch):
    quick = {**SETTINGS, "epochs": 6}
    train(synthetic(**DATA), checkpoint_dir=str(tmp_path), **quick)
    monkeypatch.setattr(checkpoint, "code_version", lambda: "edited")
    with pytest.raises(ValueError, match="different training code.*Delete it"):
        train(synthetic(**DATA), checkpoint_dir=str(tmp_path), **quick)
