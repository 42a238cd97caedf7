"""The cost model: FLOPs against hand counts, linear scaling, Adam-state memory, and the
DEVELOPING.md's cost tables are the ones the code computes."""
from pathlib import Path

import pytest

from pusupport.core.config import ModelConfig, TrainConfig
from pusupport.core.methods import views_of
from pusupport.core.runtime import GPU_MEASURED, STACKED
from pusupport.book.cost import Data, Run, forward_flops, markdown, price, run_flops, run_memory
from dataclasses import replace

from pusupport.book.experiment import Experiment, RunSpec
from pusupport.book.experiments.standing import COMPARED
from pusupport.book.registry import cost_table, get, method_cost_table

ROOT = Path(__file__).resolve().parent.parent


def test_synthetic_mlp_flops_by_hand():
    linear = 2 * (2 * 200 + 200 * 600 + 600 * 1)       # 2 FLOPs per multiply-add
    elementwise = 2 * (200 + 600)                       # BatchNorm and ReLU, one FLOP an output
    assert forward_flops(ModelConfig("mlp"), (2,)) == linear + elementwise


def test_kiryo_cnn_flops_by_hand():
    first_conv = 2 * (3 * 3 * 3) * 96 * 32 * 32         # 3×3×3 kernel, 96 maps of 32×32
    assert first_conv == 5_308_416
    # (c_in, c_out, kernel, output side) of the other convolutions
    convs = [(96, 96, 3, 32), (96, 96, 3, 16), (96, 192, 3, 16), (192, 192, 3, 16),
             (192, 192, 3, 8), (192, 192, 3, 8), (192, 192, 1, 8), (192, 10, 1, 8)]
    conv = first_conv + sum(2 * ci * k * k * co * n * n for ci, co, k, n in convs)
    bn_relu = 2 * (96 * 32 * 32 + sum(co * n * n for _, co, _, n in convs))
    fc = 2 * (640 * 1000 + 1000 * 1000 + 1000 * 1) + 2 * 1000     # and the two ReLUs
    assert forward_flops(ModelConfig("kiryo_cnn"), (3, 32, 32)) == conv + bn_relu + fc
    # only the first convolution sees the channels: one channel less, one third of it less
    one_channel = forward_flops(ModelConfig("kiryo_cnn"), (1, 32, 32))
    assert forward_flops(ModelConfig("kiryo_cnn"), (3, 32, 32)) - one_channel == first_conv * 2 // 3


def test_sparse_first_layer_counts_non_zeros():
    dense = forward_flops(ModelConfig("news_mlp"), (1000,))
    sparse = forward_flops(ModelConfig("news_mlp"), (1000,), nnz=10)
    assert dense - sparse == 2 * (1000 - 10) * 300


def test_aapu_epochs_by_hand():
    data = Data(n_p=10, n_u=100, n_test=50, eligible=100, shape=(2,))
    cfg = TrainConfig(method="aapu", epochs=3, select_from=2, n_select=5, eval_every=0)
    # epoch 1: train P + U; 2: train P + U, select over U; 3: train P + U + 5 in S, test, select
    rows = 3 * (110 + 110 + 115) + 50 + 2 * 100
    assert run_flops(Run(cfg, data)) == rows * forward_flops(cfg.model, (2,))


def test_a_view_costs_nothing_and_its_method_scores_u_at_the_last_epoch():
    data = Data(n_p=10, n_u=100, n_test=50, eligible=100, shape=(2,))
    nnpu = TrainConfig(method="nnpu", epochs=3, eval_every=0)
    # each epoch: train P + U; the last: the test set, and U for nnPUSB's threshold
    assert run_flops(Run(nnpu, data)) == (3 * 3 * 110 + 50 + 100) * forward_flops(nnpu.model, (2,))
    # nnPUSB trained itself: P and U scored for its threshold at the evaluated epoch
    nnpusb = replace(nnpu, method="nnpusb")
    assert run_flops(Run(nnpusb, data)) == (3 * 3 * 110 + 50 + 110) * forward_flops(nnpu.model, (2,))
    assert run_flops(Run(nnpusb, data, view=True)) == 0 == run_memory(Run(nnpusb, data, view=True))
    assert price([Run(nnpu, data, 3), Run(nnpusb, data, 3, view=True)]).runs == 3


def test_page_total_is_linear_in_seeds_and_epochs():
    formulation = get("formulation")                  # uPU and nnPU: no selection
    base = price(formulation.runs())
    last = sum(forward_flops(r.cfg.model, r.data.shape) * r.data.n_u     # U at the last epoch, for
               for r in formulation.runs().priced() if views_of(r.cfg.method))  # the views' thresholds
    assert last > 0
    longer = replace(formulation, changes={"paper": {"train": dict(epochs=600), "page": dict(n_seeds=3)}})
    assert price(longer.runs()).flops == 3 * (2 * base.flops - last) and price(longer.runs()).runs == 6


def test_the_cost_model_prices_the_plan_a_page_runs():
    """A new experiment is priced from its plan alone: no page name in the cost model."""
    plan = lambda s: [RunSpec("a", "nnpu"), RunSpec("b", "nnpu", {"train": {"epochs": 2}}, seeds=1)]
    new = Experiment("not_a_page", dataset="synthetic", plan=plan,
                     changes={"paper": {"train": dict(epochs=4), "page": dict(n_seeds=3)}})
    assert "mlp" in STACKED[GPU_MEASURED]              # measured faster stacked on a GPU
    a, b = new.runs().priced()
    assert (a.seeds, a.stacked, a.cfg.epochs) == (3, True, 4)
    assert (b.seeds, b.cfg.epochs) == (1, 2)
    assert price(new.runs()).flops == 3 * run_flops(replace(a, seeds=1)) + run_flops(b)


def test_peak_memory_adam_state_on_a_tiny_model():
    cfg = TrainConfig(method="nnpu", model=ModelConfig("mlp", width=0.01), batch_size=8)
    # 2 → 2 → 6 → 1: Linear 2·2+2, BN 2·2, Linear 2·6+6, BN 2·6, Linear 6+1
    parameters = 6 + 4 + 18 + 12 + 7
    data = Data(n_p=4, n_u=4, n_test=0, eligible=4, shape=(2,))
    elements = 2 + (2 + 2 + 2) + (6 + 6 + 6) + 1        # the input and every layer's output
    weights = 4 * 4 * parameters      # float32 parameters, gradients, Adam's two moments
    activations = 2 * elements * 8    # bf16, one batch of all 8 rows
    held = 4 * 2 * (4 + 4)            # P and U in float32
    assert run_memory(Run(cfg, data)) == weights + activations + held
    stacked = Run(cfg, data, seeds=3, stacked=True)  # per-seed copies of all (unshared data)
    assert run_memory(stacked) == 3 * (weights + activations + held)


@pytest.mark.parametrize("make", [cost_table, method_cost_table])
def test_the_cost_tables_in_developing_md_are_current(make):
    table = markdown(make())
    assert table in (ROOT / "DEVELOPING.md").read_text(), \
        f"DEVELOPING.md's cost table is stale: paste `python -m pusupport.book.registry`:\n{table}"


def test_the_method_table_prices_every_method_on_every_data_set():
    table = method_cost_table().set_index("method")
    assert set(table.index) == {"aapu", *COMPARED}
    assert (table.loc[["vpu", "distpu"], "20news"] == "—").all()
    assert (table.drop(columns="20news") != "—").all().all()
    assert (table.loc["nnpusb"] == "0 (nnPU's run)").all()             # read from nnPU's run


@pytest.mark.parametrize("dataset", ["cifar10", "cifar100"])
def test_on_a_gpu_the_cifar_pages_at_paper_train_and_are_priced_one_seed_at_a_time(dataset):
    """H200, paper profile: Kiryo's CNN 2.0× and the Co-teaching CNN 1.1× slower a member
    stacked (core/runtime.py); the cost model prices the layout the runtime picks."""
    plan = get("real_data").runs(dataset)
    assert plan.device == "cuda" and plan.jobs
    assert all(r.cfg.model.name not in STACKED[GPU_MEASURED] for r in plan.runs)
    assert all(len(job.seeds) == 1 for job in plan.jobs)
    assert {s for job in plan.jobs for s in job.seeds} == set(range(10))
    assert all(not r.stacked and r.seeds == 1 for r in plan.priced())


def test_measured_rates_are_the_gpu_benchmarks_and_price_the_pages_that_use_them():
    """MEASURED holds bench/results-cuda.json's epochs (the machine it names); a run of a
    measured model on its data set is priced at that rate, anything else at the assumed one."""
    import json
    from pusupport.book.cost import MEASURED, MEASURED_ON, THROUGHPUT, measured_case, run_seconds
    bench = json.loads((ROOT / "bench" / "results-cuda.json").read_text())
    assert bench["machine"]["gpu"] == MEASURED_ON
    for (model, dataset), (one, member) in MEASURED.items():
        got = bench["models"][model]
        assert (one, member) == pytest.approx((got["loop_epoch_s"], got["stacked_epoch_s"]), rel=1e-3)
        case = measured_case(model, dataset)
        assert (case.data.n_p, case.data.n_u, case.cfg.batch_size) == (got["n_p"], got["n_u"], got["batch_size"])
        seconds, measured = run_seconds(case)
        assert measured and seconds == pytest.approx(one)          # the timed epoch, priced back
    cifar10 = price(get("real_data").runs("cifar10"))
    assert cifar10.measured == cifar10.flops and "measured" in cifar10.describe()
    news = price(get("real_data").runs("20news"))
    assert news.measured == 0 and news.seconds == pytest.approx(news.flops / THROUGHPUT)


def test_the_priced_layout_is_the_executed_one(tmp_path, monkeypatch):
    """One plan: the page resolves it once, the cost model prices its jobs and the executor
    trains the same jobs; the experiment's own plan (what the cost tables price) lays the
    runs out as the page does on the same device."""
    import pusupport.book.runs as executor
    from pusupport.book.pages import resolve_page
    from test_pages import params
    page = resolve_page("synthetic", **params("synthetic", profile="smoke", seeds=[0, 1],
                                            output_dir=str(tmp_path)))
    plan = page.resolved()
    trained, train = [], executor.train_runs
    monkeypatch.setattr(executor, "train_runs", lambda job, datas, store: (
        trained.append((job.labels, job.seeds)), train(job, datas, store))[1])
    history = executor.execute(plan).history
    priced = [(r.cfg.method, r.seeds, r.stacked) for r in plan.priced()]
    assert trained == [(job.labels, job.seeds) for job in plan.jobs]
    assert priced == [(m, 2, True) for m in ("nnpu", "aapu")]        # the §4.1 MLP stacks on a CPU
    assert set(history.method) == {"nnpu", "aapu"}
    ours = page.experiment.runs(profile="smoke", device="cpu")
    assert [(j.labels, j.seeds) for j in ours.jobs] == [(j.labels, j.seeds) for j in plan.jobs]
    assert price(ours).flops == price(plan).flops


def test_a_forked_run_is_priced_from_its_fork():
    data = Data(n_p=10, n_u=100, n_test=50, eligible=100, shape=(2,))
    cfg = TrainConfig(method="aapu", epochs=3, select_from=2, n_select=5, eval_every=0)
    # forked after epoch 2 (nnPU's): U scored for that epoch's selection, then epoch 3 as alone
    rows = 100 + 3 * 115 + 50 + 100
    assert run_flops(Run(cfg, data, first=3)) == rows * forward_flops(cfg.model, (2,))


def test_every_aapu_reading_joins_the_job_of_the_nnpu_run_it_forks_from():
    """The readings page on a CPU: each aaPU run forks from the nnPU run with its π and
    its max(0, ·) rule at its own first selection epoch, and is priced from there."""
    plan = get("readings").runs(profile="cpu", device="cpu")
    forked = {}
    for job in plan.jobs:
        for i, (p, epoch) in job.forks.items():
            assert (job.runs[p].cfg.method, job.runs[i].cfg.select_from) == ("nnpu", epoch)
            assert (job.runs[p].prior, job.runs[p].cfg.correction) == (job.runs[i].prior, job.runs[i].cfg.correction)
            forked[job.runs[i].label] = epoch
    assert set(forked) == {r.label for r in plan.runs if r.cfg.method == "aapu"} and len(forked) == 9
    assert sorted(set(forked.values())) == [100, 200, 400]
    alone = sum(r.cfg.epochs for r in plan.runs)
    assert sum(r.cfg.epochs - r.first + 1 for r in plan.priced()) == alone - sum(forked.values())
