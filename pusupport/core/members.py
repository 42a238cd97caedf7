"""The K ≥ 1 models of one training run and their data: all the loop asks of them.

:class:`SingleModel` is one ordinary module (any input, sparse too). :class:`StackedModels`
is K seeds in one :class:`~pusupport.core.stacking.StackedNet`, each member with its own
data, initialisation and dropout stream — the same maths as K single runs (each run's π: the loop).
Both give scores with a leading member dimension, (K, B).
"""
from __future__ import annotations

import torch

from .problem import PUData
from .models import build_model, predict
from .runtime import Runtime
from .sparse import as_model_input, cat_rows
from .stacking import NotStackable, StackedNet


class SingleModel:
    """One model on one data set (K = 1); dropout draws from torch's global generator."""

    K = 1

    def __init__(self, datas: list[PUData], seeds: list[int], cfg, runtime: Runtime):
        (data,), (seed,) = datas, seeds
        torch.manual_seed(seed)
        self.data = data.to(runtime.device)
        self.model = build_model(cfg.model, data.x_u.shape).to(runtime.device)
        self.channels_last = runtime.channels_last and self.data.x_u.dim() == 4
        if self.channels_last:
            self.model = self.model.to(memory_format=torch.channels_last)
        self.forward = torch.compile(self.model, dynamic=True) if cfg.compile else self.model

    def parameters(self) -> list[torch.Tensor]:
        return list(self.model.parameters())

    def batch_inputs(self, batch):
        """The rows of a batch [(P, U, S indices)]: (inputs, sizes, S mask (None), U indices (1, b_u))."""
        (bp, bu, bs), = batch
        d = self.data
        return cat_rows([d.x_p[bp], d.x_u[bu], d.x_u[bs]]), [len(bp), len(bu), len(bs)], None, bu[None]

    def train_scores(self, x) -> torch.Tensor:
        """Training-mode scores (1, B) of rows ``x``."""
        x = as_model_input(x)
        if self.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        self.model.train()
        return self.forward(x)[None]

    def member_view(self, x) -> torch.Tensor:
        """Rows (B, …) as (1, B, …), the layout a method sees."""
        if not torch.is_tensor(x):
            raise TypeError("this method needs the batch's inputs, which are sparse rows here: "
                            "use a method that needs only the scores")
        return x[None]

    def train_scores_of_view(self, x: torch.Tensor) -> torch.Tensor:
        return self.train_scores(x[0])

    def scores(self, part: str, batch_size: int, amp: bool, rows: int | None = None) -> torch.Tensor:
        """Eval-mode scores (1, N) of ``part`` ("x_p", "x_u", "x_test", "x_val_p" or
        "x_val_u"), or of its first ``rows``."""
        x = getattr(self.data, part)
        x = x if rows is None else x[:rows]
        if len(x) == 0:
            return torch.zeros(1, 0, device=self.data.y_test.device)
        return predict(self.model, x, batch_size, amp)[None]

    def state_dict(self) -> dict:
        return self.model.state_dict()

    def load_state_dict(self, state: dict) -> None:
        self.model.load_state_dict(state)

    def rng_state(self) -> dict:
        state = {"torch": torch.get_rng_state()}
        if torch.cuda.is_available():
            state["cuda"] = torch.cuda.get_rng_state_all()
        return state

    def set_rng_state(self, state: dict) -> None:
        torch.set_rng_state(state["torch"])
        if "cuda" in state and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(state["cuda"])

    def models(self) -> list[torch.nn.Module]:
        """The trained model, in the default memory format (as a saved and loaded one is)."""
        return [self.model.to(memory_format=torch.contiguous_format)]


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


class _Rows:
    """Per-member tensors stored once per distinct tensor: ``source`` (U, N, …) holds the
    distinct ones (members built from the same seed share them, whatever their settings),
    ``which`` (K, 1) the row of ``source`` each member reads."""

    def __init__(self, tensors, device):
        first: dict = {}
        for t in tensors:
            first.setdefault(id(t), (len(first), t))
        self.source = torch.stack([t for _, t in first.values()])
        self.which = torch.tensor([first[id(t)][0] for t in tensors], device=device)[:, None]

    def gather(self, index: torch.Tensor) -> torch.Tensor:
        """Rows ``index`` (K, b) of each member: (K, b, …)."""
        return self.source[self.which, index]

    def chunk(self, start: int, stop: int) -> torch.Tensor:
        """Rows ``start:stop`` of every member: (K, stop − start, …)."""
        return self.source[self.which[:, 0], start:stop]

    def __len__(self) -> int:
        return self.source.shape[1]


def check_stackable(data: PUData) -> None:
    """Raise :class:`~pusupport.core.stacking.NotStackable` for data that cannot be stacked."""
    if not torch.is_tensor(data.x_u):
        raise NotStackable("stacked seeds need dense inputs (these are sparse): the seeds run one by one")


class StackedModels:
    """K seeds trained as one stacked network; data of equal sizes, shared tensors kept once."""

    def __init__(self, datas: list[PUData], seeds: list[int], cfg, runtime: Runtime):
        device = runtime.device
        datas = [d.to(device) for d in datas]
        for d in datas:
            check_stackable(d)
            for name in ("x_u", "x_test", "y_test"):      # one copy of what every seed shares
                first = getattr(datas[0], name)
                if getattr(d, name).shape == first.shape and torch.equal(getattr(d, name), first):
                    setattr(d, name, first)
        if len({(len(d.x_p), len(d.x_u), len(d.x_test)) for d in datas}) != 1:
            raise NotStackable("stacked seeds need data of the same sizes for every seed")
        self.K, self.device = len(seeds), device
        self.templates, self.dropout_gens = [], []
        for s in seeds:                           # exactly what a single run does for each seed
            torch.manual_seed(s)
            self.templates.append(build_model(cfg.model, datas[0].x_u.shape))
            gen = torch.Generator(device)
            if runtime.seeded_dropout:
                gen.manual_seed(s)
            else:                                 # continue the single run's global stream
                gen.set_state(torch.get_rng_state())
            self.dropout_gens.append(gen)
        self.net = StackedNet(self.templates, device, self.dropout_gens,
                              channels_last=runtime.channels_last)
        self.forward = torch.compile(self.net.__call__, dynamic=True) if cfg.compile else self.net
        held = ("x_val_p", "x_val_u") if datas[0].x_val_p is not None else ()
        self.data = {name: _Rows([getattr(d, name) for d in datas], device)
                     for name in ("x_p", "x_u", "x_test", *held)}

    def parameters(self) -> list[torch.Tensor]:
        return self.net.parameters()

    def batch_inputs(self, batch):
        """One batch per member: (inputs (K, B, …), sizes, the S padding mask, U indices (K, b_u))."""
        bp, bu = torch.stack([b[0] for b in batch]), torch.stack([b[1] for b in batch])
        bs, s_mask = _pad([b[2] for b in batch], self.device)
        x_p, x_u = self.data["x_p"], self.data["x_u"]
        self._rows = [len(b[0]) + len(b[1]) + len(b[2]) for b in batch]       # known on the host
        self._mask = None if s_mask is None else torch.cat(
            [torch.ones(self.K, bp.shape[1] + bu.shape[1], device=self.device), s_mask], 1)
        x = torch.cat([x_p.gather(bp), x_u.gather(bu), x_u.gather(bs)], 1)
        return x, [bp.shape[1], bu.shape[1], bs.shape[1]], s_mask, bu

    def train_scores(self, x: torch.Tensor) -> torch.Tensor:
        """Training-mode scores (K, B) of the batch's inputs (padded rows masked)."""
        return self.forward(x, self._mask, rows=self._rows)

    def member_view(self, x: torch.Tensor) -> torch.Tensor:
        return x

    def train_scores_of_view(self, x: torch.Tensor) -> torch.Tensor:
        """Training-mode scores (K, B) of other inputs (K, B, …), every row real."""
        return self.forward(x)

    def scores(self, part: str, batch_size: int, amp: bool, rows: int | None = None) -> torch.Tensor:
        rows_ = self.data[part]
        n = len(rows_) if rows is None else min(rows, len(rows_))
        return self.net.scores(rows_.chunk, n, batch_size, amp)

    def state_dict(self) -> dict:
        return {"steps": self.net.steps,
                "tensors": [t.detach().clone() for t in self.net.parameters() + self.net.buffers()]}

    def load_state_dict(self, state: dict) -> None:
        with torch.no_grad():
            for t, saved in zip(self.net.parameters() + self.net.buffers(), state["tensors"]):
                t.copy_(saved)
        self.net.steps = state["steps"]

    def rng_state(self) -> dict:
        return {"dropout": [g.get_state() for g in self.dropout_gens]}

    def set_rng_state(self, state: dict) -> None:
        for g, s in zip(self.dropout_gens, state["dropout"]):
            g.set_state(s)

    def models(self) -> list[torch.nn.Module]:
        return [self.net.unstack(k, m).to(self.device) for k, m in enumerate(self.templates)]

