"""K seeds of the §4.1 MLP trained at once — the same maths as K separate runs.

Each member keeps its own initialisation, data, mini-batch order, BatchNorm
statistics, nnPU branch, optimiser state and selected set S; the work is done by
batched matrix products over a leading member dimension. Members' S batches differ
in size, so they are padded and masked — in the risk and in BatchNorm's statistics.
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict

import pandas as pd
import torch
from torch import nn

from .models import build_model
from .progress import progress
from .risks import aapu_risk, nnpu_risk, upu_risk
from .selection import SelectedSet
from .losses import get_loss
from .training import RunResult, TrainConfig, resolve_device, stratified_batches

VECTORIZED_METHODS = ("upu", "nnpu", "aapu")


class StackedMLP:
    """K copies of an ``nn.Sequential`` of Linear / BatchNorm1d / ReLU layers, stacked."""

    def __init__(self, nets: list[nn.Sequential], device):
        self.layers, self.steps = [], 0
        for layer_group in zip(*[list(n) for n in nets]):
            first = layer_group[0]
            if isinstance(first, nn.Linear):
                w = torch.stack([l.weight.detach().t() for l in layer_group]).to(device)
                b = torch.stack([l.bias.detach()[None] for l in layer_group]).to(device)
                self.layers.append(("linear", w.requires_grad_(), b.requires_grad_()))
            elif isinstance(first, nn.BatchNorm1d):
                g = torch.stack([l.weight.detach()[None] for l in layer_group]).to(device)
                b = torch.stack([l.bias.detach()[None] for l in layer_group]).to(device)
                rm = torch.stack([l.running_mean for l in layer_group]).to(device)
                rv = torch.stack([l.running_var for l in layer_group]).to(device)
                self.layers.append(("bn", g.requires_grad_(), b.requires_grad_(), rm, rv,
                                    first.momentum, first.eps))
            elif isinstance(first, nn.ReLU):
                self.layers.append(("relu",))
            else:
                raise TypeError(f"cannot stack {type(first).__name__}: only Linear, BatchNorm1d, ReLU")

    def parameters(self):
        return [t for layer in self.layers for t in layer[1:3] if torch.is_tensor(t)]

    def __call__(self, x: torch.Tensor, mask: torch.Tensor | None = None, train: bool = True):
        """Scores (K, B) of inputs (K, B, d); ``mask`` (K, B) marks real rows (BatchNorm).

        In eval mode each BatchNorm is folded into the linear layer before it.
        """
        if not train:
            return self._eval(x)
        self.steps += 1
        h = x
        m = (torch.ones(h.shape[:2], device=h.device, dtype=h.dtype) if mask is None else mask)[..., None]
        n = m.sum(1)                                                      # (K, 1)
        for layer in self.layers:
            if layer[0] == "linear":
                h = torch.baddbmm(layer[2], h, layer[1])
            elif layer[0] == "relu":
                h = torch.relu(h)
            else:
                _, gamma, beta, rm, rv, momentum, eps = layer
                mean = (h * m).sum(1) / n                                 # (K, C)
                centred = h - mean[:, None]
                var = (centred.square() * m).sum(1) / n                   # biased, as BatchNorm
                with torch.no_grad():
                    rm.mul_(1 - momentum).add_(momentum * mean)
                    rv.mul_(1 - momentum).add_(momentum * var * n / (n - 1))
                h = torch.addcmul(beta, centred, gamma * torch.rsqrt(var[:, None] + eps))
        return h.squeeze(-1)

    @torch.no_grad()
    def _eval(self, x: torch.Tensor) -> torch.Tensor:
        h, pending = x, None
        layers = self.layers + [("end",)]
        for layer, nxt in zip(layers, layers[1:]):
            if layer[0] == "linear":
                w, b = layer[1], layer[2]
                if nxt[0] == "bn":                  # fold BatchNorm into this layer
                    _, gamma, beta, rm, rv, _, eps = nxt
                    scale = gamma * torch.rsqrt(rv[:, None] + eps)       # (K, 1, C)
                    w, b = w * scale, (b - rm[:, None]) * scale + beta
                h = torch.baddbmm(b, h, w)
            elif layer[0] == "relu":
                h = h.relu_()
        return h.squeeze(-1)

    def unstack(self, k: int, template: nn.Module) -> nn.Module:
        """Member ``k`` as an ordinary module (a copy of ``template`` with its weights)."""
        layers = [l for l in template.net if not isinstance(l, nn.ReLU)]
        with torch.no_grad():
            for mod, layer in zip(layers, [l for l in self.layers if l[0] != "relu"]):
                if layer[0] == "linear":
                    mod.weight.copy_(layer[1][k].t())
                    mod.bias.copy_(layer[2][k, 0])
                else:
                    mod.weight.copy_(layer[1][k, 0])
                    mod.bias.copy_(layer[2][k, 0])
                    mod.running_mean.copy_(layer[3][k])
                    mod.running_var.copy_(layer[4][k])
                    mod.num_batches_tracked.fill_(self.steps)
        return template


def _pad(index_lists, device):
    width = max((len(i) for i in index_lists), default=0)
    idx = torch.zeros(len(index_lists), width, dtype=torch.long)
    mask = torch.zeros(len(index_lists), width)
    for k, i in enumerate(index_lists):
        idx[k, :len(i)], mask[k, :len(i)] = i, 1.0
    return idx.to(device), mask.to(device)


def train_seeds(make_data, seeds, config: TrainConfig | None = None, **overrides) -> list[RunResult]:
    """Train one member per seed (data ``make_data(seed)``), all in one stacked model.

    Same results as ``[train(make_data(s), config, seed=s) for s in seeds]`` up to
    floating-point rounding. Supports the ``mlp`` model and uPU / nnPU / aaPU.
    """
    from sklearn.metrics import roc_auc_score
    cfg = TrainConfig(**{**asdict(config or TrainConfig()), **overrides})
    if cfg.model != "mlp" or cfg.method not in VECTORIZED_METHODS:
        raise ValueError(f"vectorised seeds support model 'mlp' with methods {VECTORIZED_METHODS}; "
                         f"got model {cfg.model!r}, method {cfg.method!r}: use train() per seed")
    if cfg.checkpoint_dir or cfg.record_u_losses:
        raise ValueError("vectorised seeds do not checkpoint or record U losses: use train() per seed")
    device = resolve_device(cfg.device)
    datas = [make_data(s).to(device) for s in seeds]
    shapes = {(len(d.x_p), len(d.x_u), len(d.x_test), d.prior) for d in datas}
    if len(shapes) != 1:
        raise ValueError("vectorised seeds need data of the same sizes and prior for every seed")
    prior, K = datas[0].prior, len(seeds)
    nets, gens = [], []
    for s in seeds:
        torch.manual_seed(s)
        gens.append(torch.Generator().manual_seed(s))
        nets.append(build_model(cfg.model, **cfg.model_kwargs))
    model = StackedMLP([n.net for n in nets], device)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    x_p, x_u = torch.stack([d.x_p for d in datas]), torch.stack([d.x_u for d in datas])
    x_test, y_test = torch.stack([d.x_test for d in datas]), torch.stack([d.y_test for d in datas])
    selected = [SelectedSet(len(d.x_u), d.u_labeled, d.u_labels, cfg.allow_repick) for d in datas]
    members = torch.arange(K, device=device)[:, None]
    ell = get_loss(cfg.selection_loss)
    rows, start = [[] for _ in seeds], time.perf_counter()
    for epoch in progress(range(1, cfg.epochs + 1), cfg.progress, desc=f"{cfg.method} × {K} seeds",
                          leave=False):
        lr = cfg.lr_at(epoch)
        for group in opt.param_groups:
            group["lr"] = lr
        per_member = [stratified_batches(len(x_p[0]), len(x_u[0]), sel.indices.cpu(), cfg.batch_size, g)
                      for sel, g in zip(selected, gens)]
        sums = torch.zeros(K, 4, device=device)
        for batch in zip(*per_member):
            bp = torch.stack([b[0] for b in batch]).to(device)
            bu = torch.stack([b[1] for b in batch]).to(device)
            bs, s_mask = _pad([b[2] for b in batch], device)
            x = torch.cat([x_p[members, bp], x_u[members, bu], x_u[members, bs]], 1)
            mask = torch.cat([torch.ones(K, bp.shape[1] + bu.shape[1], device=device), s_mask], 1)
            g = model(x, mask, train=True)
            g_p, g_u, g_s = g.split([bp.shape[1], bu.shape[1], bs.shape[1]], 1)
            if cfg.method == "upu":
                risk = upu_risk(g_p, g_u, prior, cfg.loss)
            elif cfg.method == "nnpu":
                risk = nnpu_risk(g_p, g_u, prior, cfg.loss, cfg.beta, cfg.gamma)
            else:
                risk = aapu_risk(g_p, g_u, g_s, prior, cfg.loss, cfg.beta, cfg.gamma, s_mask)
            opt.zero_grad(set_to_none=True)
            risk.objective.sum().backward()
            opt.step()
            sums += torch.stack([risk.value, risk.positive, risk.negative, risk.corrected.float()], 1)
        means = (sums / len(per_member[0])).tolist()
        with torch.inference_mode():
            g_test = model(x_test, train=False)
            losses = (ell(-model(x_u, train=False))
                      if cfg.method == "aapu" and epoch >= cfg.select_from and cfg.n_select > 0 else None)
        for k, seed in enumerate(seeds):
            if not all(math.isfinite(v) for v in means[k]):
                raise FloatingPointError(f"seed {seed}: the {cfg.method} risk became {means[k][0]} "
                                         f"at epoch {epoch} — lower the learning rate")
            truth = (y_test[k] > 0).cpu().numpy()
            if losses is not None:
                selected[k].update(losses[k], cfg.n_select, epoch)
            rows[k].append({"method": cfg.method, "seed": seed, "epoch": epoch, "lr": lr,
                            "risk": means[k][0], "risk_positive": means[k][1],
                            "risk_negative": means[k][2], "corrected_fraction": means[k][3],
                            "test_error": float(((g_test[k] > 0) != (y_test[k] > 0)).float().mean()),
                            "test_auc": float(roc_auc_score(truth, g_test[k].cpu().numpy())),
                            "n_selected": len(selected[k]), "purity": selected[k].purity,
                            "wall_time": time.perf_counter() - start})
    return [RunResult(pd.DataFrame(r), model.unstack(k, nets[k]), selected[k],
                      TrainConfig(**{**asdict(cfg), "seed": s}))
            for k, (r, s) in enumerate(zip(rows, seeds))]
