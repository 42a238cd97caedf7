"""The training loop for every method (paper Algorithm 1) — one loop for K ≥ 1 members.

Data stay on the training device as tensors; a mini-batch is an index gather.
Each epoch: stratified mini-batches of P, U and S (line 3); one Adam step per
batch on the method's risk; evaluation on the test set; then, for a selecting
method from epoch ``select_from`` on, the selection of lines 7–9. ``train`` runs
one seed; ``train_seeds`` runs K seeds as one stacked network (the same maths).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

import pandas as pd
import torch

from . import checkpoint
from .config import DRY_RUN_ROWS, TrainConfig, merge
from .problem import PUData
from .members import SingleModel, StackedModels
from .methods import Batch, EpochEnd, get_method
from .metrics import average_precision, roc_auc, zero_one_error
from .models import full_precision
from .progress import progress
from .runtime import resolve, resolve_device
from .selection import SelectedSet, negative_losses

__all__ = ["TrainConfig", "RunResult", "train", "train_seeds", "fit", "resolve_device",
           "stratified_batches"]


def n_batches(n_p: int, n_u: int, batch_size: int) -> int:
    """Mini-batches an epoch: ⌈(n_p + n_u)/batch_size⌉, capped at n_p so that every batch
    has a labelled positive (the loop's rule, also the cost model's)."""
    return max(1, min(n_p, math.ceil((n_p + n_u) / batch_size)))


def stratified_batches(n_p: int, n_u: int, s_index: torch.Tensor, batch_size: int,
                       gen: torch.Generator):
    """Shuffle P, U and S and cut each into the same number of mini-batches.

    Every batch then holds P, U and S in the proportions of the whole set
    (Algorithm 1, line 3), :func:`n_batches` of them. Indices are drawn on ``gen``'s device.
    """
    n = n_batches(n_p, n_u, batch_size)
    dev = gen.device
    p = torch.randperm(n_p, generator=gen, device=dev).tensor_split(n)
    u = torch.randperm(n_u, generator=gen, device=dev).tensor_split(n)
    s_index = s_index.to(dev)
    s = s_index[torch.randperm(len(s_index), generator=gen, device=dev)].tensor_split(n)
    return list(zip(p, u, s))


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
    threshold: float = 0.0                   # g > threshold is positive (the method's rule)

    @property
    def picks(self) -> pd.DataFrame:
        """Every selection made: epoch, rank, U index, whether new, loss, true label."""
        return pd.DataFrame(self.selected.picks,
                            columns=["epoch", "rank", "index", "new", "loss", "true_label"])


def _config(config: TrainConfig | None, overrides: dict) -> TrainConfig:
    return merge(config or TrainConfig(), overrides, "train")


def train(data: PUData, config: TrainConfig | None = None, **overrides) -> RunResult:
    """Train one model on ``data`` with ``config`` (fields may be overridden by keyword)."""
    cfg = _config(config, overrides)
    return fit([data], [cfg.seed], cfg, stacked=False)[0]


def train_seeds(make_data, seeds, config: TrainConfig | None = None, **overrides) -> list[RunResult]:
    """Train one member per seed (data ``make_data(seed)``), all in one stacked network.

    Same results as ``[train(make_data(s), config, seed=s) for s in seeds]`` up to
    floating-point rounding on CPU (on CUDA, dropout masks come from other streams).
    Raises :class:`~pusupport.core.stacking.NotStackable` for what cannot be stacked.
    """
    cfg = _config(config, overrides)
    if not get_method(cfg.method).stacks:
        from .stacking import NotStackable
        raise NotStackable(f"method {cfg.method!r} cannot be stacked: use train() per seed")
    return fit([make_data(s) for s in seeds], list(seeds), cfg, stacked=True)


def _epoch_row(cfg, seed, epoch, lr, means, metrics, selected, train_error) -> dict:
    row = {"method": cfg.method, "seed": seed, "epoch": epoch, "lr": lr,
           "risk": means[0], "risk_positive": means[1], "risk_negative": means[2],
           "corrected_fraction": means[3], "test_error": metrics[0], "test_auc": metrics[1],
           "test_ap": metrics[2]}
    if train_error is not None:
        row["train_error"] = train_error
    return {**row, "n_selected": len(selected), "purity": selected.purity}


def thresholds(method, members, prior, batch_size: int, amp: bool, rows: int | None = None):
    """Each member's decision threshold (K,): the method's, from its training P and U
    scores (eval mode), or None (the sign of g)."""
    if method.threshold is None:
        return None
    return method.threshold(members.scores("x_p", batch_size, amp, rows),
                            members.scores("x_u", batch_size, amp, rows), prior)


def test_metrics(members, y_test: torch.Tensor, batch_size: int, amp: bool,
                 rows: int | None = None, threshold=None) -> list:
    """[test error, test ROC AUC, test average precision] of each member (eval mode,
    ``batch_size`` rows at a time) on the test set or its first ``rows``; the error counts
    g > ``threshold`` (K,) as positive (AUC and AP do not depend on a threshold)."""
    g_test = members.scores("x_test", batch_size, amp, rows)
    y_test = y_test[:, :g_test.shape[1]]
    decided = g_test if threshold is None else g_test - threshold[:, None]
    ranked = [torch.stack([metric(g_test[k], y_test[k]) for k in range(len(g_test))])
              for metric in (roc_auc, average_precision)]
    return torch.stack([zero_one_error(decided, y_test), *ranked], 1).tolist()


def fit(datas: list[PUData], seeds: list[int], cfg: TrainConfig, stacked: bool) -> list[RunResult]:
    """The loop: train member k on ``datas[k]`` with seed ``seeds[k]`` (K ≥ 1)."""
    method, runtime = get_method(cfg.method), resolve(cfg)
    if method.mixes_inputs and not torch.is_tensor(datas[0].x_p):
        raise ValueError(f"{method.label} mixes input rows (MixUp), which needs dense rows; these "
                         "are sparse (e.g. tf-idf): choose a method that does not, such as aapu or nnpu")
    device, amp, K = runtime.device, runtime.bf16, len(seeds)
    members = (StackedModels if stacked else SingleModel)(datas, seeds, cfg, runtime)
    batch_gens = [torch.Generator(runtime.generator_device).manual_seed(s) for s in seeds]
    opt = torch.optim.Adam(members.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay,
                           fused=True)
    selected = [SelectedSet(len(d.x_u), d.u_in_p.to(device), d.u_truth.to(device),
                            cfg.allow_repick) for d in datas]
    n_p, n_u, n_test = len(datas[0].x_p), len(datas[0].x_u), len(datas[0].x_test)
    state = method.init_state(n_u, list(seeds), device) if method.init_state else {}
    y_test = torch.stack([d.y_test.to(device) for d in datas])
    rows, u_losses, first, offset = [[] for _ in seeds], [{} for _ in seeds], 1, 0.0
    if cfg.checkpoint_dir:
        path, identity = checkpoint.path_for(cfg, seeds), checkpoint.fingerprint(cfg, datas, seeds)
        saved = checkpoint.load(path, identity)
        if saved is not None:
            members.load_state_dict(saved["members"])
            opt.load_state_dict(saved["optimizer"])
            members.set_rng_state(saved["rng"]["members"])
            for sel, s, g, r in zip(selected, saved["selected"], batch_gens, saved["rng"]["batches"]):
                sel.load_state_dict(s)
                g.set_state(r)
            state = {k: v.to(device) for k, v in saved["method_state"].items()}
            rows, u_losses, first = saved["history"], saved["u_losses"], saved["epoch"] + 1
            offset = rows[0][-1]["wall_time"]
    start = time.perf_counter() - offset
    label = f"{cfg.method} seed {seeds[0]}" if K == 1 else f"{cfg.method} × {K} seeds"
    if first > 1:
        print(f"{label}: resumed from epoch {first - 1} of {cfg.epochs} ({path})")
    bar = progress(cfg.visited_epochs(first), cfg.progress, desc=label, leave=False)
    threshold = None, None                   # (each member's decision threshold, its epoch)
    rows_scored = DRY_RUN_ROWS if cfg.dry_run else None

    def scores(x):                           # a method's second forward pass
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
            return full_precision(members.train_scores_of_view(x))

    for epoch in bar:
        lr = cfg.lr_at(epoch)
        for group in opt.param_groups:
            group["lr"] = lr
        per_member = [[tuple(i.to(device) for i in b) for b in
                       stratified_batches(n_p, n_u, sel.indices, cfg.batch_size, g)]
                      for sel, g in zip(selected, batch_gens)]
        sums = torch.zeros(K, 4, device=device)
        steps = list(zip(*per_member))[:cfg.steps_in(epoch)]
        for batch in steps:
            x, sizes, s_mask, index_u = members.batch_inputs(batch)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
                g = full_precision(members.train_scores(x))
            g_p, g_u, g_s = g.split(sizes, 1)
            risk = method.risk(Batch(g_p, g_u, g_s, s_mask, members.prior, cfg, index_u, state,
                                     lambda x=x: members.member_view(x).split(sizes, 1), scores))
            opt.zero_grad(set_to_none=True)
            risk.objective.sum().backward()
            opt.step()
            sums += torch.stack([risk.value, risk.positive, risk.negative,
                                 risk.corrected.float()], -1).reshape(K, 4)
        means = (sums / len(steps) if steps else torch.full_like(sums, math.nan)).tolist()
        for seed, m in zip(seeds, means if steps else []):
            if not all(math.isfinite(v) for v in m):
                raise FloatingPointError(
                    f"seed {seed}: the {cfg.method} risk became {m[0]} at epoch {epoch}: training "
                    "diverged — lower the learning rate or check the inputs for NaN")
        metrics, train_errors = [[math.nan] * 3] * K, [None] * K
        if cfg.evaluates_at(epoch) and n_test > 0:
            threshold = thresholds(method, members, members.prior, cfg.eval_batch_size, amp,
                                   rows_scored), epoch
            metrics = test_metrics(members, y_test, cfg.eval_batch_size, amp, rows_scored, threshold[0])
        if method.supervised:
            train_errors = [math.nan] * K
            if cfg.evaluates_at(epoch):
                g_p = members.scores("x_p", cfg.eval_batch_size, amp, rows_scored)
                g_n = members.scores("x_u", cfg.eval_batch_size, amp, rows_scored)
                wrong = (g_p <= 0).sum(1) + (g_n > 0).sum(1)
                train_errors = (wrong.double() / (g_p.shape[1] + g_n.shape[1])).tolist()
        scored = _UScores(members, cfg, amp, rows_scored, n_u, device)
        if epoch in cfg.record_u_losses:
            losses = scored()
            for k in range(K):
                u_losses[k][epoch] = losses[k, :scored.n].cpu()      # U's first rows in a dry run
        if method.end_epoch:
            method.end_epoch(EpochEnd(epoch, cfg, selected, state, scored))
        wall = time.perf_counter() - start
        for k, seed in enumerate(seeds):
            rows[k].append({**_epoch_row(cfg, seed, epoch, lr, means[k], metrics[k], selected[k],
                                         train_errors[k]), "wall_time": wall})
        bar.set_postfix(test_error=f"{rows[0][-1]['test_error']:.4f}", S=len(selected[0]))
        if cfg.checkpoint_dir and (epoch % cfg.checkpoint_every == 0 or epoch == cfg.epochs):
            checkpoint.save(path, {
                "fingerprint": identity, "epoch": epoch, "members": members.state_dict(),
                "optimizer": opt.state_dict(), "selected": [s.state_dict() for s in selected],
                "rng": {"members": members.rng_state(), "batches": [g.get_state() for g in batch_gens]},
                "method_state": state, "history": rows, "u_losses": u_losses})
    final = (threshold[0] if threshold[1] == cfg.epochs else      # the last evaluation's, if last
             thresholds(method, members, members.prior, cfg.eval_batch_size, amp, rows_scored))
    final = [0.0] * K if final is None else final.tolist()
    return [RunResult(pd.DataFrame(r), model, sel, replace(cfg, seed=s), u, t)
            for r, model, sel, s, u, t in zip(rows, members.models(), selected, seeds, u_losses,
                                               final)]


class _UScores:
    """U's losses as negatives (K, n_u) after an epoch, scored once on first call; a dry
    run scores U's first rows (``n``) and leaves the others at ``-inf`` (never picked)."""

    def __init__(self, members, cfg, amp, rows, n_u, device):
        self.members, self.cfg, self.amp, self.rows, self.n_u, self.device = (
            members, cfg, amp, rows, n_u, device)
        self.losses, self.n = None, None

    def __call__(self) -> torch.Tensor:
        if self.losses is None:
            scored = negative_losses(self.members.scores("x_u", self.cfg.eval_batch_size, self.amp,
                                                         self.rows), self.cfg.selection_loss)
            self.n = scored.shape[1]
            self.losses = torch.full((len(scored), self.n_u), -math.inf, device=self.device)
            self.losses[:, :self.n] = scored
        return self.losses
