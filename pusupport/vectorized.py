"""K seeds of one model trained at once — the same maths as K separate runs.

Each member keeps its own initialisation, data, mini-batch order, BatchNorm
statistics, dropout masks, nnPU branch, optimiser state and selected set S. Fully
connected layers become batched matrix products over a leading member dimension;
convolutions become one grouped convolution over the members' channels. Members'
S batches can differ in size, so they are padded and masked — in the risk and in
BatchNorm's statistics.
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, replace
from pathlib import Path

import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from . import checkpoint
from .losses import get_loss
from .metrics import roc_auc, zero_one_error
from .models import NewsMLP, build_model, full_precision
from .progress import progress
from .selection import SelectedSet
from .training import RunResult, TrainConfig, method_risk, resolve_device, stratified_batches

VECTORIZED_METHODS = ("upu", "nnpu", "aapu")
#: Layers without parameters or state: applied to the stacked activations as they are.
STATELESS = (nn.ReLU, nn.LeakyReLU, nn.Softsign, nn.MaxPool2d, nn.AdaptiveAvgPool2d)


class NotStackable(ValueError):
    """These settings or data cannot be stacked; train seed by seed with ``train()``."""


def _layers(model: nn.Module) -> list[nn.Module]:
    if isinstance(model, NewsMLP):
        return [model.first, *model.net]
    parts = [model.features, model.classifier] if hasattr(model, "features") else [model.net]
    return [layer for part in parts for layer in part]


class StackedNet:
    """K copies of one architecture (Linear, Conv2d, BatchNorm, Dropout, pooling, activations).

    Activations are (K, B, features) in the fully connected part and (B, K·C, H, W)
    in the convolutional part, where member k owns channels k·C … (k+1)·C − 1.
    """

    def __init__(self, models: list[nn.Module], device, dropout_gens: list[torch.Generator],
                 channels_last: bool = True):
        self.K, self.steps, self.layers = len(models), 0, []
        self.gens, self.channels_last = dropout_gens, channels_last

        def stack(tensors):
            return torch.stack([t.detach() for t in tensors]).to(device)

        for group in zip(*[_layers(m) for m in models]):
            first = group[0]
            if isinstance(first, nn.Linear):
                b = stack([l.bias[None] for l in group]).requires_grad_() if first.bias is not None else None
                self.layers.append(("linear", stack([l.weight.t() for l in group]).requires_grad_(), b))
            elif isinstance(first, nn.Conv2d):
                if first.groups != 1 or first.dilation != (1, 1):
                    raise NotStackable("only plain convolutions (groups=1, dilation=1) can be stacked")
                w = torch.cat([l.weight.detach() for l in group]).to(device)
                if channels_last:
                    w = w.contiguous(memory_format=torch.channels_last)
                w.requires_grad_()
                b = torch.cat([l.bias.detach() for l in group]).to(device).requires_grad_()
                self.layers.append(("conv", w, b, first.stride, first.padding))
            elif isinstance(first, (nn.BatchNorm1d, nn.BatchNorm2d)):
                if not self.layers or self.layers[-1][0] not in ("linear", "conv"):
                    raise NotStackable("a BatchNorm must follow a linear layer or convolution to be stacked")
                self.layers.append(("bn", stack([l.weight for l in group]).requires_grad_(),
                                    stack([l.bias for l in group]).requires_grad_(),
                                    stack([l.running_mean for l in group]),
                                    stack([l.running_var for l in group]), first.momentum, first.eps))
            elif isinstance(first, (nn.Dropout, nn.Dropout2d)):
                self.layers.append(("dropout", first.p, isinstance(first, nn.Dropout2d)))
            elif isinstance(first, nn.Flatten):
                self.layers.append(("flatten",))
            elif isinstance(first, STATELESS):
                self.layers.append(("fn", first))
            else:
                raise NotStackable(f"cannot stack {type(first).__name__} layers")

    def parameters(self) -> list[torch.Tensor]:
        return [t for layer in self.layers if layer[0] in ("linear", "conv", "bn")
                for t in layer[1:3] if t is not None]

    def buffers(self) -> list[torch.Tensor]:
        return [t for layer in self.layers if layer[0] == "bn" for t in layer[3:5]]

    def __call__(self, x: torch.Tensor, mask: torch.Tensor | None = None,
                 train: bool = True, rows: list[int] | None = None) -> torch.Tensor:
        """Scores (K, B) of inputs (K, B, …); ``mask`` (K, B) marks real rows (padding: 0),
        the first ``rows[k]`` of member k (all B when ``rows`` is None)."""
        self.steps += train
        K, B = x.shape[:2]
        if self.layers[0][0] == "conv":                   # images → (B, K·C, H, W)
            h = x.transpose(0, 1).reshape(B, -1, *x.shape[3:])
            if self.channels_last:
                h = h.contiguous(memory_format=torch.channels_last)
        else:                                             # an MLP flattens images
            h = x.reshape(K, B, -1)
        for layer in self.layers if train else self._folded():
            kind = layer[0]
            if kind == "linear":
                h = torch.bmm(h, layer[1]) if layer[2] is None else torch.baddbmm(layer[2], h, layer[1])
            elif kind == "conv":
                h = F.conv2d(h, layer[1], layer[2], layer[3], layer[4], groups=K)
            elif kind == "bn":
                h = self._batch_norm(h, layer, mask)
            elif kind == "dropout":
                if train and layer[1] > 0:
                    h = h * self._dropout_noise(h, layer[1], layer[2], rows or [B] * K)
            elif kind == "flatten":
                h = h.reshape(B, K, -1).transpose(0, 1)
            elif not train and isinstance(layer[1], nn.ReLU):
                h = h.relu_()
            else:
                h = layer[1](h)
        return h.squeeze(-1)

    def _folded(self) -> list[tuple]:
        """Eval-mode layers: each BatchNorm folded into the linear map or convolution before it."""
        out = []
        for layer in self.layers:
            if layer[0] == "bn":
                prev = out[-1]
                _, gamma, beta, rm, rv, _, eps = layer
                scale = gamma * torch.rsqrt(rv + eps)                       # (K, C)
                w, b = prev[1], prev[2] if prev[2] is not None else torch.zeros_like(beta)
                if prev[0] == "linear":
                    b = b.reshape(rm.shape)
                    out[-1] = ("linear", w * scale[:, None], ((b - rm) * scale + beta)[:, None])
                else:
                    out[-1] = ("conv", w * scale.reshape(-1, 1, 1, 1),
                               (b - rm.reshape(-1)) * scale.reshape(-1) + beta.reshape(-1), *prev[3:])
            else:
                out.append(layer)
        return out

    def _batch_norm(self, h, layer, mask):
        """Training-mode BatchNorm with per-member statistics over the real (unmasked) rows."""
        _, gamma, beta, rm, rv, momentum, eps = layer
        image = h.dim() == 4
        if image and mask is None:                    # grouped channels: the stock kernel
            return F.batch_norm(h, rm.view(-1), rv.view(-1), gamma.view(-1), beta.view(-1),
                                True, momentum, eps)
        if image:                                     # (B, K·C, H, W) → (K, B·H·W, C), padded rows masked
            B, _, H, W = h.shape
            x = h.reshape(B, self.K, -1, H * W).permute(1, 0, 3, 2).reshape(self.K, B * H * W, -1)
            m = mask.repeat_interleave(H * W, 1)
        else:
            x, m = h, mask
        xf = full_precision(x)
        m = torch.ones(xf.shape[:2], device=xf.device, dtype=xf.dtype) if m is None else m.to(xf.dtype)
        m = m[..., None]
        n = m.sum(1)                                                      # (K, 1)
        mean = (xf * m).sum(1) / n                                        # (K, C)
        centred = xf - mean[:, None]
        var = (centred.square() * m).sum(1) / n                           # biased, as BatchNorm
        with torch.no_grad():
            rm.mul_(1 - momentum).add_(momentum * mean)
            rv.mul_(1 - momentum).add_(momentum * var * n / (n - 1))
        out = torch.addcmul(beta[:, None], centred, (gamma * torch.rsqrt(var + eps))[:, None]).to(x.dtype)
        if image:
            out = out.reshape(self.K, B, H * W, -1).permute(1, 0, 3, 2).reshape(B, -1, H, W)
            if self.channels_last:
                out = out.contiguous(memory_format=torch.channels_last)
        return out

    def _dropout_noise(self, h, p, per_channel, rows):
        """Each member's mask drawn from its own generator exactly as ``nn.Dropout`` draws it
        for that member's real rows."""
        if per_channel:                               # Dropout2d: one draw per (row, channel)
            B = h.shape[0]
            noise = h.new_ones(B, self.K, h.shape[1] // self.K, 1, 1)
            for k, (n, gen) in enumerate(zip(rows, self.gens)):
                noise[:n, k] = h.new_empty(n, noise.shape[2], 1, 1).bernoulli_(1 - p, generator=gen).div_(1 - p)
            return noise.view(B, -1, 1, 1)
        noise = h.new_ones(h.shape)
        for k, (n, gen) in enumerate(zip(rows, self.gens)):
            noise[k, :n] = h.new_empty(n, h.shape[2]).bernoulli_(1 - p, generator=gen).div_(1 - p)
        return noise

    def unstack(self, k: int, template: nn.Module) -> nn.Module:
        """Member ``k`` as an ordinary module (``template``, given its weights and statistics)."""
        with torch.no_grad():
            for mod, layer in zip(_layers(template), self.layers):
                if layer[0] == "linear":
                    mod.weight.copy_(layer[1][k].t())
                    if layer[2] is not None:
                        mod.bias.copy_(layer[2][k, 0])
                elif layer[0] == "conv":
                    mod.weight.copy_(layer[1].chunk(self.K)[k])
                    mod.bias.copy_(layer[2].chunk(self.K)[k])
                elif layer[0] == "bn":
                    for name, t in zip(("weight", "bias", "running_mean", "running_var"), layer[1:5]):
                        getattr(mod, name).copy_(t[k])
                    mod.num_batches_tracked.fill_(self.steps)
        return template

    def scores(self, x: torch.Tensor, batch_size: int, amp: bool) -> torch.Tensor:
        """Eval-mode scores (K, N) of inputs (K, N, …), ``batch_size`` rows per member at a time."""
        if x.shape[1] == 0:
            return x.new_zeros(x.shape[:2])
        with torch.inference_mode(), torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=amp):
            return torch.cat([full_precision(self(x[:, i:i + batch_size], train=False))
                              for i in range(0, x.shape[1], batch_size)], 1)


def _pad(index_lists, device):
    """Index lists of unequal lengths → (K, width) indices and a 0/1 mask (None if all equal)."""
    width = max(len(i) for i in index_lists)
    if all(len(i) == width for i in index_lists):
        return torch.stack(list(index_lists)), None
    idx = torch.zeros(len(index_lists), width, dtype=torch.long, device=device)
    mask = torch.zeros(len(index_lists), width, device=device)
    for k, i in enumerate(index_lists):
        idx[k, :len(i)], mask[k, :len(i)] = i, 1.0
    return idx, mask


def _stack_shared(tensors):
    """Stack per-member tensors; one shared tensor (e.g. the common U) as a view."""
    if all(t is tensors[0] for t in tensors[1:]):
        return tensors[0].expand(len(tensors), *tensors[0].shape)
    return torch.stack(tensors)


def checkpoint_path(cfg: TrainConfig, seeds) -> Path:
    return Path(cfg.checkpoint_dir) / f"{cfg.method}-seeds{'_'.join(map(str, seeds))}.pt"


def check_stackable(cfg: TrainConfig, data=None) -> None:
    """Raise :class:`NotStackable` when ``cfg`` (and ``data``, if given) cannot run stacked."""
    if cfg.method not in VECTORIZED_METHODS or cfg.record_u_losses:
        raise NotStackable(f"vectorised seeds support methods {VECTORIZED_METHODS} without "
                           f"record_u_losses; got method {cfg.method!r}: use train() per seed")
    if data is not None and not torch.is_tensor(data.x_u):
        raise NotStackable("vectorised seeds need dense inputs (these are sparse): use train() per seed")


def train_seeds(make_data, seeds, config: TrainConfig | None = None, **overrides) -> list[RunResult]:
    """Train one member per seed (data ``make_data(seed)``), all in one stacked model.

    Same results as ``[train(make_data(s), config, seed=s) for s in seeds]`` up to
    floating-point rounding on CPU (on CUDA, dropout masks come from other streams).
    Supports dense inputs, uPU / nnPU / aaPU, and checkpoints like :func:`train`.
    Raises :class:`NotStackable` for what it cannot stack.
    """
    cfg = TrainConfig(**{**asdict(config or TrainConfig()), **overrides})
    check_stackable(cfg)
    device = resolve_device(cfg.device)
    amp = cfg.amp if cfg.amp is not None else device.type == "cuda"
    datas = []
    for s in seeds:                # keep one copy of what every seed shares (U, the test set)
        d = make_data(s).to(device)
        check_stackable(cfg, d)
        for name in ("x_u", "x_test", "y_test") if datas else ():
            first = getattr(datas[0], name)
            if getattr(d, name).shape == first.shape and torch.equal(getattr(d, name), first):
                setattr(d, name, first)
        datas.append(d)
    if len({(len(d.x_p), len(d.x_u), len(d.x_test)) for d in datas}) != 1:
        raise NotStackable("vectorised seeds need data of the same sizes for every seed")
    K, priors = len(seeds), [d.prior for d in datas]
    prior = priors[0] if len(set(priors)) == 1 else torch.tensor(priors, device=device)
    kwargs = dict(cfg.model_kwargs)
    if cfg.model == "news_mlp":
        kwargs.setdefault("in_features", math.prod(datas[0].x_u.shape[1:]))
    nets, batch_gens, dropout_gens = [], [], []
    for s in seeds:                           # exactly what train() does for each seed
        torch.manual_seed(s)
        batch_gens.append(torch.Generator(device).manual_seed(s))
        nets.append(build_model(cfg.model, **kwargs))
        dropout_gens.append(torch.Generator(device))
        if device.type == "cpu":              # continue train()'s global stream
            dropout_gens[-1].set_state(torch.get_rng_state())
        else:
            dropout_gens[-1].manual_seed(s)
    model = StackedNet(nets, device, dropout_gens, channels_last=True)
    forward = torch.compile(model.__call__, dynamic=True) if cfg.compile else model
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    x_p = _stack_shared([d.x_p for d in datas])
    x_u = _stack_shared([d.x_u for d in datas])
    x_test, y_test = _stack_shared([d.x_test for d in datas]), _stack_shared([d.y_test for d in datas])
    selected = [SelectedSet(len(d.x_u), d.u_labeled, d.u_labels, cfg.allow_repick) for d in datas]
    members = torch.arange(K, device=device)[:, None]
    ell = get_loss(cfg.selection_loss)
    rows, first, offset = [[] for _ in seeds], 1, 0.0
    if cfg.checkpoint_dir:
        path = checkpoint_path(cfg, seeds)
        identity = {**checkpoint.fingerprint(cfg, datas[0]), "seeds": list(seeds),
                    "data": [checkpoint.fingerprint(cfg, d)["data"] for d in datas]}
        state = checkpoint.load(path, identity)
        if state is not None:
            with torch.no_grad():
                for t, saved in zip(model.parameters() + model.buffers(), state["tensors"]):
                    t.copy_(saved)
            model.steps = state["steps"]
            opt.load_state_dict(state["optimizer"])
            for sel, s, g, dg, r in zip(selected, state["selected"], batch_gens, dropout_gens, state["rng"]):
                sel.load_state_dict(s)
                g.set_state(r["batches"])
                dg.set_state(r["dropout"])
            rows, first = state["history"], state["epoch"] + 1
            offset = rows[0][-1]["wall_time"]
    start = time.perf_counter() - offset
    for epoch in progress(range(first, cfg.epochs + 1), cfg.progress, desc=f"{cfg.method} × {K} seeds",
                          leave=False):
        lr = cfg.lr_at(epoch)
        for group in opt.param_groups:
            group["lr"] = lr
        per_member = [stratified_batches(x_p.shape[1], x_u.shape[1], sel.indices, cfg.batch_size, g)
                      for sel, g in zip(selected, batch_gens)]
        sums = torch.zeros(K, 4, device=device)
        for batch in zip(*per_member):
            bp, bu = torch.stack([b[0] for b in batch]), torch.stack([b[1] for b in batch])
            bs, s_mask = _pad([b[2] for b in batch], device)
            real_rows = [len(b[0]) + len(b[1]) + len(b[2]) for b in batch]      # known on the host
            x = torch.cat([x_p[members, bp], x_u[members, bu], x_u[members, bs]], 1)
            mask = None if s_mask is None else torch.cat(
                [torch.ones(K, bp.shape[1] + bu.shape[1], device=device), s_mask], 1)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
                g = full_precision(forward(x, mask, rows=real_rows))
            g_p, g_u, g_s = g.split([bp.shape[1], bu.shape[1], bs.shape[1]], 1)
            risk = method_risk(cfg, g_p, g_u, g_s, prior, s_mask)
            opt.zero_grad(set_to_none=True)
            risk.objective.sum().backward()
            opt.step()
            sums += torch.stack([risk.value, risk.positive, risk.negative, risk.corrected.float()], 1)
        means = (sums / len(per_member[0])).tolist()
        g_test = model.scores(x_test, cfg.eval_batch_size, amp)
        metrics = torch.stack([zero_one_error(g_test, y_test),
                               torch.stack([roc_auc(g_test[k], y_test[k]) for k in range(K)])], 1).tolist()
        if cfg.method == "aapu" and epoch >= cfg.select_from and cfg.n_select > 0:
            losses = ell(-model.scores(x_u, cfg.eval_batch_size, amp))
            for k in range(K):
                selected[k].update(losses[k], cfg.n_select, epoch)
        for k, seed in enumerate(seeds):
            if not all(math.isfinite(v) for v in means[k]):
                raise FloatingPointError(f"seed {seed}: the {cfg.method} risk became {means[k][0]} "
                                         f"at epoch {epoch} — lower the learning rate")
            rows[k].append({"method": cfg.method, "seed": seed, "epoch": epoch, "lr": lr,
                            "risk": means[k][0], "risk_positive": means[k][1],
                            "risk_negative": means[k][2], "corrected_fraction": means[k][3],
                            "test_error": metrics[k][0], "test_auc": metrics[k][1],
                            "n_selected": len(selected[k]), "purity": selected[k].purity,
                            "wall_time": time.perf_counter() - start})
        if cfg.checkpoint_dir and (epoch % cfg.checkpoint_every == 0 or epoch == cfg.epochs):
            checkpoint.save(path, {
                "fingerprint": identity, "epoch": epoch, "steps": model.steps,
                "tensors": [t.detach().clone() for t in model.parameters() + model.buffers()],
                "optimizer": opt.state_dict(), "selected": [s.state_dict() for s in selected],
                "rng": [{"batches": g.get_state(), "dropout": dg.get_state()}
                        for g, dg in zip(batch_gens, dropout_gens)],
                "history": rows})
    return [RunResult(pd.DataFrame(r), model.unstack(k, nets[k]).to(device), selected[k], replace(cfg, seed=s))
            for k, (r, s) in enumerate(zip(rows, seeds))]
