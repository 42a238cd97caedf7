"""Papermill parameters and settings tables: validation, and the `paper` profile resolves to the
paper's numbers."""
from pathlib import Path

import pandas as pd
import pytest
import torch

from pusupport.core.config import ConfigError, Settings, TrainConfig
from pusupport.book.pages import resolve_page
from pusupport.book.registry import all_experiments, book_pages, get

ROOT = Path(__file__).resolve().parent.parent
BASE = dict(device="cpu", seeds=None, data_dir=None, output_dir="results", dry_run=0,
            checkpoints=None, runner=None)


def params(page, **kw):
    p = {**BASE, "profile": "paper", **{k: None for k in get(page).parameters}}
    if page == "real_data":
        p["dataset"] = "cifar10"
    return {**p, **kw}


@pytest.fixture
def cuda(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)


PAPER_SETTINGS = {
    "synthetic": dict(model=dict(name="mlp"), epochs=1000, batch_size=128, lr=1e-4, lr_schedule={100: 1e-5},
                      weight_decay=0.05, n_select=1, select_from=200),
    "cifar10": dict(epochs=200, batch_size=2000, lr=1e-4,
                    lr_schedule={50: 5e-5, 100: 1e-5}, weight_decay=0.017, n_select=150, select_from=20,
                    model=dict(name="kiryo_cnn", width=1.0, dropout=0.5)),
    "cifar100": dict(epochs=300, batch_size=1000, lr=1e-4,
                     lr_schedule={50: 1e-6}, weight_decay=0.1, n_select=160, select_from=60,
                     model=dict(name="coteaching_cnn", width=1.0, dropout=0.5)),
    "20news": dict(epochs=500, batch_size=5000, lr=1e-4, lr_schedule={50: 1e-5},
                   weight_decay=5e-4, n_select=160, select_from=60,
                   model=dict(name="news_mlp", width=1.0, dropout=0.0)),
}


@pytest.mark.parametrize("dataset", ["cifar10", "cifar100", "20news"])
def test_real_data_paper_profile_is_the_paper(cuda, dataset):
    exp = resolve_page("real_data", **params("real_data", dataset=dataset, device="cuda"))
    cfg = exp.train_config("aapu", 0)
    for key, value in PAPER_SETTINGS[dataset].items():
        assert getattr(cfg, key) == (TrainConfig(model=value).model if key == "model" else value), key
    assert (cfg.loss, cfg.beta, cfg.gamma, cfg.device) == ("logistic", 0.0, 1.0, "cuda")
    assert exp.seeds == list(range(10)) and exp.changes() == {}
    data = exp.settings.data
    assert data.n_labeled == 1000 and data.n_unlabeled is None   # U = the whole training set
    assert data.max_features is None


@pytest.mark.parametrize("page", ["synthetic", "biased_selection"])
def test_synthetic_pages_paper_profile(cuda, page):
    exp = resolve_page(page, **params(page, device="cuda"))
    cfg = exp.train_config("aapu", 0)
    for key, value in PAPER_SETTINGS["synthetic"].items():
        assert getattr(cfg, key) == (TrainConfig(model=value).model if key == "model" else value), key
    assert exp.settings.data.kwargs() == {"n_labeled": 100, "n_unlabeled": 1000, "n_test": 10_000}
    assert exp.seeds == list(range(10))


def test_page_specific_paper_settings(cuda):
    adding = resolve_page("adding_p", **params("adding_p", device="cuda"))
    assert adding.settings.page.extra_positives == 7000 and adding.dataset == "cifar10"
    hist = resolve_page("histograms", **params("histograms", device="cuda"))
    assert hist.settings.page.snapshot_epochs == [10, 50, 200] and hist.dataset == "cifar10"
    biased = resolve_page("biased_selection", **params("biased_selection", device="cuda"))
    assert biased.settings.page.snapshot_epochs == [200]
    assert biased.settings.page.selection_ks == [200, 300, 400]
    disc = resolve_page("discussion", **params("discussion", device="cuda"))
    assert disc.dataset == "cifar10" and disc.settings.page.n_select_grid == [40, 80, 160, 320]
    for page in ("adding_p", "histograms", "discussion"):
        cfg = resolve_page(page, **params(page, device="cuda")).train_config("aapu", 0)
        for key, value in PAPER_SETTINGS["cifar10"].items():
            assert getattr(cfg, key) == (TrainConfig(model=value).model if key == "model" else value), (page, key)


def test_cpu_profile_says_what_it_changed():
    exp = resolve_page("real_data", **params("real_data", profile="cpu"))
    text = exp.describe()
    assert "profile 'cpu'" in text and "train.epochs = 10   (paper: 200)" in text
    assert exp.changes()["model.width"] == (0.25, 1.0)
    assert "data.n_unlabeled = 5000   (paper: all training points)" in text


def test_describe_says_paper_only_for_what_the_paper_states():
    """No "(paper: None)" anywhere; a data set or page the paper does not have names its
    'paper' profile (the book's choice) instead of the paper."""
    for name, extra in (("real_data", {"dataset": "20news"}), ("real_data", {"dataset": "cifar10"}),
                        ("standing", {}), ("synthetic", {})):
        text = resolve_page(name, **{**params(name, profile="cpu"), **extra}).describe()
        assert "(paper: None)" not in text and "None)" not in text, (name, extra)
    fashion = resolve_page("real_data", **{**params("real_data", profile="cpu"), "dataset": "fashion_mnist"})
    assert "train.epochs = 30   ('paper' profile: 200)" in fashion.describe()
    news = resolve_page("real_data", **{**params("real_data", profile="cpu"), "dataset": "20news"})
    assert "data.max_features = 20000   (paper: the whole vocabulary)" in news.describe()


def test_explicit_parameters_override_and_are_reported():
    exp = resolve_page("synthetic", **params("synthetic", profile="cpu", epochs=300, seeds=[3, 4]))
    assert exp.train_config("aapu", 3).epochs == 300 and exp.seeds == [3, 4]
    assert exp.changes()["train.epochs"] == (300, 1000) and exp.changes()["page.n_seeds"] == (2, 10)
    assert exp.changes()["seeds"][0] == [3, 4]


def test_a_short_profile_s_epochs_given_leave_the_page_runnable():
    """epochs=8 at `smoke` (its first selection at 6) runs; only the cost at the paper's
    settings, where the first selection is at 200, is then not priced, and says why."""
    page = resolve_page("synthetic", **params("synthetic", profile="smoke", epochs=8, seeds=[0, 1]))
    assert page.train_config("aapu", 0).select_from == 6
    said = page.describe()
    assert "cost at paper: not priced, since with epochs=8 the paper's settings are invalid" in said
    assert "cost at paper: not priced" not in resolve_page("synthetic", **params("synthetic", profile="smoke")).describe()


def test_lr_and_checkpoints_are_parameters_and_describe_says_how_runs_run(tmp_path):
    exp = resolve_page("synthetic", **params("synthetic", profile="cpu", lr=1e-3, checkpoints=True,
                                             output_dir=str(tmp_path)))
    assert exp.train_config("aapu").lr == 1e-3 and exp.changes()["train.lr"] == (1e-3, 1e-4)
    assert exp.checkpoints and "every run checkpoints under synthetic/checkpoints" in exp.describe()
    paper = resolve_page("synthetic", **params("synthetic"))
    assert paper.checkpoints and not resolve_page("synthetic", **params("synthetic", checkpoints=False)).checkpoints
    assert "runs: in this kernel" in paper.describe()
    ray = resolve_page("synthetic", **params("synthetic", runner={"address": "10.0.0.1:6379", "task": {}}))
    assert "runs: Ray tasks on the build's cluster" in ray.describe() and "10.0.0.1" not in ray.describe()


def test_mistyped_parameter_is_named():
    with pytest.raises(ConfigError, match=r"unknown parameter\(s\) \['seedz'\].*the valid parameters "
                                          r"are \[.*'seeds'.*\].*check the spelling"):
        resolve_page("synthetic", **{**params("synthetic"), "seedz": [1]})


@pytest.mark.parametrize("name,value,expected", [("epochs", "10", "int"), ("seeds", 3, "list"),
                                                  ("epochs", True, "int"), ("profile", 1, "str")])
def test_wrong_type_is_rejected(name, value, expected):
    with pytest.raises(TypeError, match=f"parameter {name}=.*expected {expected}"):
        resolve_page("synthetic", **{**params("synthetic"), name: value})


def test_unknown_profile_and_dataset():
    with pytest.raises(ValueError, match="unknown profile 'gpu'"):
        resolve_page("synthetic", **params("synthetic", profile="gpu"))
    with pytest.raises(ValueError, match="unknown dataset 'mnist'"):
        resolve_page("real_data", **params("real_data", dataset="mnist"))
    with pytest.raises(ValueError, match="unknown page"):
        resolve_page("nope")


def test_every_book_page_declares_and_passes_its_parameters():
    """The parameters cell defines exactly the experiment's parameters, and the page passes
    every one of them to resolve_page by name."""
    import ast
    import jupytext
    for entry in book_pages():
        name = entry["notebook"]
        nb = jupytext.read(ROOT / "notebooks" / f"{name}.md")
        source = nb.cells[[c.cell_type for c in nb.cells].index("code")].source
        declared = {line.split("=")[0].strip() for line in source.splitlines() if "=" in line}
        assert declared == set(get(name).all_parameters()), name
        assert set(entry["parameters"]) <= declared
        calls = [node for c in nb.cells if c.cell_type == "code" and "resolve_page(" in c.source
                 for node in ast.walk(ast.parse(c.source)) if isinstance(node, ast.Call)
                 and getattr(node.func, "id", None) == "resolve_page"]
        assert len(calls) == 1 and calls[0].args[0].value == name, name
        assert {k.arg: k.value.id for k in calls[0].keywords} == {k: k for k in declared}, name


def test_no_notebook_calls_the_trainer_or_builds_a_training_config():
    """A notebook holds prose, maths and calls: its runs come from the page's plan
    (``page.run``, ``page.results``) or a driver of its experiment module, never from the
    training loop or a TrainConfig built in a cell."""
    import ast
    import jupytext
    trainers = {"train", "train_seeds", "train_grid", "fit", "fit_shared", "train_config", "config",
                "TrainConfig", "resolved", "execute", "train_jobs", "train_runs"}
    for path in sorted((ROOT / "notebooks").glob("*.md")):
        code = "\n".join(c.source for c in jupytext.read(path).cells if c.cell_type == "code")
        called = {getattr(n.func, "attr", getattr(n.func, "id", None))
                  for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Call)}
        imported = {n.module for n in ast.walk(ast.parse(code)) if isinstance(n, ast.ImportFrom)}
        assert not called & trainers, (path.name, called & trainers)
        assert not {m for m in imported if m and m.startswith("pusupport.core")}, path.name


def test_a_plan_stacks_its_mlp_runs_across_settings_and_keeps_the_tidy_layout(tmp_path, monkeypatch):
    from pusupport.book.plan import RunSpec
    from pusupport.core import runtime
    exp = resolve_page("synthetic", **params("synthetic", profile="smoke", seeds=[0, 1],
                                           output_dir=str(tmp_path)))
    specs = [RunSpec("nnpu", "nnpu"), RunSpec("naive", "naive"), RunSpec("aapu", "aapu"),
             RunSpec("aapu π=0.3", "aapu", prior=0.3),
             RunSpec("aapu n_labeled=30", "aapu", {"data": {"n_labeled": 30}})]
    jobs = [(job.labels, job.seeds) for job in exp.resolved(specs).jobs]
    assert jobs == [(("nnpu", "naive", "aapu"), (0, 1)),         # naive and aaPU fork from nnPU
                    (("aapu π=0.3",), (0, 1)), (("aapu n_labeled=30",), (0, 1))]
    monkeypatch.setitem(runtime.SETTINGS_STACKED, runtime.CPU_MEASURED, ("mlp",))   # as if measured faster
    jobs = [(job.labels, job.seeds) for job in exp.resolved(specs).jobs]
    assert jobs == [(("nnpu", "naive", "aapu", "aapu π=0.3"), (0, 1)), (("aapu n_labeled=30",), (0, 1))]
    h = exp.run(specs)
    assert list(dict.fromkeys(zip(h.method, h.seed))) == [(s.label, seed) for s in specs for seed in (0, 1)]
    assert (h.groupby(["method", "seed"]).epoch.max() == exp.settings.train.epochs).all()
    assert not h[h.method == "aapu π=0.3"].risk.equals(h[h.method == "aapu"].risk)


def test_a_view_is_read_from_its_method_s_run_not_trained(tmp_path, capsys):
    """nnPUSB trains as nnPU does: a plan with both trains nnPU once and reads nnPUSB from it
    at its own threshold (said on the console); alone, nnPUSB trains an nnPU run; the cost
    model prices the view at nothing."""
    from pusupport.book.plan import RunSpec, as_trained
    exp = resolve_page("synthetic", **params("synthetic", profile="smoke", seeds=[0, 1],
                                           output_dir=str(tmp_path)))
    both = [RunSpec("nnpusb", "nnpusb"), RunSpec("nnpu", "nnpu")]
    trained, source = as_trained(both)
    assert [s.method for s in trained] == ["nnpu"]
    assert source == {"nnpusb": (trained[0].label, "nnpusb"), "nnpu": (trained[0].label, None)}
    h = exp.run(both)
    assert "nnpusb, read from the nnpu (for nnpusb) run at its own threshold" in capsys.readouterr().out
    sb, nn = (h[h.method == m].reset_index(drop=True) for m in ("nnpusb", "nnpu"))
    assert sb.test_error.equals(nn["test_error:nnpusb"]) and sb.test_auc.equals(nn.test_auc)
    last = sb.epoch == sb.epoch.max()
    assert sb.test_error[~last].isna().all() and sb.test_error[last].notna().all()
    assert (sb.test_error[last] != nn.test_error[last]).any()           # another threshold
    alone = exp.run([RunSpec("nnpusb", "nnpusb")])
    assert "read from the run store" in capsys.readouterr().out          # the run above
    assert alone.test_error.equals(sb.test_error)
    assert exp.run([RunSpec("nnpusb", "nnpusb")]).test_error.equals(sb.test_error)
    assert "read from the run store" not in capsys.readouterr().out      # told once a page
    from pusupport.book.experiment import Experiment
    plan = Experiment("x", dataset="synthetic", plan=lambda s: both).runs(profile="smoke")
    assert [r.cfg.method for r in plan.runs] == ["nnpu"] and plan.shown == source


def test_random_rows_do_not_follow_a_class_sorted_order():
    from pusupport.book.experiments.memorization import random_rows
    y = torch.cat([torch.ones(500), -torch.ones(500)])      # sorted, as ImageFolder test splits are
    x = torch.arange(1000.0)
    xs, ys = random_rows(200, x, y)
    assert 0.3 < float((ys > 0).float().mean()) < 0.7
    assert torch.equal(y[xs.long()], ys)


def test_paper_profile_runs_checkpoint_and_resume(tmp_path):
    """At the paper profile a page's runs checkpoint; re-running the page resumes them."""
    from pusupport.data import synthetic
    from pusupport.book.plan import RunSpec
    exp = resolve_page("synthetic", **params("synthetic", epochs=3, select_from=2, seeds=[0, 1],
                                           output_dir=str(tmp_path)))

    def make_data(seed):
        return synthetic(seed, n_labeled=40, n_unlabeled=200, n_test=300)
    nnpu = [RunSpec("nnpu", "nnpu", {"train": {"progress": False}})]
    first = exp.run(nnpu, make_data)
    assert (exp.results_dir / "checkpoints" / "nnpu" / "nnpu-seeds0_1.pt").exists()
    again = exp.run(nnpu, make_data)
    assert again.equals(first)                     # resumed at its end: wall times included


def test_unknown_key_in_a_profile_table_names_the_valid_keys():
    with pytest.raises(ConfigError, match=r"unknown train setting\(s\) \['epoch'\]\. The valid train "
                                          r"keys are \['method', 'model', .*'epochs'"):
        Settings().merge({"train": {"epoch": 10}})
    with pytest.raises(ConfigError, match=r"unknown data setting\(s\) \['epochs'\]; epochs belongs in "
                                          r"section 'train'\. The valid data keys are \['n_labeled'"):
        Settings().merge({"data": {"epochs": 10}})            # a misplaced key
    with pytest.raises(ConfigError, match=r"unknown section\(s\) \['optim'\]: the sections are "
                                          r"\['data', 'model', 'train', 'page'\]"):
        Settings().merge({"optim": {"lr": 1e-3}})
    with pytest.raises(ConfigError, match=r"unknown model setting\(s\) \['widht'\]\. The valid model "
                                          r"keys are \['name', 'width', 'dropout', 'activation'\]"):
        Settings().merge({"model": {"widht": 0.5}})


def test_unknown_key_in_training_overrides_names_the_valid_keys():
    from pusupport.data import synthetic
    from pusupport.core.training import train
    with pytest.raises(ConfigError, match=r"unknown train setting\(s\) \['image_folder'\]\. "
                                          r"The valid train keys are \[.*'epochs'.*\]"):
        train(synthetic(0, 10, 50, 10), image_folder="/tmp/x")
    exp = resolve_page("synthetic", **params("synthetic", profile="smoke"))
    with pytest.raises(ConfigError, match=r"unknown train setting\(s\) \['n_labeled'\]; n_labeled "
                                          r"belongs in section 'data'"):
        exp.train_config("aapu", n_labeled=5)


def test_every_table_merges_for_every_page_and_profile():
    """All settings tables are valid: every page resolves at every profile."""
    from pusupport.book.paper import PROFILES
    for page in all_experiments():
        for profile in PROFILES:
            exp = resolve_page(page, **params(page, profile=profile))
            assert exp.settings.page.n_seeds == len(exp.seeds)


@pytest.mark.parametrize("kw,match", [
    (dict(epochs=0), "epochs must be an int >= 1"),
    (dict(select_from=50, epochs=10), r"select_from=50 is outside epochs 1\.\.10"),
])
def test_page_parameters_conflicting_with_the_schedule_fail_in_the_first_cell(kw, match):
    with pytest.raises(ValueError, match=match):
        resolve_page("synthetic", **params("synthetic", profile="smoke", **kw))


def test_snapshot_epochs_beyond_the_run_fail_in_the_first_cell():
    with pytest.raises(ValueError, match=r"snapshot epochs \[5, 10\] are outside epochs 1\.\.4"):
        resolve_page("histograms", **params("histograms", profile="cpu", epochs=4))


def test_prior_page_at_the_paper_profile_keeps_each_prior_s_checkpoints_apart(tmp_path):
    """Every prior factor is its own group of checkpoints; all in one folder, the second
    factor's runs were refused as 'different data'."""
    from dataclasses import replace
    from pusupport.data import synthetic
    from pusupport.book.experiments.prior import run_prior_sensitivity
    exp = resolve_page("prior", **params("prior", seeds=[0, 1], output_dir=str(tmp_path)))
    exp = replace(exp, settings=exp.settings.merge({"train": {"epochs": 2, "select_from": 1},
                                                    "page": {"prior_factors": [0.8, 1.0]}}))

    def make_data(seed):
        return synthetic(seed, n_labeled=20, n_unlabeled=100, n_test=50)
    h = run_prior_sensitivity(exp, make_data, estimate=0.45)
    assert set(h.prior_label) == {"×0.8", "×1", "BBE estimate"}
    groups = sorted(p.name for p in (exp.results_dir / "checkpoints").iterdir())
    assert groups == ["prior BBE estimate", "prior ×0.8", "prior ×1"]
    again = run_prior_sensitivity(exp, make_data, estimate=0.45)      # resumed from each group
    assert again.drop(columns="wall_time").equals(h.drop(columns="wall_time"))


def test_own_data_page_parameters():
    """Images or features, positive classes as names or ints, image_size int or pair, π given
    or None, a model by name or dict; a wrong type names the fix."""
    from pusupport.core.config import ModelConfig
    from pusupport.book.experiments.own_data import own_data_settings
    page = resolve_page("own_data", **params("own_data", profile="smoke", features="t.csv",
                                           label_column="y", positive_classes=[1, 2], image_size=[20, 24],
                                           prior=0.3, model={"name": "mlp", "width": 0.5}))
    s = own_data_settings(page)
    assert s["features"] == "t.csv" and s["image_folder"] is None and s["label_column"] == "y"
    assert s["positive_classes"] == ["1", "2"] and s["prior"] == 0.3 and s["image_size"] == [20, 24]
    assert s["model"] == ModelConfig("mlp", width=0.5) and s["train"].epochs == 2
    assert own_data_settings(resolve_page("own_data", **params("own_data", image_folder="d",
                                                              positive_classes=["a"], model=None)))["model"] is None
    with pytest.raises(TypeError, match="parameter prior='0.3' has type str; expected float or None"):
        resolve_page("own_data", **params("own_data", prior="0.3"))
    with pytest.raises(TypeError, match="parameter image_size=.*expected int or list or None"):
        resolve_page("own_data", **params("own_data", image_size="32"))
    # without positive_classes your data are read as PU (labelled positives beside a pool)
    assert own_data_settings(resolve_page("own_data", **params("own_data", features="t.csv")))["pu"]
    assert not own_data_settings(resolve_page("own_data", **params("own_data", features="t.csv",
                                                                    positive_classes=[1])))["pu"]
    with pytest.raises(ValueError, match="image_folder or features, not both"):
        own_data_settings(resolve_page("own_data", **params("own_data", features="t", image_folder="d")))


def test_the_own_data_page_checkpoints_where_its_profile_does(tmp_path):
    """At `paper` the page's aaPU run checkpoints under its results (a re-run resumes, as
    train --checkpoint-dir does: tests/test_own_cli.py); `cpu` does not."""
    from pusupport.book.experiments.own_data import own_data_settings
    given = dict(features="t.csv", positive_classes=[1], output_dir=str(tmp_path))
    paper = resolve_page("own_data", **params("own_data", profile="paper", **given))
    assert own_data_settings(paper)["train"].checkpoint_dir == str(paper.results_dir / "checkpoints")
    cpu = resolve_page("own_data", **params("own_data", profile="cpu", **given))
    assert own_data_settings(cpu)["train"].checkpoint_dir is None


def test_a_dry_run_keeps_the_settings_takes_the_first_seed_and_says_so():
    page = resolve_page("real_data", **params("real_data", profile="paper", dataset="cifar10",
                                            dry_run=1))
    paper = resolve_page("real_data", **params("real_data", profile="paper", dataset="cifar10"))
    assert page.seeds == [0] and page.name == "real_cifar10_dry_run"
    assert page.settings.train.batch_size == 2000 and page.settings.train.dry_run == 1
    assert page.settings.data == paper.settings.data and page.settings.model == paper.settings.model
    assert "DRY RUN (dry_run=1)" in page.describe() and "epochs [20]" in page.describe()
    with pytest.raises(ValueError, match="dry_run=4"):
        resolve_page("synthetic", **params("synthetic", dry_run=4))


def test_a_page_runs_the_plan_that_the_cost_model_prices(tmp_path):
    """One plan: the page trains each of its runs (labels in the history), and the cost model
    prices the same runs; a run with data changes sees them (adding P: more labelled P)."""
    exp = resolve_page("formulation", **params("formulation", profile="smoke", seeds=[0, 1],
                                               output_dir=str(tmp_path)))
    history = exp.run()
    assert list(dict.fromkeys(history.method)) == [spec.label for spec in exp.plan()]
    assert len(exp.experiment.runs().runs) == len(exp.plan())
    exp = resolve_page("adding_p", **params("adding_p", profile="smoke", seeds=[0],
                                            output_dir=str(tmp_path)))
    plain, more = exp.plan()
    assert more.changes == {"data": {"n_labeled": exp.settings.data.n_labeled + 200}}
    priced = exp.experiment.runs(profile="smoke")
    assert [r.sizes.n_p for r in priced.runs] == [100, 300]


def test_every_comparative_claim_has_its_fixed_seeds_at_cpu():
    """Seeds are fixed per page and profile before any run: at `cpu` every comparative claim
    has at least 6 (the fewest whose exact test can reach p < 0.05), 10 where the budget
    allows (CIFAR-10 and adding P: 6)."""
    from pusupport.book.registry import book_claims
    counts = {}
    for claim, folder in book_claims():
        if claim.check.__qualname__.startswith("lower_error") or claim.check.__name__ == "sensitivity":
            entry = next(e for e in book_pages() if e["page"] == folder)
            page = resolve_page(entry["notebook"], **params(entry["notebook"], profile="cpu",
                                                            **entry["parameters"]))
            counts[folder] = len(page.seeds)
    assert counts == {"adding_p": 6, "biased_selection": 10, "synthetic": 10, "real_cifar10": 6,
                      "real_cifar100": 6, "real_20news": 10, "real_fashion_mnist": 10, "prior": 10}
    readings = resolve_page("readings", **params("readings", profile="cpu"))
    assert len(readings.seeds) == 10


def test_a_page_s_fingerprint_follows_its_settings_not_where_it_runs(tmp_path):
    one = resolve_page("synthetic", **params("synthetic", profile="cpu"))
    same = resolve_page("synthetic", **params("synthetic", profile="cpu", output_dir=str(tmp_path),
                                               checkpoints=True))
    assert one.fingerprint() == same.fingerprint() and len(one.fingerprint()) == 16
    assert resolve_page("synthetic", **params("synthetic", profile="cpu", lr=1e-3)).fingerprint() != one.fingerprint()
    assert resolve_page("synthetic", **params("synthetic", profile="cpu", seeds=[0, 1])).fingerprint() != one.fingerprint()
    summary = one.save(pd.DataFrame({"method": ["m"], "seed": [0], "epoch": [1], "test_error": [0.1],
                                     "test_auc": [0.9]}), name=str(tmp_path / "x"))
    assert summary["fingerprint"] == one.fingerprint() and summary["n_test"] == 10_000
