"""What each page costs at the ``paper`` profile, before it runs: FLOPs, peak memory, GPU time.

FLOPs come from the layer shapes (forward hooks on one example; the network is built on the
meta device and given uninitialised CPU memory, which costs no initialisation, while a meta
forward's BatchNorm imports torch._dynamo, 3 s of every page):
a Linear or Conv2d layer costs 2 FLOPs per multiply-add; BatchNorm, activations and
pooling one FLOP per output element; Dropout and Flatten nothing. 20 Newsgroups' first
layer is sparse and counted as ``torch.sparse.mm`` computes it, 2 FLOPs per non-zero
input × hidden unit (not the dense 130,107 × 300). A trained row costs its method's
``passes`` forward passes (3: forward + backward), an evaluated or scored row 1. Per epoch of
:func:`~pusupport.core.training.fit`: n_p + n_u + |S| trained rows; the test set when the
epoch evaluates (for PN training also P and U, for the training error; for a method with a
threshold also P and U); all of U when aaPU selects or U's losses are recorded, and at the
last epoch for a method with a view (nnPU: nnPUSB's threshold). A view itself costs
nothing: it is read from its method's run. |S| during epoch e is
n_select · max(0, e − select_from), capped at the U points outside P: exact when S never
re-picks a point, an upper bound under the paper's rule (re-picks allowed).
Left out: Adam's update, the risks, index gathers and the few predictions made
outside the loop for figures.

Peak memory of a run (one call of the loop; K seeds when they are stacked as one
network): K × (parameters, gradients and Adam's two moments in float32 + every layer's
output, input included, in bf16 for the largest training batch, the last epoch's) +
the data the loop keeps on the device in float32 (each seed's P; U and the test set
once when every seed shares them; sparse rows at 12 bytes a non-zero).
Evaluation batches (inference, 4,096 rows) are assumed to need less.

Time, where a GPU measured the run's model on its data set's shape (:data:`MEASURED`:
``make bench DEVICE=cuda`` on an NVIDIA H200, one seed at a time or stacked as the runtime
lays the run out): FLOPs / that measured rate, the rate being this model's FLOPs of the
timed epoch over its seconds (launches and overheads included, so the §4.1 MLP's rate holds
for its own small sizes only). Elsewhere, FLOPs / :data:`THROUGHPUT`, an assumed rate: one
NVIDIA A100 80GB at 20 % of its 312 TFLOP/s dense bf16 peak (NVIDIA's published
mixed-precision ResNet-50 v1.5 training on one A100 80GB, 2,470 images/s at 3 × 8.2 GFLOP
an image, is 61 TFLOP/s, 19.5 %). Data loading and start-up are left out: the time is a
lower bound on wall time.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

import pandas as pd
import torch
from torch import nn

from ..core.config import ModelConfig, TrainConfig
from ..core.methods import get_method, views_of
from ..core.models import SparseLinear, build_model
from ..core.batches import n_batches
from ..data.sizes import SIZES

GPU, PEAK_BF16, MFU = "A100 80GB", 312e12, 0.20
THROUGHPUT = PEAK_BF16 * MFU
#: Epochs timed on a GPU (``bench/results-cuda.json``, a test keeps them equal): per model and
#: data set (whose ``paper`` settings and sizes it ran at), the seconds of one epoch of aaPU
#: (selecting and evaluating every epoch) one seed at a time, and a member's of 4 stacked.
MEASURED_ON = "NVIDIA H200"
MEASURED = {("kiryo_cnn", "cifar10"): (0.8233, 2.0317), ("coteaching_cnn", "cifar100"): (1.3559, 1.6146),
            ("mlp", "synthetic"): (0.02688, 0.008547)}
@dataclass(frozen=True)
class Data:
    """The sizes a run sees: labelled P, U, test rows, U points S may take, one row's
    shape, its non-zeros (sparse rows) and whether every seed shares U and the test set."""

    n_p: int
    n_u: int
    n_test: int
    eligible: int
    shape: tuple
    nnz: int | None = None
    shared: bool = False

    @property
    def row_bytes(self) -> int:
        return 12 * self.nnz if self.nnz else 4 * math.prod(self.shape)


def priceable(dataset: str | None, d) -> bool:
    """Whether :func:`data_sizes` knows ``dataset`` at data settings ``d`` (20 News: at the
    vocabulary sizes whose non-zeros were counted)."""
    sizes = SIZES.get(dataset)
    return sizes is not None and (not sizes.words or d.max_features in sizes.words)


def data_sizes(dataset: str, d) -> Data:
    """The :class:`Data` of ``dataset`` (its :data:`~pusupport.data.datasets.SIZES`) with
    data settings ``d`` (a DataConfig)."""
    sizes = SIZES[dataset]
    shape, nnz = sizes.shape, None
    if sizes.words:
        words, nnz = sizes.words[d.max_features]
        shape = (words,)
    if d.n_train is not None:            # PN: P = the sample's positives, the U slot = the rest
        n_p = int(sizes.positive * d.n_train)
        return Data(n_p, d.n_train - n_p, d.n_val, 0, shape)
    whole = d.n_unlabeled is None                # U is the whole training set, P included
    n_u = sizes.n_train if whole else d.n_unlabeled
    return Data(d.n_labeled, n_u, d.n_test or sizes.n_test, n_u - d.n_labeled if whole else n_u,
                shape, nnz, whole)


@dataclass(frozen=True)
class Run:
    """One training configuration of a page, for ``seeds`` seeds (``stacked``: as one
    network); ``scored``: rows scored once after training (a prior estimator's other half);
    ``view``: read from another method's run (:attr:`~pusupport.core.methods.Method.view_of`);
    ``first``: the first epoch it trains (a run forked from another after epoch
    ``first − 1``: :mod:`~pusupport.core.forks`)."""

    cfg: TrainConfig
    data: Data
    seeds: int = 1
    stacked: bool = False
    scored: int = 0
    view: bool = False
    first: int = 1

    @property
    def members(self) -> int:
        return self.seeds if self.stacked else 1


@lru_cache
def _model(model: ModelConfig, shape: tuple, nnz: int | None) -> tuple[int, int, int]:
    """(forward FLOPs, activation elements, parameters) of one example."""
    with torch.device("meta"):
        net = build_model(model, (1, *shape)).eval()
    net = net.to_empty(device="cpu")
    flops, elements = 0, math.prod(shape) if nnz is None else nnz

    def count(layer, inputs, output):
        nonlocal flops, elements
        if isinstance(layer, SparseLinear) and nnz:
            flops += 2 * nnz * layer.out_features
        elif isinstance(layer, (nn.Linear, nn.Conv2d)):
            flops += 2 * layer.weight[0].numel() * output.numel()
        elif not isinstance(layer, (nn.Dropout, nn.Dropout2d, nn.Flatten)):
            flops += output.numel()
        if not isinstance(layer, nn.Flatten):      # a view: no memory of its own
            elements += output.numel()

    for layer in net.layers():
        layer.register_forward_hook(count)
    with torch.no_grad():
        net(torch.zeros(1, *shape))
    return flops, elements, sum(p.numel() for p in net.parameters())


def forward_flops(model: ModelConfig, shape: tuple, nnz: int | None = None) -> int:
    """Forward FLOPs of one example of ``shape`` (``nnz``: non-zeros of a sparse row)."""
    return _model(model, tuple(shape), nnz)[0]


def _selected(cfg: TrainConfig, data: Data, epoch: int) -> int:
    """|S| while ``epoch`` trains (an upper bound when re-picks are allowed)."""
    if not get_method(cfg.method).selects or cfg.n_select == 0:
        return 0
    return min(data.eligible, cfg.n_select * max(0, epoch - cfg.select_from))


def run_flops(run: Run) -> float:
    """FLOPs of ``run`` over all its seeds: training, evaluation and selection passes."""
    cfg, d = run.cfg, run.data
    if run.view:
        return 0.0
    method, forward = get_method(cfg.method), forward_flops(cfg.model, d.shape, d.nnz)
    rows = d.n_u if run.first > 1 else 0      # a fork scores U for its first selection
    for epoch in range(run.first, cfg.epochs + 1):
        rows += method.passes * (d.n_p + d.n_u + _selected(cfg, d, epoch))
        evaluates = cfg.evaluates_at(epoch)
        if evaluates:
            rows += d.n_test + (d.n_p + d.n_u if method.supervised else 0)
        if (cfg.selects_at(epoch) or epoch in cfg.record_u_losses or evaluates and method.threshold
                or epoch == cfg.epochs and views_of(cfg.method)):
            rows += d.n_u
        if evaluates and method.threshold:      # P too, for the threshold
            rows += d.n_p
    return float(run.seeds * forward * (rows + run.scored))


def run_memory(run: Run) -> float:
    """Peak bytes of one call of the loop (``members`` seeds at once; a view: none)."""
    cfg, d, k = run.cfg, run.data, run.members
    if run.view:
        return 0.0
    _, elements, parameters = _model(cfg.model, tuple(d.shape), d.nnz)
    batches = n_batches(d.n_p, d.n_u, cfg.batch_size)
    batch = sum(math.ceil(n / batches) for n in (d.n_p, d.n_u, _selected(cfg, d, cfg.epochs)))
    held = k * d.n_p + (1 if d.shared else k) * (d.n_u + d.n_test)
    return float(k * (4 * 4 * parameters + 2 * elements * batch) + held * d.row_bytes)


def measured_case(model: str, dataset: str) -> Run:
    """The epoch ``make bench DEVICE=cuda`` times for ``model``: aaPU at ``dataset``'s
    ``paper`` settings, selecting from its first epoch, one seed."""
    from ..core.config import Settings
    from .paper import PAPER
    s = Settings().merge(PAPER[dataset])
    return Run(replace(s.train, method="aapu", select_from=1, epochs=1), data_sizes(dataset, s.data))


@lru_cache
def _rates() -> dict:
    """{(model, row shape, stacked): FLOP/s measured on :data:`MEASURED_ON`}."""
    out = {}
    for (model, dataset), seconds in MEASURED.items():
        case = measured_case(model, dataset)
        for stacked, s in zip((False, True), seconds):
            out[model, case.data.shape, stacked] = run_flops(case) / s
    return out


def run_seconds(run: Run) -> tuple[float, bool]:
    """(GPU seconds of ``run``, whether at a measured rate)."""
    rate = _rates().get((run.cfg.model.name, tuple(run.data.shape), run.stacked))
    return run_flops(run) / (rate or THROUGHPUT), rate is not None


@dataclass(frozen=True)
class Cost:
    """A page's cost at ``paper``: training runs (methods × seeds × grid entries), FLOPs,
    the peak memory of its largest run, and which run that is."""

    page: str
    runs: int
    flops: float
    peak_bytes: float
    largest: str
    seconds: float = 0.0
    measured: float = 0.0

    def where(self) -> str:
        """Which rates price the time: measured on a GPU, assumed, or both (the FLOPs' shares)."""
        assumed = f"{GPU} at an assumed {THROUGHPUT / 1e12:.0f} TFLOP/s ({MFU:.0%} of bf16 peak)"
        if self.measured >= self.flops:
            return f"{MEASURED_ON}, at rates measured there"
        if self.measured <= 0:
            return assumed
        return (f"{MEASURED_ON} at rates measured there, but for {_flops(self.flops - self.measured)} "
                f"on an {assumed}")

    def describe(self) -> str:
        return (f"cost at paper: {_flops(self.flops)}, peak memory {_bytes(self.peak_bytes)} "
                f"(largest run: {self.largest}), ≈ {_duration(self.seconds)} on one GPU: "
                f"{self.where()}")


def price(plan, page: str = "") -> Cost:
    """The :class:`Cost` of ``plan`` (a page's :class:`~pusupport.book.plan.Plan` at
    ``paper``, laid out as it trains: :meth:`~pusupport.book.plan.Plan.priced`; or a
    :class:`Run` list)."""
    runs = plan if isinstance(plan, list) else plan.priced()
    largest = max(runs, key=run_memory)
    who = (f"{largest.cfg.method} × {largest.seeds} seeds stacked" if largest.stacked
           else f"{largest.cfg.method}, one seed")
    timed = [(run_flops(r), *run_seconds(r)) for r in runs]
    return Cost(page, sum(r.seeds for r in runs if not r.view), sum(f for f, _, _ in timed),
                run_memory(largest), who, sum(t for _, t, _ in timed),
                sum(f for f, _, measured in timed if measured))


def markdown(table: pd.DataFrame) -> str:
    """``table`` as a Markdown table (DEVELOPING.md's)."""
    lines = [list(table.columns), ["---"] * len(table.columns), *table.astype(str).values.tolist()]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines)


def _flops(x: float) -> str:
    for prefix, scale in (("E", 1e18), ("P", 1e15), ("T", 1e12), ("G", 1e9)):
        if x >= scale:
            return f"{x / scale:.3g} {prefix}FLOP"
    return f"{x:.3g} FLOP"


def _bytes(x: float) -> str:
    return f"{x / 2**30:.3g} GiB" if x >= 2**30 else f"{x / 2**20:.0f} MiB"


def _duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.3g} h"
    return f"{seconds / 60:.3g} min" if seconds >= 60 else f"{seconds:.2g} s"
