"""The `paper` profile proven on the CPU: every page dry-run at the paper's exact settings
(one optimisation step an epoch visited, the first seed, selection and evaluation on the
first rows), and a dry run that writes its checkpoints and resumes from them."""
import importlib.util
import json
import os
from pathlib import Path

import pytest

from pusupport.core.config import TrainConfig
from pusupport.book.registry import book_pages, get
from pusupport.data import synthetic
from pusupport.core.training import train
from test_datasets import write_cifar100

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("execute", ROOT / "book" / "execute.py")
execute = importlib.util.module_from_spec(spec)
spec.loader.exec_module(execute)
TRAINING = [p for p in book_pages() if get(p["notebook"]).plan is not None]


@pytest.fixture(scope="session")
def dry_root(tmp_path_factory):
    """A folder for the dry runs, with CIFAR-100 as an official-format file set of 2,400
    training images (it exists nowhere here)."""
    root = tmp_path_factory.mktemp("dry")
    write_cifar100(root / "cifar100", n_train=2400, n_test=1100)
    return root


def dry_run(root, page: dict) -> tuple[dict, str]:
    """``page`` executed at `paper` with dry_run=1: (its summary, what its cells printed)."""
    out = root / "results"
    data_dir = str(root / "cifar100") if page["page"] == "real_cifar100" else os.environ.get("PUSUPPORT_DATA")
    execute.execute(page, root / "book", "paper", out, data_dir, "cpu", dry_run=1)
    folder = next(out.glob(f"{page['page']}*_dry_run"), None) or out / f"{page['page']}_dry_run"
    nb = json.loads((root / "book" / "pages" / f"{page['page']}.ipynb").read_text())
    printed = "".join("".join(o.get("text", "")) for c in nb["cells"] if c["cell_type"] == "code"
                      for o in c.get("outputs", []))
    return json.loads((folder / "summary.json").read_text()), printed


#: One half of the pages' dry runs by time: about 3.0 and 3.2 minutes beside the other half
#: on this machine's two cores (the standing page dry-runs every method on every data set:
#: 65 s; own_data 19 s, its P-vs-U classifier scoring the first rows as the loop does).
FIRST_HALF = ("standing", "histograms", "adding_p", "memorization", "own_data")


def pages(first: bool) -> list:
    return [pytest.param(p, id=p["page"]) for p in TRAINING if (p["page"] in FIRST_HALF) == first]


def check(root, page: dict) -> None:
    summary, printed = dry_run(root, page)
    if summary["status"] != "run":
        if os.environ.get("CI"):
            pytest.fail(f"{page['page']}: {summary.get('reason')}")
        pytest.skip(f"{page['page']}: data not here ({summary.get('reason', '')[:80]})")
    assert summary["profile"] == "paper"
    assert "DRY RUN (dry_run=1)" in printed and "cost at paper:" in printed


# Each half a class: one unit of work for one worker of `make test` (tests/conftest.py).
class TestFirstHalf:
    @pytest.mark.parametrize("page", pages(first=True))
    def test_the_page_dry_runs_at_the_paper_settings(self, dry_root, page):
        check(dry_root, page)


class TestSecondHalf:
    @pytest.mark.parametrize("page", pages(first=False))
    def test_the_page_dry_runs_at_the_paper_settings(self, dry_root, page):
        check(dry_root, page)


def test_a_dry_run_is_the_paper_schedule_cut_to_its_landmarks():
    cfg = TrainConfig(method="aapu", epochs=200, select_from=20, dry_run=3)
    assert cfg.visited_epochs() == [1, 20, 200]
    assert TrainConfig(method="aapu", epochs=200, select_from=20, dry_run=1).visited_epochs() == [20]
    recording = TrainConfig(method="nnpu", epochs=200, dry_run=2, record_u_losses=(50,))
    assert recording.visited_epochs() == [1, 50, 200]
    assert [recording.steps_in(e) for e in (1, 50, 200)] == [1, 0, 1]   # 50: U's losses only
    assert TrainConfig(epochs=200).steps_in(7) is None                   # a real run: every step
    assert cfg.visited_epochs(first=21) == [200]                      # resumed after epoch 20
    assert [cfg.evaluates_at(e) for e in (1, 20, 200)] == [False, False, True]


def test_a_dry_run_checkpoints_and_resumes(tmp_path):
    data = synthetic(0, n_test=3000)
    cfg = dict(method="aapu", epochs=1000, select_from=200, dry_run=3, checkpoint_dir=str(tmp_path),
               checkpoint_every=10, progress=False)
    first = train(data, **cfg)
    h = first.history
    assert h.epoch.tolist() == [1, 200, 1000] and h.lr.tolist() == [1e-4, 1e-5, 1e-5]
    assert h.n_selected.tolist()[:2] == [0, 1] and h.n_selected.iloc[2] in (1, 2)   # a re-pick allowed
    assert h.test_error.isna().tolist() == [True, True, False]
    saved = next(tmp_path.glob("*.pt"))
    stamp = saved.stat().st_mtime_ns
    again = train(data, **cfg)                                        # resumes: nothing left to run
    assert saved.stat().st_mtime_ns == stamp
    assert again.history.drop(columns="wall_time").equals(h.drop(columns="wall_time"))


def test_a_dry_run_step_takes_the_first_rows_of_a_paper_sized_batch():
    import torch
    from pusupport.core.config import DRY_RUN_STEP_ROWS
    from pusupport.core.batches import dry_run_batch
    members = [(torch.arange(100), torch.arange(1900), torch.arange(k * 10)) for k in (2, 5)]
    cut = dry_run_batch(tuple(members))
    for (bp, bu, bs), (p, u, s) in zip(cut, members):
        assert torch.equal(bp, p[:len(bp)]) and torch.equal(bu, u[:len(bu)]) and torch.equal(bs, s[:len(bs)])
        assert (len(bp), len(bu)) == (2, 30) and len(bp) + len(bu) == DRY_RUN_STEP_ROWS
    assert [len(b[2]) for b in cut] == [0, 1]                  # S in the batch's proportion
    assert [len(x) for x in dry_run_batch(((torch.arange(1), torch.arange(5000), torch.arange(0)),))[0]] == [1, 32, 0]
    small = ((torch.arange(3), torch.arange(7), torch.arange(2)),)             # smaller: whole
    assert all(torch.equal(a, b) for a, b in zip(dry_run_batch(small)[0], small[0]))
