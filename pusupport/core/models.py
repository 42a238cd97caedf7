"""The paper's classifiers g: R^d → R (one real score per input).

``width`` scales every hidden size (1.0 = the published architecture); the CPU
profile uses narrower copies of the CNNs. All models accept a batch and return
shape (batch,).
"""
from __future__ import annotations

import inspect
import math

import torch
from torch import nn
from torch.nn import functional as F


def _w(n: int, width: float) -> int:
    return max(1, round(n * width))


class SyntheticMLP(nn.Module):
    """§4.1's MLP: 2 → 200 → 600 → 1, each hidden layer Linear + BatchNorm + ReLU."""

    def __init__(self, in_features: int = 2, width: float = 1.0):
        super().__init__()
        h1, h2 = _w(200, width), _w(600, width)
        self.net = nn.Sequential(
            nn.Linear(in_features, h1), nn.BatchNorm1d(h1), nn.ReLU(),
            nn.Linear(h1, h2), nn.BatchNorm1d(h2), nn.ReLU(),
            nn.Linear(h2, 1))

    def layers(self) -> list[nn.Module]:
        return list(self.net)

    def forward(self, x):
        return self.net(x.flatten(1) if x.dim() > 2 else x).squeeze(-1)


def _conv(c_in, c_out, k=3, stride=1, padding=1, act=None):
    return [nn.Conv2d(c_in, c_out, k, stride, padding), nn.BatchNorm2d(c_out),
            act if act is not None else nn.ReLU()]


class KiryoCNN(nn.Module):
    """nnPU's CIFAR-10 CNN (Kiryo et al. 2017, Table 2), inputs 3×32×32 in [0, 1].

    3×3 convs 3→96, 96→96, 96→96/2, 96→192, 192→192, 192→192/2, 192→192; 1×1 convs
    192→192, 192→10; each conv + BatchNorm + ReLU; flatten 640 → fc 1000 → fc 1000
    → fc 1 with ReLU between. ``dropout`` (the aaPU paper uses 0.5) acts on the
    input of each of the three fully-connected layers. Other image sizes and channel
    counts (``image_size``, ``in_channels``) change the first convolution and the
    flattened size only (10 · ⌈H/4⌉ · ⌈W/4⌉).
    """

    def __init__(self, width: float = 1.0, dropout: float = 0.0, in_channels: int = 3,
                 image_size=(32, 32)):
        super().__init__()
        a, b, f = _w(96, width), _w(192, width), _w(1000, width)
        h, w = (-(-n // 4) for n in image_size)
        self.features = nn.Sequential(
            *_conv(in_channels, a), *_conv(a, a), *_conv(a, a, stride=2),
            *_conv(a, b), *_conv(b, b), *_conv(b, b, stride=2), *_conv(b, b),
            *_conv(b, b, k=1, padding=0), *_conv(b, 10, k=1, padding=0), nn.Flatten())
        self.classifier = nn.Sequential(
            nn.Dropout(dropout), nn.Linear(10 * h * w, f), nn.ReLU(),
            nn.Dropout(dropout), nn.Linear(f, f), nn.ReLU(),
            nn.Dropout(dropout), nn.Linear(f, 1))

    def layers(self) -> list[nn.Module]:
        return [*self.features, *self.classifier]

    def forward(self, x):
        return self.classifier(self.features(x)).squeeze(-1)


class CoTeachingCNN(nn.Module):
    """Han et al. (2018)'s CNN, used by the aaPU paper on CIFAR-100.

    3×[3×3 conv 128] → maxpool 2 → dropout2d → 3×[3×3 conv 256] → maxpool 2 →
    dropout2d → 3×3 convs 512, 256, 128 without padding → global average pool →
    linear. BatchNorm + LeakyReLU(0.01) after every conv. ``dropout`` is Han et al.'s
    ``dropout_rate`` (their default 0.25; the aaPU paper sets it to 0.5); it is the rate
    of the two Dropout2d layers, and there is no other dropout. Fix: dropout follows
    ``model.eval()`` here, whereas the original applies it at test time too.
    """

    def __init__(self, width: float = 1.0, dropout: float = 0.25, in_channels: int = 3):
        super().__init__()
        c1, c2, c3, c4, c5 = (_w(n, width) for n in (128, 256, 512, 256, 128))

        def block(c_in, c_out, padding=1):
            return _conv(c_in, c_out, padding=padding, act=nn.LeakyReLU(0.01))

        self.features = nn.Sequential(
            *block(in_channels, c1), *block(c1, c1), *block(c1, c1), nn.MaxPool2d(2), nn.Dropout2d(dropout),
            *block(c1, c2), *block(c2, c2), *block(c2, c2), nn.MaxPool2d(2), nn.Dropout2d(dropout),
            *block(c2, c3, 0), *block(c3, c4, 0), *block(c4, c5, 0),
            nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.classifier = nn.Sequential(nn.Linear(c5, 1))

    def layers(self) -> list[nn.Module]:
        return [*self.features, *self.classifier]

    def forward(self, x):
        return self.classifier(self.features(x)).squeeze(-1)


class SparseLinear(nn.Linear):
    """nn.Linear that also takes a torch sparse (CSR or COO) input batch.

    A CSR batch is multiplied as an embedding bag: row i's output is Σ_k x_ik·W[:, k] over
    its words k. The parameter is Wᵀ (``weight_t``, in × out, contiguous) so that the bag
    and the fused Adam step read it in place: with a 130,107-word vocabulary a copy costs
    156 MB at every pass. ``weight`` is the (out, in) view, and state dicts hold ``weight``
    as nn.Linear's do.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        super().__init__(in_features, out_features, bias=bias)
        self.weight_t = nn.Parameter(self._parameters.pop("weight").detach().t().contiguous())

    @property
    def weight(self) -> torch.Tensor:
        return self.weight_t.t()

    def forward(self, x):
        if x.layout == torch.strided:
            return super().forward(x)
        # sparse products have no bf16 kernels: this layer runs in the weight's dtype
        with torch.autocast(x.device.type, enabled=False):
            if x.layout == torch.sparse_csr:
                out = F.embedding_bag(x.col_indices(), self.weight_t, x.crow_indices(),
                                      mode="sum", include_last_offset=True,
                                      per_sample_weights=x.values().to(self.weight_t.dtype))
            else:
                out = torch.sparse.mm(x.to(self.weight_t.dtype), self.weight_t)
        return out if self.bias is None else out + self.bias

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "weight"] = destination.pop(prefix + "weight_t").t()

    def _load_from_state_dict(self, state_dict, prefix, *args):
        if prefix + "weight" in state_dict:
            state_dict[prefix + "weight_t"] = state_dict.pop(prefix + "weight").t()
        super()._load_from_state_dict(state_dict, prefix, *args)


class NewsMLP(nn.Module):
    """nnPU's 20News MLP: d → 300 → 300 → 300 → 1.

    Each hidden layer is Linear without bias + BatchNorm + activation (Softsign as
    in nnPU's Table 2; 'relu' selectable). The first layer accepts sparse input;
    dense inputs with more than two dimensions (images) are flattened.
    """

    ACTIVATIONS = {"softsign": nn.Softsign, "relu": nn.ReLU}

    def __init__(self, in_features: int, width: float = 1.0, activation: str = "softsign",
                 dropout: float = 0.0):
        super().__init__()
        if activation not in self.ACTIVATIONS:
            raise ValueError(f"unknown activation {activation!r}: use one of {sorted(self.ACTIVATIONS)}")
        act, h = self.ACTIVATIONS[activation], _w(300, width)
        self.first = SparseLinear(in_features, h, bias=False)
        self.net = nn.Sequential(
            nn.BatchNorm1d(h), act(), nn.Dropout(dropout),
            nn.Linear(h, h, bias=False), nn.BatchNorm1d(h), act(), nn.Dropout(dropout),
            nn.Linear(h, h, bias=False), nn.BatchNorm1d(h), act(), nn.Dropout(dropout),
            nn.Linear(h, 1))

    def layers(self) -> list[nn.Module]:
        return [self.first, *self.net]

    def forward(self, x):
        if x.layout == torch.strided and x.dim() > 2:
            x = x.flatten(1)
        return self.net(self.first(x)).squeeze(-1)


def full_precision(g: torch.Tensor) -> torch.Tensor:
    """Scores computed under autocast (bf16/fp16) back in float32; others unchanged."""
    return g.float() if g.dtype in (torch.bfloat16, torch.float16) else g


@torch.inference_mode()
def predict(model: nn.Module, x, batch_size: int = 4096, amp: bool = False) -> torch.Tensor:
    """Scores g(x) in eval mode without gradients, ``batch_size`` rows at a time.

    ``x`` may be a tensor or :class:`~pusupport.core.sparse.SparseRows`; ``amp`` runs the
    forward pass under bfloat16 autocast. The model's train/eval mode is restored.
    """
    from .sparse import as_model_input
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device.type
    try:
        with torch.autocast(device, dtype=torch.bfloat16, enabled=amp):
            return torch.cat([full_precision(model(as_model_input(x[i:i + batch_size]))).reshape(-1)
                              for i in range(0, len(x), batch_size)])
    finally:
        model.train(was_training)


MODELS = {"mlp": SyntheticMLP, "kiryo_cnn": KiryoCNN, "coteaching_cnn": CoTeachingCNN,
          "news_mlp": NewsMLP}


def build_model(model, input_shape=None, **kwargs) -> nn.Module:
    """Instantiate ``model`` — a name in ``MODELS`` with ``kwargs``, or a
    :class:`~pusupport.core.config.ModelConfig`. A fully connected first layer takes its size
    from ``input_shape`` (the data's shape, rows first) unless ``in_features`` is given."""
    if hasattr(model, "kwargs"):                      # a ModelConfig
        model, kwargs = model.name, {**model.kwargs(), **kwargs}
    if model not in MODELS:
        raise ValueError(f"unknown model {model!r}: use one of {sorted(MODELS)}")
    cls = MODELS[model]
    takes = inspect.signature(cls).parameters
    if input_shape is not None and "in_features" in takes:
        kwargs.setdefault("in_features", math.prod(input_shape[1:]))
    if input_shape is not None and "in_channels" in takes:
        if len(input_shape) != 4:
            raise ValueError(f"model {model!r} takes images (N, C, H, W); these inputs have shape "
                             f"{tuple(input_shape)}: use an MLP ('mlp' or 'news_mlp') for features")
        kwargs.setdefault("in_channels", input_shape[1])
        if "image_size" in takes:
            kwargs.setdefault("image_size", tuple(input_shape[2:]))
        elif min(input_shape[2:]) < 28:
            raise ValueError(f"model {model!r} needs images of at least 28×28 (three unpadded "
                             f"convolutions after two poolings); got {tuple(input_shape[2:])}: "
                             "use 'kiryo_cnn', or resize with image_size")
    return cls(**kwargs)
