"""Speed and memory benchmark (`make bench`): each figure measured side by side in one run.

    python bench/run.py [--data-dir DIR] [--quick]

Writes bench/results.json (``--quick``: bench/results-quick.json, leaving the measured record
alone) and prints every figure. Not a test: timings depend on the
machine; the closing notes quote a run on the development machine (2 cores, no GPU).

Top-level keys (the performance issue's targets in brackets):
  peak_gflops_fp32 / _bf16     this machine's 2048² matmul
  synthetic_bf16_speedup       the whole stacked synthetic workload (10 seeds × {nnPU,
                               aaPU}, every member evaluated each epoch), fp32 / bf16 [≥ 2]
  training_vs_floor            its training steps over bare batched matmuls of the same
                               shapes, forward + backward [≤ 2]
  evaluation_vs_floor          its test evaluation over bare batched matmuls [≤ 1.3]
  synthetic_fraction_of_peak   its FLOPs per second over the bf16 peak
  cnn_vs_floor                 one CIFAR-10 epoch (Kiryo CNN at the cpu width) over bare
                               forward + backward of the same batches [≤ 1.3]
  cnn_fraction_of_peak         that epoch's FLOPs per second over the bf16 peak
  pu_overhead                  that epoch over a bare loop with Adam [≤ 1.15]
  selection_overhead           aaPU's selection pass over bare inference on U [≤ 1.10]
  news_epoch_s                 one 20 Newsgroups epoch at the cpu settings, with the bytes
                               its sparse layer moves against this machine's bandwidth
  stacking                     per model, K seeds of aaPU at the cpu settings trained as
                               one stacked network and one by one (channels_last), at one
                               thread as a book's Ray task runs them: the seconds, the
                               speed-up of stacking (< 1: one by one is faster), equal
                               final errors; the runtime's STACKED entry for this CPU
                               must list exactly the models with a speed-up above 1
  readings                     the readings page's grid (every run it plans × 10 seeds, the
                               synthetic task, fewer epochs) at one thread: trained as one
                               network stacked across settings (train_grid) against run
                               by run, each run's seeds stacked (the book before) [≥ 4×],
                               equal final errors; and the settings-stacked step against
                               bare batched matmuls of its shapes [training_vs_floor ≤ 2.5]
  allocator                    one CIFAR-10 epoch (cpu width) in a child process under
                               glibc's default malloc and under the Makefile's
                               GLIBC_TUNABLES, alternated: wall, user and system seconds,
                               peak memory, equal risks; allocator_speedup [> 1]
  precision                    how far bf16 autocast moves what the verdicts test, the
                               paired aaPU − nnPU final test error over 6 seeds at one
                               thread (synthetic; Fashion-MNIST's setup), against an
                               eighth of its float32 interval's width and against what
                               float32 moves when the thread count goes 1 → 2
                               (machine-dependent: bf16 kernels differ between CPUs)
"""
from __future__ import annotations

import argparse
import json
import math
import os
from pathlib import Path

import torch
from torch.utils.data import DataLoader, Dataset

from pusupport.core.config import ModelConfig, TrainConfig
from pusupport.book.cost import forward_flops
from pusupport.data import synthetic
from pusupport.core.members import StackedModels
from pusupport.core.models import build_model
from pusupport.core.risks import nnpu_risk
from pusupport.core.runtime import cpu_bf16_instructions, resolve
from pusupport.core.selection import top_losses, unlabeled_losses
from pusupport.core.batches import stratified_batches
from pusupport.core.training import test_metrics, train, train_seeds

ROOT = Path(__file__).resolve().parent
BF16 = torch.bfloat16

from book_rows import (bench_allocator, bench_memory, bench_news, bench_precision, bench_readings,
                       bench_stacking)
from common import BF16, ROOT, bare_evaluation, bare_training_step, cifar_subset, timed


# ------------------------------------------------------------------ 1. machine

def matmul_peak(dtype, n=2048, repeat=10) -> float:
    """GFLOP/s of an n×n matmul in ``dtype`` (best of ``repeat``)."""
    a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
    a @ b
    return 2 * n ** 3 / timed(lambda: a @ b, repeat) / 1e9


# ------------------------------------------------------------------ 2. synthetic, stacked


def bench_synthetic(epochs, n_seeds, peak_bf16):
    """The stacked synthetic workload in fp32 and bf16, and its parts against their floors."""
    seeds, select_from = list(range(n_seeds)), max(1, epochs // 5)
    paper = TrainConfig()                                   # §4.1's settings
    bf16 = "bf16" if cpu_bf16_instructions() else "off"

    def workload(autocast):
        return sum(timed(lambda m=m: train_seeds(synthetic, seeds, method=m, epochs=epochs,
                                                 select_from=select_from, autocast=autocast,
                                                 progress=False)) for m in ("nnpu", "aapu"))
    t_fp32, t_bf16 = workload("off"), workload(bf16)

    def no_test(seed):
        d = synthetic(seed)
        d.x_test, d.y_test = d.x_test[:0], d.y_test[:0]
        return d
    t_train = timed(lambda: train_seeds(no_test, seeds, method="nnpu", epochs=epochs,
                                        autocast=bf16, progress=False), 2)
    data = [synthetic(s) for s in seeds]
    n_p, n_u, n_test = len(data[0].x_p), len(data[0].x_u), len(data[0].x_test)
    n_batches = len(stratified_batches(n_p, n_u, torch.arange(0), paper.batch_size,
                                       torch.Generator().manual_seed(0)))
    rows = math.ceil((n_p + n_u) / n_batches)
    steps = epochs * n_batches
    floor_step = timed(bare_training_step(n_seeds, rows, BF16 if bf16 == "bf16" else torch.float32), 200)
    cfg = TrainConfig(method="nnpu", autocast=bf16, device="cpu")
    members = StackedModels(data, seeds, cfg, resolve(cfg))
    y_test = torch.stack([d.y_test for d in data])
    t_eval = timed(lambda: test_metrics(members.scores("x_test", cfg.eval_batch_size, bf16 == "bf16"),
                                        y_test), 5)
    floor_eval = timed(bare_evaluation(n_seeds, n_test, cfg.eval_batch_size,
                                       BF16 if bf16 == "bf16" else torch.float32), 5)
    fwd = forward_flops(ModelConfig("mlp"), (2,))
    flops = 2 * n_seeds * fwd * epochs * (3 * (n_p + n_u) + n_test)   # 2 methods; S and selection left out
    return {"epochs": epochs, "seeds": n_seeds, "precision": bf16, "workload_fp32_s": t_fp32,
            "workload_bf16_s": t_bf16, "training_s": t_train, "training_step_ms": 1e3 * t_train / steps,
            "training_floor_step_ms": 1e3 * floor_step, "evaluation_ms": 1e3 * t_eval,
            "evaluation_floor_ms": 1e3 * floor_eval, "rows_per_step": rows,
            "workload_gflops": flops / 1e9, "achieved_gflop_per_s": flops / t_bf16 / 1e9,
            "synthetic_bf16_speedup": t_fp32 / t_bf16,
            "training_vs_floor": t_train / (steps * floor_step),
            "evaluation_vs_floor": t_eval / floor_eval,
            "synthetic_fraction_of_peak": flops / t_bf16 / 1e9 / peak_bf16}


# ------------------------------------------------------------------ 2–4. CIFAR-10

class PILDataset(Dataset):
    """What torchvision's CIFAR10 + ToTensor() do per sample: uint8 → PIL → float tensor."""

    def __init__(self, images_uint8, labels):
        from torchvision import transforms
        self.images, self.labels = images_uint8.permute(0, 2, 3, 1).numpy(), labels
        self.to_tensor = transforms.ToTensor()

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        from PIL import Image
        return self.to_tensor(Image.fromarray(self.images[i])), self.labels[i]



def bench_cifar(data_dir, n_u, width, batch_size):
    """One nnPU epoch of the Kiryo CNN at the cpu width through the loop, against a
    public-code DataLoader loop, a bare loop with Adam and bare forward + backward."""
    raw, pu = cifar_subset(data_dir, n_u)
    pu.x_test, pu.y_test = pu.x_test[:0], pu.y_test[:0]           # time training only
    bf16 = resolve(TrainConfig(device="cpu")).bf16
    common = dict(model={"name": "kiryo_cnn", "width": width}, method="nnpu", epochs=1,
                  batch_size=batch_size, progress=False)
    t_ours = timed(lambda: train(pu, **common), repeat=2)

    # the DataLoader + per-sample transform loop of public PU code (labels: +1 P, -1 U)
    idx_p = torch.randperm(len(raw.y_train), generator=torch.Generator().manual_seed(0))[:1000]
    idx_u = torch.randperm(len(raw.y_train), generator=torch.Generator().manual_seed(1))[:n_u]
    images = torch.cat([raw.x_train[idx_p], raw.x_train[idx_u]])
    labels = torch.cat([torch.ones(1000), -torch.ones(n_u)])

    def dataloader_epoch():
        torch.manual_seed(0)
        model = build_model("kiryo_cnn", width=width)
        opt = torch.optim.Adam(model.parameters(), lr=1e-4)
        for xb, yb in DataLoader(PILDataset(images, labels), batch_size=batch_size, shuffle=True):
            with torch.autocast("cpu", dtype=BF16, enabled=bf16):
                g = model(xb).float()
            if (yb > 0).sum() == 0:
                continue
            risk = nnpu_risk(g[yb > 0], g[yb < 0], pu.prior)
            opt.zero_grad()
            risk.objective.backward()
            opt.step()
    t_loader = timed(dataloader_epoch, repeat=2)

    # the floor: forward/backward/step on preloaded batches of the same sizes
    x_all = torch.cat([pu.x_p, pu.x_u])
    n_batches = -(-len(x_all) // batch_size)
    batches = list(torch.randperm(len(x_all)).tensor_split(n_batches))

    inputs = [x_all[b] for b in batches]                          # gathered beforehand

    def bare_epoch(step=True):
        torch.manual_seed(0)
        model = build_model("kiryo_cnn", width=width)
        opt = torch.optim.Adam(model.parameters(), lr=1e-4, fused=True)
        for x in inputs:
            with torch.autocast("cpu", dtype=BF16, enabled=bf16):
                g = model(x).float()
            g.sum().backward()
            if step:
                opt.step()
                opt.zero_grad()
    t_bare = timed(bare_epoch, repeat=2)
    t_floor = timed(lambda: bare_epoch(step=False), repeat=2)
    flops = 3 * forward_flops(ModelConfig("kiryo_cnn", width=width), (3, 32, 32)) * len(x_all)
    peak = matmul_peak(BF16 if bf16 else torch.float32)

    # selection pass vs a bare inference forward over U
    model = build_model("kiryo_cnn", width=width)
    eligible = ~pu.u_in_p

    def selection():
        top_losses(unlabeled_losses(model, pu.x_u, amp=bf16), 150, eligible)

    def bare_inference():
        model.eval()
        with torch.inference_mode(), torch.autocast("cpu", dtype=BF16, enabled=bf16):
            for i in range(0, len(pu.x_u), 4096):
                model(pu.x_u[i:i + 4096])
    t_sel, t_inf = timed(selection, repeat=3), timed(bare_inference, repeat=3)
    return {"n_p": 1000, "n_u": n_u, "width": width, "batch_size": batch_size, "bf16": bf16,
            "ours_epoch_s": t_ours, "dataloader_epoch_s": t_loader, "bare_epoch_s": t_bare,
            "bare_forward_backward_s": t_floor, "cnn_vs_floor": t_ours / t_floor,
            "achieved_gflop_per_s": flops / t_ours / 1e9, "cnn_fraction_of_peak": flops / t_ours / 1e9 / peak,
            "vs_dataloader_speedup": t_loader / t_ours, "pu_overhead": t_ours / t_bare,
            "vs_dataloader_bound": t_loader / t_bare,       # what even the bare floor would reach
            "selection_s": t_sel, "bare_inference_s": t_inf, "selection_overhead": t_sel / t_inf,
            "selection_share_of_aapu_epoch": t_sel / (t_ours + t_sel)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data-dir", default=os.environ.get("PUSUPPORT_DATA"))
    ap.add_argument("--quick", action="store_true", help="tiny sizes (checks that it runs)")
    args = ap.parse_args(argv)
    quick, data = args.quick, Path(args.data_dir) if args.data_dir else None
    results = {"machine": {"cpus": os.cpu_count(), "torch": torch.__version__,
                           "threads": torch.get_num_threads(), "cuda": torch.cuda.is_available(),
                           "bf16_instructions": cpu_bf16_instructions()}}

    def record(key, fn, *a, top=(), **kw):
        print(f"{key} ...", flush=True)
        results[key] = fn(*a, **kw)
        print(json.dumps(results[key], indent=1), flush=True)
        results.update({k: results[key][k] for k in top if k in results[key]})   # a skipped row has none

    if data and (data / "cifar10-jpeg").is_dir():
        record("memory", bench_memory, data)
    results["peak_gflops_fp32"] = matmul_peak(torch.float32)
    results["peak_gflops_bf16"] = matmul_peak(BF16) if cpu_bf16_instructions() else None
    print({k: results[k] for k in ("peak_gflops_fp32", "peak_gflops_bf16")}, flush=True)
    record("synthetic", bench_synthetic, 5 if quick else 100, 3 if quick else 10,
           results["peak_gflops_bf16"] or results["peak_gflops_fp32"],
           top=("synthetic_bf16_speedup", "training_vs_floor", "evaluation_vs_floor",
                "synthetic_fraction_of_peak"))
    if data and (data / "cifar10-jpeg").is_dir():
        record("cifar10", bench_cifar, data, n_u=1000 if quick else 5000, width=0.25, batch_size=500,
               top=("cnn_vs_floor", "cnn_fraction_of_peak", "pu_overhead", "selection_overhead"))
        record("allocator", bench_allocator, data, quick, top=("allocator_speedup",))
    else:
        print("CIFAR-10 not found: set --data-dir or PUSUPPORT_DATA (make bench does)")
    if data and (data / "20news-bydate-train").is_dir():
        record("20news", bench_news, data, epochs=1 if quick else 3, top=("news_epoch_s",))
    record("stacking", bench_stacking, data, quick)
    record("readings", bench_readings, quick, top=("readings_speedup",))
    results["training_vs_floor_stacked_settings"] = results["readings"]["training_vs_floor"]
    if cpu_bf16_instructions():
        record("precision", bench_precision, data, quick)
    out = ROOT / ("results-quick.json" if quick else "results.json")
    out.write_text(json.dumps(results, indent=2))
    print(f"written {out}")


if __name__ == "__main__":
    main()
