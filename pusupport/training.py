"""Training loop for uPU, nnPU and aaPU (paper Algorithm 1).

Data stay on the training device as tensors; a mini-batch is an index gather.
Each epoch: stratified mini-batches of P, U and S (line 3); one Adam step per
batch on the chosen risk; evaluation on the test set; then, for aaPU from epoch
``select_from`` on, the selection of lines 7–9.
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field

import pandas as pd
import torch

from . import checkpoint
from .data import PUData
from .losses import LOSSES
from .metrics import roc_auc, zero_one_error
from .models import MODELS, build_model, full_precision, predict
from .progress import progress
from .risks import RISKS, aapu_risk, naive_risk, nnpu_risk, upu_risk
from .selection import SelectedSet, unlabeled_losses
from .sparse import as_model_input, cat_rows


#: Methods that grow a selected set S.
SELECTING = ("aapu", "naive")


@dataclass
class TrainConfig:
    """Everything that defines one training run (defaults: the paper's §4.1).

    lr_schedule maps an epoch e to the learning rate used *after* it: {100: 1e-5}
    trains epochs 1–100 at ``lr`` and 101+ at 1e-5 (PyTorch MultiStepLR semantics).
    With ``checkpoint_dir`` set, the run saves a checkpoint every ``checkpoint_every``
    epochs and at its end, and calling it again resumes from the last one.
    ``compile`` runs the training forward pass through ``torch.compile`` (the first
    epochs pay for compilation; see ``make bench`` for where it pays off).
    """

    method: str = "aapu"
    model: str = "mlp"
    model_kwargs: dict = field(default_factory=dict)
    loss: str = "logistic"
    epochs: int = 1000
    batch_size: int = 128
    lr: float = 1e-4
    lr_schedule: dict = field(default_factory=lambda: {100: 1e-5})
    weight_decay: float = 0.05
    beta: float = 0.0
    gamma: float = 1.0
    n_select: int = 1
    select_from: int = 200
    selection_loss: str = "logistic"
    allow_repick: bool = True
    seed: int = 0
    device: str = "auto"
    amp: bool | None = None
    eval_batch_size: int = 4096
    compile: bool = False
    record_u_losses: tuple = ()
    checkpoint_dir: str | None = None
    checkpoint_every: int = 10
    progress: bool = True

    def __post_init__(self):
        def need(ok, msg):
            if not ok:
                raise ValueError(msg)
        need(self.method in RISKS, f"unknown method {self.method!r}: use one of {list(RISKS)}")
        need(self.model in MODELS, f"unknown model {self.model!r}: use one of {sorted(MODELS)}")
        for name in ("loss", "selection_loss"):
            need(getattr(self, name) in LOSSES,
                 f"unknown {name} {getattr(self, name)!r}: use one of {sorted(LOSSES)}")
        need(isinstance(self.epochs, int) and self.epochs >= 1, f"epochs must be an int >= 1, got {self.epochs!r}")
        need(isinstance(self.batch_size, int) and self.batch_size >= 1,
             f"batch_size must be an int >= 1, got {self.batch_size!r}")
        need(self.lr > 0 and self.weight_decay >= 0, "lr must be > 0 and weight_decay >= 0")
        need(self.beta >= 0, f"beta must be >= 0, got {self.beta} (nnPU uses beta=0)")
        need(0 < self.gamma <= 1, f"gamma must be in (0, 1], got {self.gamma} (nnPU uses gamma=1)")
        need(isinstance(self.compile, bool), f"compile must be True or False, got {self.compile!r}")
        need(isinstance(self.checkpoint_every, int) and self.checkpoint_every >= 1,
             f"checkpoint_every must be an int >= 1, got {self.checkpoint_every!r}")
        need(isinstance(self.n_select, int) and self.n_select >= 0,
             f"n_select must be an int >= 0, got {self.n_select!r}")
        if self.method in SELECTING:
            need(1 <= self.select_from <= self.epochs,
                 f"select_from={self.select_from} is outside epochs 1..{self.epochs}: "
                 "aaPU would never select; lower select_from or raise epochs")
        self.lr_schedule = {int(k): float(v) for k, v in self.lr_schedule.items()}
        self.record_u_losses = tuple(int(e) for e in self.record_u_losses)

    def lr_at(self, epoch: int) -> float:
        """Learning rate used during (1-indexed) ``epoch``."""
        lr = self.lr
        for milestone in sorted(self.lr_schedule):
            if epoch > milestone:
                lr = self.lr_schedule[milestone]
        return lr


def resolve_device(device: str = "auto") -> torch.device:
    """'auto' → CUDA when available, else CPU."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except RuntimeError:
        raise ValueError(f"unknown device {device!r}: use 'auto', 'cpu' or 'cuda'") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device='cuda' but no CUDA GPU is visible: use device='auto' or 'cpu'")
    return dev


def stratified_batches(n_p: int, n_u: int, s_index: torch.Tensor, batch_size: int,
                       gen: torch.Generator):
    """Shuffle P, U and S and cut each into the same number of mini-batches.

    Every batch then holds P, U and S in the proportions of the whole set
    (Algorithm 1, line 3). The number of batches is ⌈(n_p + n_u)/batch_size⌉,
    capped at n_p so that every batch has a labelled positive. Indices are drawn on
    ``gen``'s device.
    """
    n_batches = max(1, min(n_p, math.ceil((n_p + n_u) / batch_size)))
    dev = gen.device
    p = torch.randperm(n_p, generator=gen, device=dev).tensor_split(n_batches)
    u = torch.randperm(n_u, generator=gen, device=dev).tensor_split(n_batches)
    s_index = s_index.to(dev)
    s = s_index[torch.randperm(len(s_index), generator=gen, device=dev)].tensor_split(n_batches)
    return list(zip(p, u, s))


def evaluate(model, x_test, y_test, batch_size=4096, amp=False) -> dict:
    """Zero-one test error of sign(g) (g > 0 ⇒ +1) and ROC AUC (NaN without a test set)."""
    if len(x_test) == 0:
        return {"test_error": float("nan"), "test_auc": float("nan")}
    g = predict(model, x_test, batch_size, amp)
    error, auc = torch.stack([zero_one_error(g, y_test), roc_auc(g, y_test)]).tolist()
    return {"test_error": error, "test_auc": auc}


@dataclass
class RunResult:
    """History (one row per epoch), the trained model, the selected set, and the
    U losses ℓ(−g(x)) (``selection_loss``) recorded after the epochs in
    ``config.record_u_losses``."""

    history: pd.DataFrame
    model: torch.nn.Module
    selected: SelectedSet
    config: TrainConfig
    u_losses: dict = field(default_factory=dict)

    @property
    def picks(self) -> pd.DataFrame:
        """Every selection made: epoch, rank, U index, whether new, loss, true label."""
        return pd.DataFrame(self.selected.picks,
                            columns=["epoch", "rank", "index", "new", "loss", "true_label"])


def method_risk(cfg: TrainConfig, g_p, g_u, g_s, prior, s_mask=None):
    """The risk of ``cfg.method`` on a batch's P, U and S scores (``s_mask``: see aapu_risk)."""
    if cfg.method == "upu":
        return upu_risk(g_p, g_u, prior, cfg.loss)
    if cfg.method == "nnpu":
        return nnpu_risk(g_p, g_u, prior, cfg.loss, cfg.beta, cfg.gamma)
    if cfg.method == "naive":
        return naive_risk(g_p, g_u, g_s, prior, cfg.loss, cfg.beta, cfg.gamma)
    return aapu_risk(g_p, g_u, g_s, prior, cfg.loss, cfg.beta, cfg.gamma, s_mask)


def train(data: PUData, config: TrainConfig | None = None, **overrides) -> RunResult:
    """Train one model on ``data`` with ``config`` (fields may be overridden by keyword)."""
    cfg = TrainConfig(**{**asdict(config or TrainConfig()), **overrides})
    device = resolve_device(cfg.device)
    amp = cfg.amp if cfg.amp is not None else device.type == "cuda"
    torch.manual_seed(cfg.seed)
    gen = torch.Generator(device).manual_seed(cfg.seed)
    data = data.to(device)
    kwargs = dict(cfg.model_kwargs)
    if cfg.model == "news_mlp":
        kwargs.setdefault("in_features", math.prod(data.x_u.shape[1:]))
    model = build_model(cfg.model, **kwargs).to(device)
    channels_last = device.type == "cuda" and data.x_u.dim() == 4
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    forward = torch.compile(model, dynamic=True) if cfg.compile else model
    selected = SelectedSet(len(data.x_u), data.u_labeled, data.u_labels, cfg.allow_repick)
    rows, u_losses, first, offset = [], {}, 1, 0.0
    if cfg.checkpoint_dir:
        ckpt_path, identity = checkpoint.path_for(cfg), checkpoint.fingerprint(cfg, data)
        state = checkpoint.load(ckpt_path, identity)
        if state is not None:
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["optimizer"])
            selected.load_state_dict(state["selected"])
            checkpoint.restore_rng(state["rng"], gen)
            rows, u_losses = state["history"], state["u_losses"]
            first, offset = state["epoch"] + 1, rows[-1]["wall_time"]
    start = time.perf_counter() - offset
    bar = progress(range(first, cfg.epochs + 1), cfg.progress,
                   desc=f"{cfg.method} seed {cfg.seed}", leave=False)
    for epoch in bar:
        lr = cfg.lr_at(epoch)
        for group in opt.param_groups:
            group["lr"] = lr
        model.train()
        sums = torch.zeros(4, device=device)
        batches = stratified_batches(len(data.x_p), len(data.x_u), selected.indices,
                                     cfg.batch_size, gen)
        for bp, bu, bs in batches:
            x = as_model_input(cat_rows([data.x_p[bp], data.x_u[bu], data.x_u[bs]]))
            if channels_last:
                x = x.contiguous(memory_format=torch.channels_last)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
                g = full_precision(forward(x))
            g_p, g_u, g_s = g.split([len(bp), len(bu), len(bs)])
            risk = method_risk(cfg, g_p, g_u, g_s, data.prior)
            opt.zero_grad(set_to_none=True)
            risk.objective.sum().backward()
            opt.step()
            sums += torch.stack([risk.value, risk.positive, risk.negative,
                                 risk.corrected.float()]).reshape(4)
        means = (sums / len(batches)).tolist()
        if not all(math.isfinite(v) for v in means):  # training diverged
            raise FloatingPointError(
                f"the {cfg.method} risk became {means[0]} at epoch {epoch}: training "
                "diverged — lower the learning rate or check the inputs for NaN")
        row = {"method": cfg.method, "seed": cfg.seed, "epoch": epoch, "lr": lr,
               "risk": means[0], "risk_positive": means[1], "risk_negative": means[2],
               "corrected_fraction": means[3],
               **evaluate(model, data.x_test, data.y_test, cfg.eval_batch_size, amp)}
        selecting = cfg.method in SELECTING and epoch >= cfg.select_from and cfg.n_select > 0
        if selecting or epoch in cfg.record_u_losses:
            losses = unlabeled_losses(model, data.x_u, cfg.selection_loss, cfg.eval_batch_size, amp)
            if epoch in cfg.record_u_losses:
                u_losses[epoch] = losses.cpu()
            if selecting:
                selected.update(losses, cfg.n_select, epoch)
        row.update(n_selected=len(selected), purity=selected.purity,
                   wall_time=time.perf_counter() - start)
        rows.append(row)
        bar.set_postfix(test_error=f"{row['test_error']:.4f}", S=row["n_selected"])
        if cfg.checkpoint_dir and (epoch % cfg.checkpoint_every == 0 or epoch == cfg.epochs):
            checkpoint.save(ckpt_path, {
                "fingerprint": identity, "epoch": epoch, "model": model.state_dict(),
                "optimizer": opt.state_dict(), "selected": selected.state_dict(),
                "rng": checkpoint.rng_state(gen), "history": rows, "u_losses": u_losses})
    return RunResult(pd.DataFrame(rows), model, selected, cfg, u_losses)


def train_supervised(x, y, x_val=None, y_val=None, model: str = "kiryo_cnn",
                     model_kwargs: dict | None = None,
                     epochs: int = 30, batch_size: int = 128, lr: float = 1e-3,
                     weight_decay: float = 0.0, seed: int = 0, device: str = "auto",
                     amp: bool | None = None, progress_bar: bool = True,
                     track_accuracy: bool = True):
    """Ordinary (PN) training with the logistic loss on ±1 labels ``y``, possibly noisy.

    Returns (history, model). The history has, per epoch, the accuracy on the training
    labels as given (noisy ones included) and on the validation labels — Arpit et
    al.'s memorisation curves (``track_accuracy=False`` skips them). Also trains the
    P-vs-U classifier of :mod:`.prior`.
    """
    dev = resolve_device(device)
    amp = amp if amp is not None else dev.type == "cuda"
    torch.manual_seed(seed)
    gen = torch.Generator(dev).manual_seed(seed)
    x, y = x.to(dev), y.to(dev)
    tracked = [("train_accuracy", x, y)]
    if x_val is not None:
        tracked.append(("val_accuracy", x_val.to(dev), y_val.to(dev)))
    kwargs = dict(model_kwargs or {})
    if model == "news_mlp":
        kwargs.setdefault("in_features", math.prod(x.shape[1:]))
    net = build_model(model, **kwargs).to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=weight_decay)
    rows = []
    for epoch in progress(range(1, epochs + 1), progress_bar, desc=f"PN seed {seed}", leave=False):
        net.train()
        for idx in torch.randperm(len(x), generator=gen, device=dev).split(batch_size):
            with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=amp):
                g = full_precision(net(as_model_input(x[idx])))
            loss = LOSSES["logistic"](y[idx] * g).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        acc = ({name: float(((predict(net, xs, amp=amp) > 0) == (ys > 0)).float().mean())
                for name, xs, ys in tracked} if track_accuracy else {})
        rows.append({"seed": seed, "epoch": epoch, **acc})
    return pd.DataFrame(rows), net
