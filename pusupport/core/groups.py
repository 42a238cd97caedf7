"""The runs of one stacked network: consecutive members trained with one config.

Members may differ in :data:`PER_MEMBER` (values, not shapes: π, the loss, n_select, …);
each group of equal configs gets its own π and its method's state. The loop
(:func:`~pusupport.core.training.fit`) computes each group's risk on its rows.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace

import torch

from .config import TrainConfig
from .methods import get_method
from .stacking import NotStackable

#: Settings the members of one stacked network may differ in (values, not shapes); the
#: others must be equal (``checkpoint_dir``: the first member's is used).
PER_MEMBER = ("method", "loss", "beta", "gamma", "n_select", "select_from", "selection_loss",
              "allow_repick", "s_weight", "correction", "method_settings", "seed", "checkpoint_dir")


@dataclass
class Group:
    """Consecutive members trained with one config: rows ``start:stop`` of the stack, their
    π (one number, or a tensor when it differs by member) and the method's state."""

    cfg: TrainConfig
    start: int
    stop: int
    prior: float | torch.Tensor
    state: dict

    @property
    def method(self):
        return get_method(self.cfg.method)

    @property
    def rows(self) -> slice:
        return slice(self.start, self.stop)


def stack_groups(cfgs: list[TrainConfig], datas, seeds, device) -> list[Group]:
    """The members' configs as runs of equal configs (:data:`PER_MEMBER` but the seed);
    refuses configs that differ in anything else, or methods that cannot share a stack."""
    shared = [f.name for f in fields(TrainConfig) if f.name not in PER_MEMBER]
    differ = [n for n in shared if len({repr(getattr(c, n)) for c in cfgs}) > 1]
    if differ:
        raise NotStackable(f"stacked runs must share {differ}: train these runs apart")
    if len({(tuple(c.visited_epochs()), tuple(c.steps_in(e) for e in c.visited_epochs()))
            for c in cfgs}) > 1:
        raise NotStackable("stacked runs of a dry run must visit the same epochs: train them apart")
    out: list[Group] = []
    for k, cfg in enumerate(cfgs):
        if out and replace(out[-1].cfg, seed=0) == replace(cfg, seed=0, checkpoint_dir=out[-1].cfg.checkpoint_dir):
            out[-1].stop = k + 1
        else:
            out.append(Group(cfg, k, k + 1, 0.0, {}))
    methods = {g.method for g in out}
    if len(out) > 1 and len({m.supervised for m in methods}) > 1:
        raise NotStackable("supervised and PU runs cannot share a stack: train them apart")
    if len(out) > 1 and any(m.mixes_inputs for m in methods):
        raise NotStackable("a method that mixes input rows needs a stack of its own settings")
    for g in out:
        priors = [d.prior for d in datas[g.rows]]
        g.prior = priors[0] if len(set(priors)) == 1 else torch.tensor(priors, device=device)
        if g.method.init_state:
            g.state = g.method.init_state(len(datas[0].x_u), list(seeds[g.rows]), device)
    return out
