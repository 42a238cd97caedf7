"""GPU benchmark (`make bench DEVICE=cuda`, ≤ 5 minutes on one GPU): how the runtime should
lay a page's runs out on this device.

    python bench/gpu.py [--device cuda] [--quick] [--out bench/results-cuda.json]

Per model at its data set's `paper` settings (batch size, width, dropout, optimiser; random
inputs of the data set's shape and sizes — speed does not depend on the pixels):
  bare_epoch_s         a bare PyTorch loop over the same batches: forward, a logistic loss,
                       backward, Adam — bf16 autocast and channels_last as the runtime sets
                       them (the floor)
  loop_epoch_s         this package's loop (`train`), aaPU selecting every epoch, with the
                       test evaluation the `paper` profile does every epoch
  stacked_epoch_s      K seeds as one stacked network (`train_seeds`), per member
  shared_epoch_s       N runs of the loop in N processes at once on the one device, each;
                       shared_throughput = N × loop / shared (> 1: sharing pays)
  *_peak_memory_gib    the loop's and the stack's peak GPU memory
The runtime's ``STACKED`` entry for this GPU must list exactly the models whose stacked member is
faster than one run (tests/test_runtime.py reads this file). Epoch times are medians over
the timed epochs after one warm-up epoch (cuDNN's autotuning).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import torch

from pusupport.book.registry import get
from pusupport.core.models import build_model
from pusupport.core.problem import PUData
from pusupport.core.runtime import resolve
from pusupport.core.training import train, train_seeds
from pusupport.data.sizes import SIZES

ROOT = Path(__file__).resolve().parent
#: (data set, page experiment) per model benchmarked.
MODELS = {"kiryo_cnn": ("cifar10", "real_data"), "coteaching_cnn": ("cifar100", "real_data"),
          "mlp": ("synthetic", "synthetic")}


def paper_case(model: str, quick: bool):
    """(TrainConfig at `paper` for aaPU selecting from epoch 1, n_p, n_u, n_test, row shape)."""
    dataset, experiment = MODELS[model]
    _, s = get(experiment).resolve(dataset, "paper")
    sizes = SIZES[dataset]
    n_p, n_u = s.data.n_labeled, s.data.n_unlabeled or sizes.n_train
    n_test = s.data.n_test or sizes.n_test
    cfg = replace(s.train, method="aapu", select_from=1, progress=False, checkpoint_dir=None)
    if quick:      # checks that it runs: tiny sizes and width
        n_p, n_u, n_test = 64, 256, 128
        cfg = replace(cfg, batch_size=64, model=replace(cfg.model, width=min(cfg.model.width, 0.125)))
    return cfg, n_p, n_u, n_test, sizes.shape


def random_data(n_p, n_u, n_test, shape, seed=0) -> PUData:
    g = torch.Generator().manual_seed(seed)
    sign = lambda n: torch.randint(0, 2, (n,), generator=g) * 2 - 1
    return PUData("bench", torch.randn(n_p, *shape, generator=g), torch.randn(n_u, *shape, generator=g),
                  sign(n_u), torch.zeros(n_u, dtype=torch.bool), torch.randn(n_test, *shape, generator=g),
                  sign(n_test), 0.4)


def _median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def bare_epoch_s(cfg, data: PUData, epochs: int) -> float:
    runtime = resolve(cfg)
    dev = runtime.device
    model = build_model(cfg.model, data.x_u.shape).to(dev)
    x = torch.cat([data.x_p, data.x_u]).to(dev)
    if runtime.channels_last and x.dim() == 4:
        model, x = model.to(memory_format=torch.channels_last), x.contiguous(memory_format=torch.channels_last)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    times = []
    for _ in range(epochs + 1):
        _sync(dev)
        start = time.perf_counter()
        for i in range(0, len(x), cfg.batch_size):
            with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=runtime.bf16):
                loss = torch.nn.functional.softplus(-model(x[i:i + cfg.batch_size]).float()).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        _sync(dev)
        times.append(time.perf_counter() - start)
    return _median(times[1:])


def _epoch_times(history) -> list[float]:
    wall = list(history.wall_time)
    return [b - a for a, b in zip(wall, wall[1:])]


def loop_epoch_s(cfg, data: PUData, epochs: int) -> float:
    return _median(_epoch_times(train(data, replace(cfg, epochs=epochs + 1)).history))


def stacked_epoch_s(cfg, data: PUData, epochs: int, k: int) -> float:
    results = train_seeds(lambda seed: data, list(range(k)), replace(cfg, epochs=epochs + 1))
    return _median(_epoch_times(results[0].history)) / k


def shared_epoch_s(model: str, args, n: int) -> float:
    """Each of ``n`` processes' median epoch of the loop, run at the same time."""
    cmd = [sys.executable, __file__, "--one", model, "--device", args.device, "--epochs", str(args.epochs)]
    procs = [subprocess.Popen([*cmd, *(["--quick"] if args.quick else [])], stdout=subprocess.PIPE, text=True)
             for _ in range(n)]
    return _median([float(p.communicate()[0].strip().splitlines()[-1]) for p in procs])


def _with_peak(gpu: bool, fn, *args):
    """(fn(*args), the GPU memory it peaked at in GiB; None on the CPU)."""
    if not gpu:
        return fn(*args), None
    torch.cuda.reset_peak_memory_stats()
    return fn(*args), torch.cuda.max_memory_allocated() / 2 ** 30


def bench_model(model: str, args) -> dict:
    cfg, n_p, n_u, n_test, shape = paper_case(model, args.quick)
    cfg = replace(cfg, device=args.device)
    data = random_data(n_p, n_u, n_test, shape)
    epochs = args.epochs * (10 if model == "mlp" else 1)       # the MLP's epochs take milliseconds
    gpu = torch.cuda.is_available() and args.device != "cpu"
    loop, loop_peak = _with_peak(gpu, loop_epoch_s, cfg, data, epochs)
    stacked, stacked_peak = _with_peak(gpu, stacked_epoch_s, cfg, data, epochs, args.k)
    out = {"n_p": n_p, "n_u": n_u, "n_test": n_test, "batch_size": cfg.batch_size,
           "width": cfg.model.width, "precision": resolve(cfg).precision(), "timed_epochs": epochs,
           "bare_epoch_s": bare_epoch_s(cfg, data, epochs), "loop_epoch_s": loop,
           "stacked_k": args.k, "stacked_epoch_s": stacked,
           "shared_n": args.n, "shared_epoch_s": shared_epoch_s(model, args, args.n)}
    out["loop_vs_bare"] = out["loop_epoch_s"] / out["bare_epoch_s"]
    out["stacking_speedup"] = loop / out["stacked_epoch_s"]
    out["shared_throughput"] = args.n * loop / out["shared_epoch_s"]
    if gpu:
        out.update(loop_peak_memory_gib=loop_peak, stacked_peak_memory_gib=stacked_peak)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--quick", action="store_true", help="tiny sizes (checks that it runs)")
    ap.add_argument("--epochs", type=int, default=2, help="timed epochs (after one warm-up)")
    ap.add_argument("--k", type=int, default=4, help="seeds stacked")
    ap.add_argument("--n", type=int, default=2, help="processes sharing the device")
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    ap.add_argument("--out", type=Path, default=ROOT / "results-cuda.json")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:                   # one process of the sharing measurement: print its epoch time
        cfg, n_p, n_u, n_test, shape = paper_case(args.one, args.quick)
        epochs = args.epochs * (10 if args.one == "mlp" else 1)
        print(loop_epoch_s(replace(cfg, device=args.device), random_data(n_p, n_u, n_test, shape), epochs))
        return 0
    start = time.perf_counter()
    gpu = torch.cuda.get_device_name() if torch.cuda.is_available() and args.device != "cpu" else None
    results = {"machine": {"gpu": gpu, "cpus": os.cpu_count(), "torch": torch.__version__,
                           "date": time.strftime("%Y-%m-%d %H:%M %Z"), "quick": args.quick},
               "models": {}}
    for model in args.models:
        print(f"{model} ...", flush=True)
        results["models"][model] = bench_model(model, args)
        print(json.dumps(results["models"][model], indent=1), flush=True)
    results["machine"]["wall_seconds"] = round(time.perf_counter() - start, 1)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
