"""The benchmark's rows about the book's layouts (:mod:`run` writes them): the allocator,
peak memory, 20 News, stacking per model, the readings grid and bf16's effect on a verdict."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time

import torch

from pusupport.core.config import TrainConfig
from pusupport.data import synthetic
from pusupport.core.runtime import cpu_bf16_instructions
from pusupport.core.batches import stratified_batches
from pusupport.core.training import train, train_seeds
from common import BF16, ROOT, bandwidth_gbs, bare_training_step, timed


_EPOCH = """
import json, resource, sys, time
sys.path.insert(0, {bench!r})
from common import cifar_subset
from pusupport.core.training import train
_, pu = cifar_subset({data!r}, {n_u})
pu.x_test, pu.y_test = pu.x_test[:0], pu.y_test[:0]
before, t = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
h = train(pu, model={{"name": "kiryo_cnn", "width": 0.25}}, method="nnpu", epochs={epochs},
          batch_size=500, progress=False).history
after = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({{"seconds": time.perf_counter() - t, "user": after.ru_utime - before.ru_utime,
                  "system": after.ru_stime - before.ru_stime, "peak_mb": after.ru_maxrss / 1024,
                  "risk": h.risk.tolist()}}))
"""


def bench_allocator(data_dir, quick):
    """CIFAR-10 epochs in a child process, glibc's default malloc against GLIBC_TUNABLES
    (the Makefile's: freed memory kept for reuse), alternated twice; the medians."""
    tunables = os.environ.get("GLIBC_TUNABLES")
    if not tunables:
        return {"skipped": "GLIBC_TUNABLES is not set: run `make bench`"}
    code = _EPOCH.format(bench=str(ROOT), data=str(data_dir), n_u=1000 if quick else 5000,
                         epochs=1 if quick else 2)
    runs = {"default": [], "tuned": []}
    for _ in range(2):
        for name in runs:
            env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
            env.update({"GLIBC_TUNABLES": tunables} if name == "tuned" else {})
            env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")      # one thread, as a page runs
            out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                 text=True, check=True).stdout
            runs[name].append(json.loads(out.strip().splitlines()[-1]))
    median = {name: {k: sorted(r[k] for r in rs)[len(rs) // 2] if k != "risk" else rs[0][k]
                     for k in rs[0]} for name, rs in runs.items()}
    return {"tunables": tunables, **median,
            "same_risks": median["default"]["risk"] == median["tuned"]["risk"],
            "allocator_speedup": median["default"]["seconds"] / median["tuned"]["seconds"]}


# ------------------------------------------------------------------ 5. memory

MEMORY_SNIPPET = """
import sys, time, warnings
warnings.filterwarnings("ignore")
from pusupport.data.datasets import load_pu
from pusupport.core.training import train
name, data_dir, epoch = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
t = time.perf_counter()
kw = {{"max_features": 20000}} if name == "20news" else {{}}
d = load_pu(name, data_dir, download=False, **kw)
load_s = time.perf_counter() - t

def peak_mb():  # VmHWM: this process's own peak (ru_maxrss would include the parent's at fork)
    line = next(l for l in open("/proc/self/status") if l.startswith("VmHWM"))
    return int(line.split()[1]) / 1024

load_mb = peak_mb()
if epoch:
    model = {models}[name]
    train(d, model=model, method="aapu", epochs=1, select_from=1,
          batch_size=500, progress=False)
print(load_s, load_mb, peak_mb())
""".format(models={"cifar10": {"name": "kiryo_cnn", "width": 0.25}, "20news": "news_mlp",
                   "fashion_mnist": {"name": "news_mlp", "activation": "relu"}})


def bench_memory(data_dir):
    out = {}
    for name in ("cifar10", "20news", "fashion_mnist"):
        runs = []
        for epoch in ("0", "0", "1"):       # first load (cache may be cold), cached load, + an epoch
            r = subprocess.run([sys.executable, "-c", MEMORY_SNIPPET, name, str(data_dir), epoch],
                               capture_output=True, text=True)
            if r.returncode != 0:
                runs = None
                out[name] = {"error": r.stderr.strip().splitlines()[-1]}
                break
            runs.append([float(v) for v in r.stdout.split()])
        if runs:
            out[name] = {"first_load_s": runs[0][0], "cached_load_s": runs[1][0],
                         "load_peak_rss_mb": runs[1][1], "epoch_peak_rss_mb": runs[2][2]}
    return out


def bench_news(data_dir, epochs=3):
    """One 20 Newsgroups nnPU epoch at the cpu settings; its sparse layer's traffic
    (each non-zero reads a weight row forward and writes a gradient row backward)."""
    from pusupport.data.datasets import load_pu
    d = load_pu("20news", data_dir, download=False, max_features=20_000)
    d.x_test, d.y_test = d.x_test[:0], d.y_test[:0]
    t = timed(lambda: train(d, model="news_mlp", method="nnpu", epochs=epochs, batch_size=5000,
                            progress=False), 2) / epochs
    nnz = len(d.x_p.val) + len(d.x_u.val)
    moved = 2 * nnz * 300 * 4
    bandwidth = bandwidth_gbs()
    return {"news_epoch_s": t, "rows": len(d.x_p) + len(d.x_u), "nnz": nnz,
            "sparse_layer_gb": moved / 1e9, "bandwidth_gbs": bandwidth,
            "news_vs_bandwidth": t / (moved / 1e9 / bandwidth)}


def bench_stacking(data_dir, quick):
    """K seeds stacked vs one by one, per model, one thread (pusupport.core.runtime.STACKED, this CPU's)."""
    from pusupport.core.runtime import STACKED, measured
    from pusupport.data.datasets import DATASETS, make_pu
    from pusupport.data.files import DatasetNotFoundError
    cases = {"mlp": (lambda s: synthetic(s, n_labeled=100, n_unlabeled=1000, n_test=10_000), 10,
                     dict(epochs=5 if quick else 30, select_from=2, eval_every=10))}
    for name, model, batch, n_select in (("fashion_mnist", {"name": "news_mlp", "activation": "relu"},
                                          2000, 750),
                                         ("cifar10", {"name": "kiryo_cnn", "width": 0.25, "dropout": 0.5},
                                          500, 300)):
        loader, positive = DATASETS[name]
        try:
            labeled = loader(data_dir=data_dir, download=False)
        except DatasetNotFoundError:
            print(f"stacking: {name} not found, skipped (set --data-dir)")
            continue
        n_u = 1000 if quick else 5000
        cases[model["name"]] = (lambda s, ld=labeled, n=name, p=positive: make_pu(
            n, ld, p, seed=s, n_labeled=1000, n_unlabeled=n_u), 6,
            dict(model=model, epochs=1 if quick else 2, batch_size=batch, n_select=n_select,
                 select_from=1, eval_every=2, lr_schedule={}))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    out = {}
    try:
        for model, (make, k, settings) in cases.items():
            datas = {s: make(s) for s in range(k)}
            cfg = TrainConfig(method="aapu", progress=False, device="cpu", **settings)
            start = time.perf_counter()
            stacked = train_seeds(datas.__getitem__, list(datas), cfg)
            t_stacked = time.perf_counter() - start
            start = time.perf_counter()
            single = [train(d, cfg, seed=s) for s, d in datas.items()]
            t_single = time.perf_counter() - start
            errors = [abs(a.history.test_error.iloc[-1] - b.history.test_error.iloc[-1])
                      for a, b in zip(stacked, single)]
            out[model] = {"seeds": k, "epochs": cfg.epochs, "stacked_s": t_stacked,
                          "one_by_one_s": t_single, "stacking_speedup": t_single / t_stacked,
                          "max_final_error_difference": max(errors),
                          "in_cpu_stacked": model in measured(STACKED, "cpu")}
    finally:
        torch.set_num_threads(threads)
    return out


def bench_readings(quick):
    """The readings grid stacked across settings vs run by run (see the module's docstring)."""
    from dataclasses import replace
    from pusupport.book.experiments.readings import EXPERIMENT, plan
    from pusupport.core.training import train_grid
    epochs = 6 if quick else 60
    _, s = EXPERIMENT.resolve("synthetic", "cpu", {"epochs": epochs})
    s = s.merge({"train": {"select_from": epochs // 3, "progress": False, "device": "cpu"}})
    specs, seeds = plan(s), list(range(3 if quick else s.page.n_seeds))
    datas = {seed: synthetic(seed) for seed in seeds}
    configs = [spec.train(s.train) for spec in specs]
    makes = [datas.__getitem__ if spec.prior is None else
             {seed: replace(d, prior=spec.prior) for seed, d in datas.items()}.__getitem__
             for spec in specs]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        start = time.perf_counter()
        grid = train_grid(makes, seeds, configs)
        t_grid = time.perf_counter() - start
        start = time.perf_counter()
        one_by_one = [train_seeds(make, seeds, cfg) for make, cfg in zip(makes, configs)]
        t_runs = time.perf_counter() - start
        members = len(configs) * len(seeds)
        n_p, n_u = len(datas[0].x_p), len(datas[0].x_u)
        n_batches = len(stratified_batches(n_p, n_u, torch.arange(0), s.train.batch_size,
                                           torch.Generator().manual_seed(0)))
        rows = math.ceil((n_p + n_u) / n_batches)
        bf16 = cpu_bf16_instructions()
        floor_step = timed(bare_training_step(members, rows, BF16 if bf16 else torch.float32), 50)
    finally:
        torch.set_num_threads(threads)
    differences = [abs(a.history.test_error.iloc[-1] - b.history.test_error.iloc[-1])
                   for runs_a, runs_b in zip(grid, one_by_one) for a, b in zip(runs_a, runs_b)]
    return {"runs": len(configs), "seeds": len(seeds), "members": members, "epochs": epochs,
            "stacked_across_settings_s": t_grid, "run_by_run_s": t_runs,
            "readings_speedup": t_runs / t_grid, "max_final_error_difference": max(differences),
            "step_ms": 1e3 * t_grid / (epochs * n_batches), "floor_step_ms": 1e3 * floor_step,
            "training_vs_floor": t_grid / (epochs * n_batches * floor_step)}


def _paired(make_data, autocast: str, threads: int, **cfg):
    """aaPU − nnPU final test error over 6 seeds, at ``autocast`` and ``threads``."""
    from pusupport.book.verdicts import paired_difference
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        errors = {m: [r.history.test_error.iloc[-1] for r in train_seeds(
            make_data, range(6), method=m, autocast=autocast, eval_every=0, progress=False,
            device="cpu", **cfg)] for m in ("nnpu", "aapu")}
    finally:
        torch.set_num_threads(before)
    return paired_difference(errors["aapu"], errors["nnpu"])


def bench_precision(data_dir, quick):
    """bf16 against float32 on the verdicts' quantity (see the module's docstring)."""
    setups = {"synthetic": (synthetic, dict(epochs=10 if quick else 200, select_from=5 if quick else 100))}
    if data_dir and (data_dir / "FashionMNIST").is_dir():
        from pusupport.data.datasets import FASHION_MNIST_POSITIVE, load_fashion_mnist, make_pu
        raw = load_fashion_mnist(data_dir, download=False)
        setups["fashion_mnist"] = (
            lambda seed: make_pu("fashion_mnist", raw, FASHION_MNIST_POSITIVE, n_labeled=1000,
                                 n_unlabeled=10_000, seed=seed),
            dict(epochs=2 if quick else 6, batch_size=2000, select_from=1 if quick else 2,
                 n_select=750, weight_decay=5e-4, lr_schedule={},
                 model={"name": "news_mlp", "activation": "relu"}))
    out = {}
    for name, (make_data, cfg) in setups.items():
        fp32, bf16 = _paired(make_data, "off", 1, **cfg), _paired(make_data, "bf16", 1, **cfg)
        threads = _paired(make_data, "off", 2, **cfg)
        shift, noise = abs(bf16.mean - fp32.mean), abs(threads.mean - fp32.mean)
        out[name] = {"fp32": fp32.mean, "bf16": bf16.mean, "bf16_shift": shift,
                     "eighth_of_interval": (fp32.high - fp32.low) / 8, "thread_shift": noise,
                     "within": shift <= max((fp32.high - fp32.low) / 8, noise)}
    return out
