"""DEVELOPING.md's "Extending the book", followed in a temporary copy of the project: a toy
method, a toy data set and a toy page, each added in the files the recipe names, then
planned, priced and run at `smoke` there."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

METHOD = '''"""A toy method (the extension test): nnPU on the sigmoid loss, whatever the config's."""
from ..methods import Method, register
from ..risks import nnpu_risk

register(Method("toy", "Toy", "nnPU on the sigmoid loss (a test)", color="#000000",
                risk=lambda b: nnpu_risk(b.g_p, b.g_u, b.prior, "sigmoid")))
'''
LOADER = '''

def load_toy(data_dir=None, download: bool = True) -> LabeledData:
    """Two 2-D Gaussian classes, 300 training and 100 test points (the extension test)."""
    gen = torch.Generator().manual_seed(0)
    y = torch.randint(0, 2, (400,), generator=gen)
    x = torch.randn(400, 2, generator=gen) + 2.0 * y[:, None]
    return LabeledData(x[:300], y[:300], x[300:], y[300:], ["neg", "pos"])


DATASETS["toy"] = (load_toy, ["pos"])
'''
SETTINGS = '''
PAPER["toy"] = {"data": dict(n_labeled=40), "model": dict(name="mlp"),
                "train": dict(epochs=12, batch_size=64, lr=1e-3, lr_schedule={}, n_select=2,
                              select_from=4),
                "page": dict(n_seeds=2)}
PROFILE_CHANGES["toy"] = {"paper": {}, "cpu": {}, "smoke": {"train": dict(epochs=6, select_from=3)}}
NOT_IN_PAPER.add("toy")
'''
PAGE = '''"""A toy page (the extension test): the toy method beside nnPU and aaPU on the toy data."""
from ..experiment import TRAINING, Experiment, runs_of

EXPERIMENT = Experiment(
    "toy", dataset="toy", not_in_paper="the extension test's page",
    changes={"paper": {}, "cpu": {}, "smoke": {}}, parameters=TRAINING,
    plan=lambda s: runs_of(["toy", "nnpu", "aapu"]), claims=())
'''
SCRIPT = '''
import json, sys
from pusupport.book import registry
from pusupport.book.committed import page_at
page = page_at("toy", "smoke", output_dir=sys.argv[1], device="cpu")
plan = page.resolved()
history = page.run()
table = registry.cost_table()
print(json.dumps({"jobs": [list(job.labels) for job in plan.jobs],
                  "last": history.groupby("method").epoch.max().to_dict(),
                  "seeds": sorted(int(s) for s in history.seed.unique()),
                  "priced": table[table.page == "toy"].to_dict("records")}))
'''


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def test_a_method_a_data_set_and_a_page_added_as_developing_says(tmp_path):
    project = tmp_path / "project"
    shutil.copytree(ROOT / "pusupport", project / "pusupport", ignore=shutil.ignore_patterns("__pycache__"))
    (project / "book").mkdir()
    shutil.copy(ROOT / "book" / "_toc.yml", project / "book" / "_toc.yml")
    package = project / "pusupport"
    # a method: one short file in core/baselines/, imported by its __init__
    (package / "core" / "baselines" / "toy.py").write_text(METHOD)
    _append(package / "core" / "baselines" / "__init__.py", "from . import toy  # noqa: F401,E402\n")
    # a data set: its loader and DATASETS entry, its SIZES, its paper settings and profiles
    _append(package / "data" / "datasets.py", LOADER)
    _append(package / "data" / "sizes.py", '\nSIZES["toy"] = Sizes(300, 100, (2,))\n')
    _append(package / "book" / "paper.py", SETTINGS)
    # a page: its module in book/experiments/ and its line in the table of contents
    (package / "book" / "experiments" / "toy.py").write_text(PAGE)
    toc = project / "book" / "_toc.yml"
    toc.write_text(toc.read_text().replace("      - file: pages/synthetic\n",
                                           "      - file: pages/synthetic\n      - file: pages/toy\n"))
    env = {**os.environ, "PYTHONPATH": str(project), "TQDM_DISABLE": "1"}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "out")], cwd=project, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.splitlines()[-1])
    assert sorted(got["jobs"]) == [["nnpu", "aapu"], ["toy"]]   # aaPU forks from nnPU; seeds stacked
    assert got["last"] == {"toy": 6, "nnpu": 6, "aapu": 6} and got["seeds"] == [0, 1]
    (priced,) = got["priced"]
    assert priced["runs"] == 6 and "largest run" in priced
