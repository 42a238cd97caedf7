"""Device-conditional choices: explicit settings, their defaults, and every combination
CUDA takes, run on the CPU."""
import json
import math
from pathlib import Path

import pytest
import torch

from pusupport.core.config import TrainConfig
from pusupport.data import synthetic
from pusupport.core import runtime
from pusupport.core.runtime import STACKED, cpu_bf16_instructions, resolve
from pusupport.core.training import train, train_seeds


def test_cpu_defaults_are_explicit_and_described():
    rt = resolve(TrainConfig(device="cpu"))
    assert rt.device.type == "cpu" and rt.bf16 == (cpu_bf16_instructions() is not None)
    assert rt.channels_last and not resolve(TrainConfig(device="cpu", channels_last=False)).channels_last
    assert rt.stack_seeds and not resolve(TrainConfig(device="cpu", model="kiryo_cnn")).stack_seeds
    assert rt.generator_device.type == "cpu" and not rt.seeded_dropout and not rt.compile
    text = rt.describe()
    for word in ("autocast", "channels_last", "generators", "dropout streams", "compile", "seeds"):
        assert word in text


def test_explicit_settings_override_the_device_defaults():
    rt = resolve(TrainConfig(device="cpu", autocast="off", channels_last=True,
                             dropout_streams="seeded", compile=True))
    assert (rt.bf16, rt.channels_last, rt.seeded_dropout, rt.compile) == (False, True, True, True)
    assert "off (float32)" in rt.describe() and resolve(TrainConfig(device="cpu", autocast="bf16")).bf16


@pytest.mark.parametrize("key, value", [("autocast", "fp16"), ("generators", "gpu"),
                                        ("dropout_streams", "random"), ("channels_last", "yes")])
def test_bad_device_settings_name_the_valid_values(key, value):
    with pytest.raises(ValueError, match=key):
        TrainConfig(**{key: value})


def _finite(results):
    for r in results:
        assert all(math.isfinite(v) for v in r.history[["risk", "test_error"]].iloc[-1])


def test_what_cuda_takes_for_stacked_cnns_runs_on_the_cpu():
    """bf16 autocast + channels_last + grouped convolutions + per-member seeded dropout
    streams + index generators on the training device: CUDA's defaults, here on the CPU."""
    from pusupport.data import PUData
    gen = torch.Generator().manual_seed(0)

    def images(seed):
        x = torch.rand(120, 3, 16, 16, generator=gen)
        y = torch.where(x[:, 0].mean((1, 2)) > 0.5, 1, -1)
        return PUData("img", x[:20], x[20:100], y[20:100], torch.zeros(80, dtype=torch.bool),
                      x[100:], y[100:], 0.5)
    cfg = dict(method="aapu", model={"name": "kiryo_cnn", "width": 0.0625, "dropout": 0.5},
               epochs=2, select_from=1, n_select=5, batch_size=40, progress=False, device="cpu",
               autocast="bf16", channels_last=True, dropout_streams="seeded", generators="device")
    _finite(train_seeds(images, [0, 1], **cfg))
    _finite([train(images(0), **cfg)])                       # one model, channels_last too


def test_seeded_dropout_streams_differ_from_the_global_stream_but_are_reproducible():
    cfg = dict(method="nnpu", model={"name": "news_mlp", "dropout": 0.5, "activation": "relu"},
               epochs=2, batch_size=64, progress=False, device="cpu", autocast="off")
    data = lambda seed: synthetic(seed, n_labeled=40, n_unlabeled=200, n_test=100)  # noqa: E731
    seeded = [r.history.risk.tolist() for r in train_seeds(data, [0, 1], dropout_streams="seeded", **cfg)]
    again = [r.history.risk.tolist() for r in train_seeds(data, [0, 1], dropout_streams="seeded", **cfg)]
    exact = [r.history.risk.tolist() for r in train_seeds(data, [0, 1], **cfg)]
    assert seeded == again and seeded != exact


def test_compile_with_bf16_autocast_runs():
    data = synthetic(0, n_labeled=40, n_unlabeled=200, n_test=100)
    _finite([train(data, method="aapu", epochs=2, select_from=1, n_select=3, batch_size=64,
                   progress=False, device="cpu", autocast="bf16", compile=True)])


def test_the_gpu_layout_tables_are_the_gpu_benchmarks_answers():
    """``make bench DEVICE=cuda`` measured, on each GPU it ran on (H200, H100), each model's
    seeds stacked against one run and two runs sharing the GPU: the runtime stacks there
    exactly the models it found faster stacked, and shares the GPU between two runs exactly
    of the models whose two runs gave more than 1.2× one run's throughput."""
    benches = sorted((Path(__file__).parents[1] / "bench").glob("results-cuda*.json"))
    gpus = {json.loads(b.read_text())["machine"]["gpu"] for b in benches}
    assert gpus == {name for kind, name in STACKED if kind == "cuda"}
    for found in benches:
        bench = json.loads(found.read_text())
        here = "cuda", bench["machine"]["gpu"]
        assert not bench["machine"]["quick"] and bench["machine"]["commit"]
        assert set(bench["models"]) >= {"kiryo_cnn", "coteaching_cnn", "mlp"}
        faster = {model for model, r in bench["models"].items() if r["stacking_speedup"] > 1}
        assert set(STACKED[here]) == faster and runtime.SETTINGS_STACKED[here] == ()
        shared = {model for model, r in bench["models"].items() if r["shared_throughput"] > 1.2}
        assert runtime.SHARED[here] == {model: 2 for model in shared}


def test_a_machine_not_measured_borrows_its_device_type_s_layouts_and_says_so(monkeypatch):
    """A CPU without native bf16 (or another GPU) gets the measured machine's layouts, with a
    warning naming what it borrows; the measured machine, and a GPU priced from a CPU, say nothing."""
    import warnings
    monkeypatch.setattr(runtime, "cpu_bf16_instructions", lambda: "avx512_bf16")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert runtime.measured(STACKED, "cpu") == ("mlp",)
        assert runtime.measured(STACKED, "cuda") == ("mlp",)
    monkeypatch.setattr(runtime, "cpu_bf16_instructions", lambda: None)
    monkeypatch.setattr(runtime, "_BORROWED", set())
    with pytest.warns(UserWarning, match=r"^layouts: nothing measured on this cpu \(no native bf16\); "
                      r"borrowing the avx512_bf16 cpu's measurements \(`make bench` measures this one\)$"):
        assert runtime.measured(STACKED, "cpu") == STACKED[runtime.CPU_MEASURED]
    with warnings.catch_warnings():                  # said once a process, not at every table
        warnings.simplefilter("error")
        assert runtime.measured(runtime.SETTINGS_STACKED, "cpu") == ()
    assert runtime.measured(runtime.SHARED, "cpu", {}) == {}
