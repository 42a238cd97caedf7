"""What the benchmark's parts share: timing, the §4.1 MLP's bare matmuls and the CIFAR-10
U sample (:mod:`run`, :mod:`book_rows`)."""

from __future__ import annotations

import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent
BF16 = torch.bfloat16


def timed(fn, repeat=1):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


SYNTH_DIMS = (2, 200, 600, 1)          # §4.1's MLP: its three linear layers


def bandwidth_gbs(mb=512) -> float:
    """GB/s of a large tensor copy (read + write)."""
    src = torch.ones(mb * 2 ** 18)
    dst = torch.empty_like(src)
    dst.copy_(src)
    return 2 * src.numel() * 4 / timed(lambda: dst.copy_(src), 5) / 1e9


def bare_training_step(K, rows, dtype):
    """The training step's batched matmuls alone: forward, and backward for weights and
    inputs, on tensors already in ``dtype``."""
    ws = [torch.randn(K, a, b, dtype=dtype) for a, b in zip(SYNTH_DIMS, SYNTH_DIMS[1:])]
    xs = [torch.randn(K, rows, a, dtype=dtype) for a in SYNTH_DIMS[:-1]]
    gs = [torch.randn(K, rows, b, dtype=dtype) for b in SYNTH_DIMS[1:]]

    def step():
        for x, w in zip(xs, ws):
            torch.bmm(x, w)
        for i, (x, w, g) in enumerate(zip(xs, ws, gs)):
            torch.bmm(x.transpose(1, 2), g)                   # dW
            if i:
                torch.bmm(g, w.transpose(1, 2))               # dX (not for the input)
    return step


def bare_evaluation(K, n, chunk, dtype):
    ws = [torch.randn(K, a, b, dtype=dtype) for a, b in zip(SYNTH_DIMS, SYNTH_DIMS[1:])]
    xs = [torch.randn(K, chunk, a, dtype=dtype) for a in SYNTH_DIMS[:-1]]
    sizes = [min(chunk, n - i) for i in range(0, n, chunk)]

    def run():
        for rows in sizes:
            for x, w in zip(xs, ws):
                torch.bmm(x[:, :rows], w)
    return run



def cifar_subset(data_dir, n_u):
    from pusupport.data.datasets import CIFAR10_POSITIVE, load_cifar10, make_pu
    raw = load_cifar10(data_dir, download=False)
    pu = make_pu("cifar10", raw, CIFAR10_POSITIVE, n_labeled=1000, n_unlabeled=n_u, seed=0)
    return raw, pu

