"""K copies of one network stacked into one — the same maths as K separate networks.

Fully connected activations are (K, B, features) and linear layers batched matrix
products; convolutional activations are (B, K·C, H, W), member k owning channels
k·C … (k+1)·C − 1, and each convolution one grouped convolution. Each layer kind is
a class with ``forward`` (training), ``fold`` (evaluation: BatchNorm folded into the
layer before it) and ``unstack`` (member k back into an ordinary module). A model
declares its layer sequence with ``layers()`` (see :mod:`pusupport.core.models`).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .models import full_precision


class NotStackable(ValueError):
    """These settings or data cannot be stacked; the members train one by one."""


@dataclass
class Pass:
    """What one forward pass of the stacked network knows besides its input.

    ``mask`` (K, B): 1 for real rows, 0 for padding; ``rows[k]``: member k's real rows
    (its first rows); ``gens``: the members' dropout generators.
    """

    K: int
    train: bool
    mask: torch.Tensor | None
    rows: list
    gens: list
    channels_last: bool


def _stack(tensors, device) -> torch.Tensor:
    return torch.stack([t.detach() for t in tensors]).to(device)


class StackedLayer:
    """A layer without parameters: applied to the stacked activations as it is."""

    params: tuple = ()
    buffers: tuple = ()

    def __init__(self, modules, device):
        self.fn = modules[0]

    def forward(self, h, ctx: Pass):
        if not ctx.train and isinstance(self.fn, nn.ReLU):
            return h.relu_()
        return self.fn(h)

    def fold(self, folded: list) -> None:
        folded.append(self)

    def unstack(self, k: int, module: nn.Module, steps: int) -> None:
        pass


class StackedFlatten(StackedLayer):
    """(B, K·C, H, W) → (K, B, C·H·W): from the convolutional part to the linear part."""

    def forward(self, h, ctx: Pass):
        return h.reshape(h.shape[0], ctx.K, -1).transpose(0, 1)


class StackedLinear(StackedLayer):
    """Weights (K, in, out), bias (K, 1, out): h @ W + b as one batched product."""

    def __init__(self, modules, device, weight=None, bias=None):
        if weight is None:
            weight = _stack([m.weight.t() for m in modules], device).requires_grad_()
            bias = (_stack([m.bias[None] for m in modules], device).requires_grad_()
                    if modules[0].bias is not None else None)
        self.weight, self.bias = weight, bias
        self.params = (weight,) if bias is None else (weight, bias)

    def forward(self, h, ctx: Pass):
        return torch.bmm(h, self.weight) if self.bias is None else torch.baddbmm(self.bias, h, self.weight)

    def with_batch_norm(self, scale, shift, running_mean) -> "StackedLinear":
        bias = (self.bias.reshape(running_mean.shape) if self.bias is not None
                else torch.zeros_like(shift))
        return StackedLinear(None, None, self.weight * scale[:, None],
                             ((bias - running_mean) * scale + shift)[:, None])

    def unstack(self, k, module, steps):
        module.weight.copy_(self.weight[k].t())
        if self.bias is not None:
            module.bias.copy_(self.bias[k, 0])


class StackedConv2d(StackedLayer):
    """K convolutions as one grouped convolution; weight (K·C_out, C_in, kh, kw)."""

    def __init__(self, modules, device, channels_last=True, weight=None, bias=None, geometry=None):
        if weight is None:
            first = modules[0]
            if first.groups != 1 or first.dilation != (1, 1):
                raise NotStackable("only plain convolutions (groups=1, dilation=1) can be stacked")
            weight = torch.cat([m.weight.detach() for m in modules]).to(device)
            if channels_last:
                weight = weight.contiguous(memory_format=torch.channels_last)
            weight.requires_grad_()
            bias = torch.cat([m.bias.detach() for m in modules]).to(device).requires_grad_()
            geometry = (first.stride, first.padding)
        self.weight, self.bias, self.geometry = weight, bias, geometry
        self.params = (weight, bias)

    def forward(self, h, ctx: Pass):
        return F.conv2d(h, self.weight, self.bias, *self.geometry, groups=ctx.K)

    def with_batch_norm(self, scale, shift, running_mean) -> "StackedConv2d":
        scale = scale.reshape(-1)
        return StackedConv2d(None, None, weight=self.weight * scale.reshape(-1, 1, 1, 1),
                             bias=(self.bias - running_mean.reshape(-1)) * scale + shift.reshape(-1),
                             geometry=self.geometry)

    def unstack(self, k, module, steps):
        K = len(self.bias) // module.out_channels
        module.weight.copy_(self.weight.chunk(K)[k])
        module.bias.copy_(self.bias.chunk(K)[k])


class _DenseGrad(torch.autograd.Function):
    """Identity whose backward hands on a dense copy of the gradient: BatchNorm's
    backward kernel is several times slower on a channel slice of a larger gradient."""

    @staticmethod
    def forward(ctx, x):
        ctx.fmt = torch.channels_last if x.is_contiguous(memory_format=torch.channels_last) \
            else torch.contiguous_format
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return grad.contiguous(memory_format=ctx.fmt)


class StackedBatchNorm(StackedLayer):
    """Per-member BatchNorm: statistics over each member's real (unmasked) rows."""

    def __init__(self, modules, device):
        self.gamma = _stack([m.weight for m in modules], device).requires_grad_()
        self.beta = _stack([m.bias for m in modules], device).requires_grad_()
        self.running_mean = _stack([m.running_mean for m in modules], device)
        self.running_var = _stack([m.running_var for m in modules], device)
        self.momentum, self.eps = modules[0].momentum, modules[0].eps
        self.params, self.buffers = (self.gamma, self.beta), (self.running_mean, self.running_var)

    def fold(self, folded):
        scale = self.gamma * torch.rsqrt(self.running_var + self.eps)          # (K, C)
        folded[-1] = folded[-1].with_batch_norm(scale, self.beta, self.running_mean)

    def forward(self, h, ctx: Pass):
        rm, rv, momentum, eps = self.running_mean, self.running_var, self.momentum, self.eps
        image = h.dim() == 4
        if ctx.mask is None:                          # no padding: the stock kernel
            stock = lambda x: F.batch_norm(x, rm.view(-1), rv.view(-1), self.gamma.view(-1),  # noqa: E731
                                           self.beta.view(-1), True, momentum, eps)
            if image:                                 # grouped channels as they are
                return stock(h)
            K, B, C = h.shape                         # (K, B, C) → (B, K·C) and back
            return stock(h.transpose(0, 1).reshape(B, K * C)).view(B, K, C).transpose(0, 1)
        # Padding: each member's stock kernel on its real rows (its first ``rows[k]``),
        # zeros on the padded rows (the loss masks them; no gradient reaches them).
        B = h.shape[0] if image else h.shape[1]
        fmt = torch.channels_last if image and ctx.channels_last else torch.contiguous_format
        outs = []
        for k, (x, n) in enumerate(zip(h.chunk(ctx.K, 1) if image else h.unbind(), ctx.rows)):
            y = F.batch_norm(x[:n].contiguous(memory_format=fmt), rm[k], rv[k], self.gamma[k],
                             self.beta[k], True, momentum, eps)
            outs.append(torch.cat([_DenseGrad.apply(y) if image else y, y.new_zeros(B - n, *y.shape[1:])]))
        return torch.cat(outs, 1).contiguous(memory_format=fmt) if image else torch.stack(outs)

    def unstack(self, k, module, steps):
        for name, t in zip(("weight", "bias", "running_mean", "running_var"),
                           (self.gamma, self.beta, self.running_mean, self.running_var)):
            getattr(module, name).copy_(t[k])
        module.num_batches_tracked.fill_(steps)


class StackedDropout(StackedLayer):
    """Each member's mask drawn from its own generator exactly as ``nn.Dropout`` (or
    ``nn.Dropout2d``) draws it for that member's real rows; identity in evaluation."""

    def __init__(self, modules, device):
        self.p, self.per_channel = modules[0].p, isinstance(modules[0], nn.Dropout2d)

    def forward(self, h, ctx: Pass):
        if not ctx.train or self.p == 0:
            return h
        p, K = self.p, ctx.K
        if self.per_channel:                          # one draw per (row, channel)
            B = h.shape[0]
            noise = h.new_ones(B, K, h.shape[1] // K, 1, 1)
            for k, (n, gen) in enumerate(zip(ctx.rows, ctx.gens)):
                noise[:n, k] = h.new_empty(n, noise.shape[2], 1, 1).bernoulli_(1 - p, generator=gen).div_(1 - p)
            return h * noise.view(B, -1, 1, 1)
        noise = h.new_ones(h.shape)
        for k, (n, gen) in enumerate(zip(ctx.rows, ctx.gens)):
            noise[k, :n] = h.new_empty(n, h.shape[2]).bernoulli_(1 - p, generator=gen).div_(1 - p)
        return h * noise


#: The stacked class of each layer kind (the first match wins; order matters for subclasses).
KINDS = ((nn.Linear, StackedLinear), (nn.Conv2d, StackedConv2d),
         ((nn.BatchNorm1d, nn.BatchNorm2d), StackedBatchNorm),
         ((nn.Dropout, nn.Dropout2d), StackedDropout), (nn.Flatten, StackedFlatten),
         ((nn.ReLU, nn.LeakyReLU, nn.Softsign, nn.MaxPool2d, nn.AdaptiveAvgPool2d), StackedLayer))


def stack_layer(modules: list[nn.Module], device, channels_last: bool) -> StackedLayer:
    for kind, cls in KINDS:
        if isinstance(modules[0], kind):
            if cls is StackedConv2d:
                return cls(modules, device, channels_last)
            return cls(modules, device)
    raise NotStackable(f"cannot stack {type(modules[0]).__name__} layers")


class StackedNet:
    """K members of one architecture; ``models[k].layers()`` gives member k's layers."""

    def __init__(self, models: list[nn.Module], device, dropout_gens: list[torch.Generator],
                 channels_last: bool = True):
        self.K, self.steps, self.gens, self.channels_last = len(models), 0, dropout_gens, channels_last
        self.layers = []
        for group in zip(*[m.layers() for m in models]):
            layer = stack_layer(list(group), device, channels_last)
            if isinstance(layer, StackedBatchNorm) and not isinstance(
                    self.layers[-1] if self.layers else None, (StackedLinear, StackedConv2d)):
                raise NotStackable("a BatchNorm must follow a linear layer or convolution to be stacked")
            self.layers.append(layer)

    def parameters(self) -> list[torch.Tensor]:
        return [t for layer in self.layers for t in layer.params]

    def buffers(self) -> list[torch.Tensor]:
        return [t for layer in self.layers for t in layer.buffers]

    def __call__(self, x: torch.Tensor, mask: torch.Tensor | None = None,
                 train: bool = True, rows: list[int] | None = None,
                 folded: list | None = None) -> torch.Tensor:
        """Scores (K, B) of inputs (K, B, …); ``mask`` and ``rows``: see :class:`Pass`;
        ``folded``: the eval-mode layers (:meth:`_folded`), for ``train=False``."""
        self.steps += train
        K, B = x.shape[:2]
        if isinstance(self.layers[0], StackedConv2d):       # images → (B, K·C, H, W)
            h = x.transpose(0, 1).reshape(B, -1, *x.shape[3:])
            if self.channels_last:
                h = h.contiguous(memory_format=torch.channels_last)
        else:                                                # an MLP flattens images
            h = x.reshape(K, B, -1)
        ctx = Pass(K, train, mask, rows or [B] * K, self.gens, self.channels_last)
        for layer in self.layers if train else folded:
            h = layer.forward(h, ctx)
        return h.squeeze(-1)

    def _folded(self) -> list[StackedLayer]:
        folded: list = []
        for layer in self.layers:
            layer.fold(folded)
        return folded

    def unstack(self, k: int, template: nn.Module) -> nn.Module:
        """Member ``k`` as an ordinary module (``template``, given its weights and statistics)."""
        with torch.no_grad():
            for module, layer in zip(template.layers(), self.layers):
                layer.unstack(k, module, self.steps)
        return template

    def scores(self, rows, n: int, batch_size: int, amp: bool) -> torch.Tensor:
        """Eval-mode scores (K, n) of the inputs ``rows(start, stop)`` (K, stop − start, …)
        for ``start:stop`` in 0…n, ``batch_size`` rows at a time across the K members (as one
        model scores them): a member's scores do not depend on the rows scored beside them,
        and the 10-seed §4.1 MLP's activations at 4,096 rows a member (49 MB) left the
        caches, scoring its test set about 1.8× slower than at 512–1,024 a member."""
        if n == 0:
            return torch.zeros(self.K, 0, device=self.layers[0].params[0].device)
        step = max(1, batch_size // self.K)
        with torch.inference_mode(), torch.autocast(self.layers[0].params[0].device.type,
                                                    dtype=torch.bfloat16, enabled=amp):
            folded = self._folded()                 # BatchNorm folded once, not per batch
            return torch.cat([full_precision(self(rows(i, min(i + step, n)), train=False, folded=folded))
                              for i in range(0, n, step)], 1)
