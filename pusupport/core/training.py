"""The training loop for every method (paper Algorithm 1) — one loop for K ≥ 1 members.

Data stay on the training device as tensors; a mini-batch is an index gather.
Each epoch: stratified mini-batches of P, U and S (line 3); one Adam step per
batch on the method's risk; evaluation on the test set; then, for a selecting
method from epoch ``select_from`` on, the selection of lines 7–9. ``train`` runs
one seed; ``train_seeds`` runs K seeds as one stacked network (the same maths);
``train_grid`` runs several settings × K seeds as one stacked network, the settings
differing in values (π, the loss, n_select, …), not in shapes.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

import pandas as pd
import torch

from . import checkpoint
from .batches import dry_run_batch, stratified_batches
from .config import DRY_RUN_ROWS, TrainConfig, merge
from .problem import PUData
from .members import SingleModel, StackedModels
from .forks import TrunkStates, data_keys, fork_epoch, pick, trunk_epoch, with_trunks
from .groups import stack_groups
from .evaluation import (Scored, ULosses, final_wrong, test_metrics, thresholds, validation_risks,
                         view_errors)
from .methods import Batch, EpochEnd, optimiser_at
from .models import full_precision
from .progress import progress, run_label
from .runtime import resolve, resolve_device
from .selection import SelectedSet
from .stacking import NotStackable

__all__ = ["TrainConfig", "RunResult", "train", "train_seeds", "train_grid", "fit", "fit_shared",
           "resolve_device"]

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
    return train_grid(make_data, seeds, [cfg])[0]


def train_grid(make_data, seeds, configs: list[TrainConfig]) -> list[list[RunResult]]:
    """Every config of ``configs`` on every seed, all as one stacked network (config-major:
    ``out[i][j]`` is config i on seed j). The configs may differ in
    :data:`~pusupport.core.groups.PER_MEMBER`;
    ``make_data``: seed → PUData, or one such function per config (e.g. another π).

    Each member is the same maths as its own run, ``train(make_data(s), config, seed=s)``,
    up to floating-point rounding; the stack amortises the per-step overhead of small
    networks, and an aaPU run shares its first epochs with the nnPU run of its settings
    (:func:`fit_shared`). Raises :class:`~pusupport.core.stacking.NotStackable` for what
    cannot be stacked.
    """
    makes = list(make_data) if isinstance(make_data, (list, tuple)) else [make_data] * len(configs)
    built: dict = {}                         # each function's data for a seed, built once
    for make in makes:
        for s in seeds:
            if (id(make), s) not in built:
                built[id(make), s] = make(s)
    datas = [[built[id(make), s] for s in seeds] for make in makes]
    return fit_shared(datas, list(seeds), list(configs), stacked=True, together=True)


def _epoch_row(cfg, seed, epoch, lr, means, metrics, selected, train_error) -> dict:
    row = {"method": cfg.method, "seed": seed, "epoch": epoch, "lr": lr,
           "risk": means[0], "risk_positive": means[1], "risk_negative": means[2],
           "corrected_fraction": means[3], "test_error": metrics[0], "test_auc": metrics[1],
           "test_ap": metrics[2]}
    if train_error is not None:
        row["train_error"] = train_error
    return {**row, "n_selected": len(selected), "purity": selected.purity}


def fit(datas: list[PUData], seeds: list[int], cfgs: TrainConfig | list[TrainConfig],
        stacked: bool, start: dict | None = None, stop: int | None = None) -> list[RunResult] | dict:
    """The loop: train member k on ``datas[k]`` with seed ``seeds[k]`` and config ``cfgs[k]``
    (one config: every member's), K ≥ 1. ``start``: a state to go on from, another run's
    at its epoch (:func:`~pusupport.core.forks.pick`; a checkpoint of this run, when there
    is one, wins); ``stop``: the last epoch to train, whose state (the checkpoint's) is
    returned instead of the results."""
    cfgs = list(cfgs) if isinstance(cfgs, (list, tuple)) else [cfgs] * len(seeds)
    cfg, runtime = cfgs[0], resolve(cfgs[0])           # the settings every member shares
    device, amp, K = runtime.device, runtime.bf16, len(seeds)
    groups = stack_groups(cfgs, datas, seeds, device)
    for g in groups:
        if g.method.mixes_inputs and not torch.is_tensor(datas[0].x_p):
            raise ValueError(f"{g.method.label} mixes input rows (MixUp), which needs dense rows; "
                             "these are sparse (e.g. tf-idf): choose a method that does not, such "
                             "as aapu or nnpu")
        if stacked and not g.method.stacks:
            raise NotStackable(f"method {g.cfg.method!r} cannot be stacked: use train() per seed")
        if g.method.optimiser and len(groups) > 1:
            raise NotStackable(f"{g.method.label} sets its own rates: it needs a stack of its own settings")
    members = (StackedModels if stacked else SingleModel)(datas, seeds, cfg, runtime)
    batch_gens = [torch.Generator(runtime.generator_device).manual_seed(s) for s in seeds]
    opt = torch.optim.Adam(members.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay,
                           fused=True)
    selected = [SelectedSet(len(d.x_u), d.u_in_p.to(device), d.u_truth.to(device),
                            c.allow_repick) for d, c in zip(datas, cfgs)]
    n_p, n_u, n_test = len(datas[0].x_p), len(datas[0].x_u), len(datas[0].x_test)
    y_test = torch.stack([d.y_test.to(device) for d in datas])
    rows, u_losses, first, offset, saved, branch = [[] for _ in seeds], [{} for _ in seeds], 1, 0.0, None, []
    if cfg.checkpoint_dir:
        runs = [g.cfg for g in groups]
        path = checkpoint.path_for(runs, seeds, stop)
        identity = checkpoint.fingerprint(runs, datas, seeds, stop)
        saved = checkpoint.load(path, identity)
    if saved is None and start is not None:
        saved, branch = start, start["branch"]   # a new branch makes the fork epoch's selection
    if saved is not None:
        members.load_state_dict(saved["members"])
        opt.load_state_dict(saved["optimizer"])
        members.set_rng_state(saved["rng"]["members"])
        for k, (sel, s, g, r) in enumerate(zip(selected, saved["selected"], batch_gens, saved["rng"]["batches"])):
            if not (branch and branch[k]):
                sel.load_state_dict(s)
            g.set_state(r)
        for g, state in zip(groups, saved["method_state"]):
            g.state = {k: v.to(device) for k, v in state.items()}
        rows = [[{**row, "method": c.method} for row in h] for h, c in zip(saved["history"], cfgs)]
        u_losses, first = saved["u_losses"], saved["epoch"] + 1
        offset = rows[0][-1]["wall_time"]
    start_time = time.perf_counter() - offset
    label = run_label(cfg.method, seeds, len(groups))
    if first > 1 and not branch:
        print(f"{label}: resumed from epoch {first - 1} of {cfg.epochs} ({path})")
    epochs = [e for e in cfg.visited_epochs(first) if stop is None or e <= stop]
    bar = progress(epochs, cfg.progress, desc=label, leave=False)
    threshold = None, None                   # (each member's decision threshold, its epoch)
    rows_scored = DRY_RUN_ROWS if cfg.dry_run else None
    supervised = groups[0].method.supervised
    stopping = [bool(gr.method.stop) for gr in groups for _ in range(gr.start, gr.stop)]
    last = cfg.visited_epochs()[-1]          # the last epoch (a dry run's last visited one)

    def scores(x):                           # a method's second forward pass
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
            return full_precision(members.train_scores_of_view(x))

    def end_epoch(epoch, losses, ends):        # Algorithm 1, lines 7–9, for members ``ends``
        for gr in groups:
            if gr.method.end_epoch and all(ends[gr.rows]):
                gr.method.end_epoch(EpochEnd(epoch, gr.cfg, selected[gr.rows], gr.state,
                                             lambda r=gr.rows, loss=gr.cfg.selection_loss: losses(loss)[r]))

    def state(epoch) -> dict:
        return {"epoch": epoch, "members": members.state_dict(), "optimizer": opt.state_dict(),
                "selected": [s.state_dict() for s in selected],
                "rng": {"members": members.rng_state(), "batches": [g.get_state() for g in batch_gens]},
                "method_state": [g.state for g in groups], "history": rows, "u_losses": u_losses}

    if any(branch):                          # the fork epoch's selection, for the new runs
        end_epoch(first - 1, ULosses(Scored(members, cfg.eval_batch_size, amp, rows_scored), n_u,
                                     device), branch)
        for k in (k for k in range(K) if branch[k]):
            rows[k][-1].update(n_selected=len(selected[k]), purity=selected[k].purity)
    for epoch in bar:
        lr, decay, fresh = optimiser_at(groups[0].method, groups[0].cfg, epoch)
        if fresh:                            # the method's next stage: a new Adam
            opt.state.clear()
        for group in opt.param_groups:
            group["lr"], group["weight_decay"] = lr, decay
        per_member = [[tuple(i.to(device) for i in b) for b in
                       stratified_batches(n_p, n_u, sel.indices, cfg.batch_size, g)]
                      for sel, g in zip(selected, batch_gens)]
        sums = torch.zeros(K, 4, device=device)
        steps = list(zip(*per_member))[:cfg.steps_in(epoch)]
        if cfg.dry_run:
            steps = [dry_run_batch(batch) for batch in steps]
        for batch in steps:
            x, sizes, s_mask, index_u = members.batch_inputs(batch)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
                g = full_precision(members.train_scores(x))
            g_p, g_u, g_s = g.split(sizes, 1)
            risks = [gr.method.risk(Batch(
                g_p[gr.rows], g_u[gr.rows], g_s[gr.rows], None if s_mask is None else s_mask[gr.rows],
                gr.prior, gr.cfg, index_u[gr.rows], gr.state,
                lambda x=x, r=gr.rows: [t[r] for t in members.member_view(x).split(sizes, 1)],
                scores)) for gr in groups]
            opt.zero_grad(set_to_none=True)
            sum(r.objective.sum() for r in risks).backward()
            opt.step()
            sums += torch.cat([torch.stack([r.value, r.positive, r.negative, r.corrected.float()],
                                           -1).reshape(-1, 4) for r in risks])
        means = (sums / len(steps) if steps else torch.full_like(sums, math.nan)).tolist()
        for k, (seed, m) in enumerate(zip(seeds, means if steps else [])):
            if not all(math.isfinite(v) for v in m):
                raise FloatingPointError(
                    f"seed {seed}: the {cfgs[k].method} risk became {m[0]} at epoch {epoch}: "
                    "training diverged — lower the learning rate or check the inputs for NaN")
        metrics, train_errors, viewed = [[math.nan] * 3] * K, [None] * K, [{}] * K
        scored = Scored(members, cfg.eval_batch_size, amp, rows_scored)
        if cfg.evaluates_at(epoch) and n_test > 0:
            threshold = thresholds(groups, scored), epoch
            metrics = test_metrics(scored("x_test"), y_test, threshold[0])
        if datas[0].x_val_p is not None:     # the held-out PU split's criterion (no labels)
            held = validation_risks(groups, scored) if cfg.evaluates_at(epoch) else [math.nan] * K
            viewed = [{"val_risk": v} for v in held]
        restores = stopping if cfg.evaluates_at(epoch) else [False] * K
        if (epoch == last or any(restores)) and n_test > 0:   # views: U scored once a run, or
            # at each evaluation of a member whose recipe may restore an evaluated model
            viewed = [{**h, **v, "test_wrong": w} if epoch == last or r else h for h, v, w, r in
                      zip(viewed, view_errors(groups, scored, scored("x_test"), y_test),
                          final_wrong(scored("x_test"), y_test, threshold[0]), restores)]
        if supervised:
            train_errors = [math.nan] * K
            if cfg.evaluates_at(epoch):
                g_p, g_n = scored("x_p"), scored("x_u")
                wrong = (g_p <= 0).sum(1) + (g_n > 0).sum(1)
                train_errors = (wrong.double() / (g_p.shape[1] + g_n.shape[1])).tolist()
        losses = ULosses(scored, n_u, device)
        if epoch in cfg.record_u_losses:
            for k, c in enumerate(cfgs):
                u_losses[k][epoch] = losses(c.selection_loss)[k, :losses.n].cpu()   # U's first rows in a dry run
        end_epoch(epoch, losses, [True] * K)
        wall = time.perf_counter() - start_time
        for k, seed in enumerate(seeds):
            rows[k].append({**_epoch_row(cfgs[k], seed, epoch, lr, means[k], metrics[k], selected[k],
                                         train_errors[k]), **viewed[k], "wall_time": wall})
        shown = rows[0][-1]["test_error"]
        bar.set_postfix(**({"S": len(selected[0])} if groups[0].method.selects else {}),
                        **({} if math.isnan(shown) else {"test_error": f"{shown:.4f}"}))
        if cfg.checkpoint_dir and (epoch % cfg.checkpoint_every == 0 or epoch in (cfg.epochs, stop)):
            checkpoint.save(path, {"fingerprint": identity, **state(epoch)})
    if stop is not None and stop < cfg.epochs:
        return state(stop)
    final = (threshold[0] if threshold[1] == cfg.epochs else      # the last evaluation's, if last
             thresholds(groups, Scored(members, cfg.eval_batch_size, amp, rows_scored)))
    final = [0.0] * K if final is None else final.tolist()
    return [RunResult(pd.DataFrame(r), model, sel, replace(c, seed=s), u, t)
            for r, model, sel, c, s, u, t in zip(rows, members.models(), selected, cfgs, seeds,
                                                  u_losses, final)]


def fit_shared(datas: list[list], seeds: list, cfgs: list[TrainConfig], stacked: bool,
               together: bool, states: TrunkStates | None = None) -> list[list]:
    """:func:`fit` of runs — run i is ``cfgs[i]`` on ``datas[i]`` (one PUData per seed of
    ``seeds``) — each branch forked from its trunk at its first selection instead of trained
    from the start (:func:`~pusupport.core.forks.with_trunks`: a branch without its trunk
    among the runs trains its first epochs as that trunk, once); each run's results.

    ``together``: every run and seed in one network (settings stacked), the branches of a
    fork epoch joining the runs trained up to it; else each trunk its own network (its seeds
    stacked when ``stacked``), trained to each fork epoch of its branches, which go on from
    there. ``states``: where trunks' states at fork epochs are kept between calls — a trunk
    kept there at a fork epoch goes on from it instead of training to it (together: at its
    first, in a network of its own), and each trunk's state at each fork epoch it trains to
    (a trunk run's own included, :func:`~pusupport.core.forks.trunk_epoch`) is kept there.
    """
    K, n = len(seeds), len(cfgs)
    cfgs, parent, data_of = with_trunks(data_keys(datas), list(cfgs))
    datas = [datas[i] for i in data_of]
    at = {i: fork_epoch(cfgs[i]) for i, p in enumerate(parent) if p is not None}
    forks_at = {t: sorted({e for b, e in at.items() if parent[b] == t})
                for t in {p for p in parent if p is not None}}
    if states is not None:                   # a trunk run keeps its state where a branch would fork
        for i in range(n):
            if parent[i] is None and (own := trunk_epoch(cfgs[i])) is not None:
                forks_at[i] = sorted({*forks_at.get(i, ()), own})

    def stage(runs, state=None, stop=None):
        out = fit([d for i in runs for d in datas[i]], list(seeds) * len(runs),
                  [cfgs[i] for i in runs for _ in seeds], stacked, state, stop)
        return out if stop else [out[j * K:(j + 1) * K] for j in range(len(runs))]

    def stored(t, epoch):                    # the trunk's state at ``epoch``, if kept
        return None if states is None else states.get(cfgs[t], list(seeds), datas[t], stacked, epoch)

    def keep(active, state, epoch):          # each trunk's state at this fork epoch, for later
        for t in active:
            if states is not None and epoch in forks_at.get(t, ()):
                states.put(cfgs[t], list(seeds), datas[t], stacked, epoch,
                           pick(state, [active.index(t) * K + j for j in range(K)], [False] * K))

    def grow(runs, state=None):             # ``runs`` as one network, branches joining it
        active = [i for i in runs if parent[i] is None]
        for epoch in sorted({e for t in active for e in forks_at.get(t, ())}):
            if state is None or state["epoch"] < epoch:
                state = stage(active, state, epoch)
                keep(active, state, epoch)
            grown = sorted([i for i in active if i < n or epoch < forks_at[i][-1]]
                           + [i for i in runs if at.get(i) == epoch])
            state = pick(state, [active.index(i if i in active else parent[i]) * K + j
                                 for i in grown for j in range(K)],
                         [i not in active for i in grown for _ in range(K)])
            active = grown
        return dict(zip(active, stage(active, state)))

    out: dict = {}
    if together:                             # a trunk kept at its first fork: its own network
        apart = {t: s for t in range(len(cfgs)) if t in forks_at
                 and (s := stored(t, forks_at[t][0])) is not None}
        for t, state in apart.items():
            out.update(grow([t, *(b for b in at if parent[b] == t)],
                            pick(state, list(range(K)), [False] * K)))
        rest = [i for i in range(len(cfgs)) if i not in apart and parent[i] not in apart]
        out.update(grow(rest) if rest else {})
        return [out[i] for i in range(n)]
    for t in (t for t in range(len(cfgs)) if parent[t] is None):
        state = None
        for epoch in forks_at.get(t, ()):
            if (found := stored(t, epoch)) is not None:
                state = pick(found, list(range(K)), [False] * K)
            else:
                state = stage([t], state, epoch)
                keep([t], state, epoch)
            for b in (b for b, e in at.items() if parent[b] == t and e == epoch):
                out[b] = stage([b], pick(state, list(range(K)), [True] * K))[0]
            state = pick(state, list(range(K)), [False] * K)
        if t < n:
            out[t] = stage([t], state)[0]
    return [out[i] for i in range(n)]
