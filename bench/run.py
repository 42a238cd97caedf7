"""Speed and memory benchmark (`make bench`): each figure measured side by side in one run.

    python bench/run.py [--data-dir DIR] [--quick]

Writes bench/results.json and prints every figure. Not a test: timings depend on the
machine; the closing notes quote a run on the development machine (2 cores, no GPU).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import torch
from torch.utils.data import DataLoader, Dataset, TensorDataset

from pusupport.data import synthetic
from pusupport.losses import logistic_loss
from pusupport.models import build_model
from pusupport.risks import nnpu_risk
from pusupport.selection import top_losses, unlabeled_losses
from pusupport.stacking import StackedNet
from pusupport.training import train, train_seeds

ROOT = Path(__file__).resolve().parent


def timed(fn, repeat=1):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


# ------------------------------------------------------------------ 1. seeds

def plain_pu_loop(seed, method, epochs, select_from, n_select=1, batch_size=128):
    """A per-seed loop written the way public PU code is: DataLoaders over P∪U (+S)."""
    torch.manual_seed(seed)
    d = synthetic(seed)
    model = build_model("mlp")
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, weight_decay=0.05)
    selected = torch.zeros(len(d.x_u), dtype=torch.bool)
    test = DataLoader(TensorDataset(d.x_test, d.y_test), batch_size=1000)
    for epoch in range(1, epochs + 1):
        x = torch.cat([d.x_p, d.x_u[selected], d.x_u])
        role = torch.cat([torch.zeros(len(d.x_p)), torch.ones(int(selected.sum())), 2 * torch.ones(len(d.x_u))])
        model.train()
        for xb, rb in DataLoader(TensorDataset(x, role), batch_size=batch_size, shuffle=True):
            g = model(xb)
            g_p, g_s, g_u = g[rb == 0], g[rb == 1], g[rb == 2]
            if len(g_p) == 0 or len(g_u) == 0:
                continue
            positive = d.prior * (logistic_loss(g_p).sum() + logistic_loss(g_s).sum()) / len(g_p)
            negative = logistic_loss(-g_u).mean() - d.prior * logistic_loss(-g_p).mean()
            loss = -negative if negative < 0 else positive + negative
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            errors = [((model(xb) > 0) != (yb > 0)).float().sum() for xb, yb in test]
            _ = float(sum(errors)) / len(d.x_test)
            if method == "aapu" and epoch >= select_from:
                losses = torch.cat([logistic_loss(-model(xb)) for (xb,) in
                                    DataLoader(TensorDataset(d.x_u), batch_size=1000)])
                selected[losses.topk(n_select).indices] = True


def bench_seeds(epochs, n_seeds=10):
    seeds, select_from = list(range(n_seeds)), max(1, epochs // 5)
    cfg = dict(epochs=epochs, select_from=select_from, progress=False)
    t_vec = sum(timed(lambda m=m: train_seeds(synthetic, seeds, method=m, **cfg)) for m in ("nnpu", "aapu"))
    train_seeds(synthetic, seeds, method="nnpu", compile=True, **{**cfg, "epochs": 2})  # warm-up
    t_comp = sum(timed(lambda m=m: train_seeds(synthetic, seeds, method=m, compile=True, **cfg))
                 for m in ("nnpu", "aapu"))
    t_seq = sum(timed(lambda m=m: [train(synthetic(s), method=m, seed=s, **cfg) for s in seeds])
                for m in ("nnpu", "aapu"))
    t_plain = sum(timed(lambda m=m: [plain_pu_loop(s, m, epochs, select_from) for s in seeds])
                  for m in ("nnpu", "aapu"))
    # the hot spot: evaluating every member on the test set after every epoch
    members = train_seeds(synthetic, seeds, method="nnpu", **{**cfg, "epochs": 1})
    stacked = StackedNet([r.model for r in members], "cpu", [])
    x_test = synthetic(0).x_test.expand(n_seeds, -1, -1)
    t_eval = timed(lambda: stacked.scores(x_test, members[0].config.eval_batch_size, False), repeat=5)
    eval_floor = 2 * epochs * t_eval
    return {"epochs": epochs, "seeds": n_seeds, "vectorized_s": t_vec, "vectorized_compiled_s": t_comp,
            "sequential_ours_s": t_seq, "plain_loop_s": t_plain, "seeds_speedup": t_plain / t_vec,
            "seeds_speedup_compiled": t_plain / t_comp, "vectorized_vs_our_sequential": t_seq / t_vec,
            "test_evaluation_s": eval_floor, "test_evaluation_share": eval_floor / t_vec,
            "speedup_bound_if_training_were_free": t_plain / eval_floor}


def bench_compile(epochs=60):
    """One seed through train(), eager vs torch.compile (compilation paid once, before)."""
    d, cfg = synthetic(0), dict(method="nnpu", epochs=epochs, progress=False)
    start = time.perf_counter()
    train(d, compile=True, **{**cfg, "epochs": 2})
    t_compile = time.perf_counter() - start
    d.x_test, d.y_test = d.x_test[:0], d.y_test[:0]           # training steps only
    t_eager = timed(lambda: train(d, **cfg), repeat=2)
    t_comp = timed(lambda: train(d, compile=True, **cfg), repeat=2)
    return {"epochs": epochs, "eager_s": t_eager, "compiled_s": t_comp,
            "first_compile_s": t_compile, "compile_speedup": t_eager / t_comp}


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


def cifar_subset(data_dir, n_u):
    from pusupport.datasets import CIFAR10_POSITIVE, load_cifar10, make_pu
    raw = load_cifar10(data_dir, download=False)
    pu = make_pu("cifar10", raw, CIFAR10_POSITIVE, n_labeled=1000, n_unlabeled=n_u, seed=0)
    return raw, pu


def bench_cnn_seeds(data_dir, n_u, width, batch_size, n_seeds):
    """One aaPU epoch of the Kiryo CNN for ``n_seeds`` seeds: stacked (grouped convolutions) vs one by one."""
    from pusupport.datasets import CIFAR10_POSITIVE, load_cifar10, make_pu
    raw = load_cifar10(data_dir, download=False)

    def make_data(seed):
        pu = make_pu("cifar10", raw, CIFAR10_POSITIVE, n_labeled=1000, n_unlabeled=n_u, seed=seed)
        pu.x_test, pu.y_test = pu.x_test[:0], pu.y_test[:0]     # training and selection only
        return pu
    cfg = dict(model={"name": "kiryo_cnn", "width": width, "dropout": 0.5}, method="aapu",
               epochs=2, select_from=1, n_select=150, batch_size=batch_size, amp=True, progress=False)
    seeds = list(range(n_seeds))
    t_stacked = timed(lambda: train_seeds(make_data, seeds, **cfg))
    t_one_by_one = timed(lambda: [train(make_data(s), seed=s, **cfg) for s in seeds])
    return {"seeds": n_seeds, "epochs": 2, "n_u": n_u, "width": width, "stacked_s": t_stacked,
            "one_by_one_s": t_one_by_one, "cnn_seeds_speedup": t_one_by_one / t_stacked}


def bench_cifar(data_dir, n_u, width, batch_size):
    raw, pu = cifar_subset(data_dir, n_u)
    pu.x_test, pu.y_test = pu.x_test[:0], pu.y_test[:0]           # time training only
    common = dict(model={"name": "kiryo_cnn", "width": width}, method="nnpu", epochs=1,
                  batch_size=batch_size, amp=True, progress=False)
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
            with torch.autocast("cpu", dtype=torch.bfloat16):
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

    def bare_epoch():
        torch.manual_seed(0)
        model = build_model("kiryo_cnn", width=width)
        opt = torch.optim.Adam(model.parameters(), lr=1e-4)
        for b in batches:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                g = model(x_all[b]).float()
            loss = logistic_loss(g).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    t_bare = timed(bare_epoch, repeat=2)

    # selection pass vs a bare inference forward over U
    model = build_model("kiryo_cnn", width=width)
    eligible = ~pu.u_in_p

    def selection():
        top_losses(unlabeled_losses(model, pu.x_u, amp=True), 150, eligible)

    def bare_inference():
        model.eval()
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16):
            for i in range(0, len(pu.x_u), 4096):
                model(pu.x_u[i:i + 4096])
    t_sel, t_inf = timed(selection, repeat=3), timed(bare_inference, repeat=3)
    return {"n_p": 1000, "n_u": n_u, "width": width, "batch_size": batch_size, "bf16": True,
            "ours_epoch_s": t_ours, "dataloader_epoch_s": t_loader, "bare_epoch_s": t_bare,
            "vs_dataloader_speedup": t_loader / t_ours, "pu_overhead": t_ours / t_bare,
            "vs_dataloader_bound": t_loader / t_bare,       # what even the bare floor would reach
            "selection_s": t_sel, "bare_inference_s": t_inf, "selection_overhead": t_sel / t_inf,
            "selection_share_of_aapu_epoch": t_sel / (t_ours + t_sel)}


# ------------------------------------------------------------------ 5. memory

MEMORY_SNIPPET = """
import sys, time, warnings
warnings.filterwarnings("ignore")
from pusupport.datasets import load_pu
from pusupport.training import train
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
          batch_size=500, amp=name != "20news", progress=False)
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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data-dir", default=os.environ.get("PUSUPPORT_DATA"))
    ap.add_argument("--quick", action="store_true", help="tiny sizes (checks that it runs)")
    args = ap.parse_args(argv)
    quick = args.quick
    results = {"machine": {"cpus": os.cpu_count(), "torch": torch.__version__,
                           "threads": torch.get_num_threads(), "cuda": torch.cuda.is_available()}}
    have_cifar = args.data_dir and (Path(args.data_dir) / "cifar10-jpeg").is_dir()
    if have_cifar:
        print("5. memory (first, in fresh processes) ...", flush=True)
        results["memory"] = bench_memory(args.data_dir)
        print(json.dumps(results["memory"], indent=1), flush=True)
    print("1. seeds: vectorised vs a plain per-seed loop ...", flush=True)
    results["seeds"] = bench_seeds(epochs=5 if quick else 100, n_seeds=3 if quick else 10)
    print(json.dumps(results["seeds"], indent=1), flush=True)
    print("torch.compile: one seed, eager vs compiled ...", flush=True)
    results["compile"] = bench_compile(epochs=6 if quick else 60)
    print(json.dumps(results["compile"], indent=1), flush=True)
    if have_cifar:
        print("2-4. CIFAR-10: DataLoader, PU overhead, selection ...", flush=True)
        results["cifar10"] = bench_cifar(args.data_dir, n_u=1000 if quick else 5000,
                                         width=0.25, batch_size=500)
        print(json.dumps(results["cifar10"], indent=1), flush=True)
        print("CIFAR-10 seeds: grouped convolutions vs one seed at a time ...", flush=True)
        results["cnn_seeds"] = bench_cnn_seeds(args.data_dir, n_u=500 if quick else 5000, width=0.25,
                                               batch_size=500, n_seeds=2 if quick else 4)
        print(json.dumps(results["cnn_seeds"], indent=1), flush=True)
    else:
        print("CIFAR-10 not found: set --data-dir or PUSUPPORT_DATA (make bench does)")
    (ROOT / "results.json").write_text(json.dumps(results, indent=2))
    print(f"written {ROOT / 'results.json'}")


if __name__ == "__main__":
    main()
