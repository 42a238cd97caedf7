"""A trained classifier saved with everything needed to predict: weights, model spec,
the input's shape and preprocessing, the prior it was trained with, and class names."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from ..core.config import ModelConfig
from ..core.models import build_model, predict

FORMAT = "pusupport-model/1"


@dataclass
class SavedModel:
    """A trained g with what predicting needs; scores g(x) > ``threshold`` mean positive
    (0 unless the method places it from the training data: nnPUSB, VPU); ``prior`` is None
    for a method that never reads π.

    ``preprocessing``: {"kind": "images", "image_size": (H, W), "channels": C} (uint8
    pixels scaled to [0, 1]) or {"kind": "features", "columns": [...]}.
    """

    model: torch.nn.Module
    spec: ModelConfig
    input_shape: tuple
    preprocessing: dict
    prior: float | None
    method: str = "aapu"
    classes: list = field(default_factory=list)
    positive_classes: list = field(default_factory=list)
    threshold: float = 0.0

    def _check(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.as_tensor(x)
        x = x.float().div_(255) if x.dtype == torch.uint8 else x.float()
        if tuple(x.shape[1:]) != tuple(self.input_shape):
            raise ValueError(f"this model takes inputs of shape {tuple(self.input_shape)} per row, "
                             f"got {tuple(x.shape[1:])}: "
                             + ("pass image_size/--image-size to resize the images to "
                                f"{tuple(self.input_shape[1:])}" if self.preprocessing.get("kind") == "images"
                                else "give the table the columns the model was trained on"))
        if not torch.isfinite(x).all():
            raise ValueError("the inputs hold NaN or inf values: remove or impute them first")
        return x

    def scores(self, x, batch_size: int = 4096) -> torch.Tensor:
        """g(x) for each row (eval mode)."""
        device = next(self.model.parameters()).device
        return predict(self.model, self._check(x).to(device), batch_size).cpu()

    def probabilities(self, x) -> torch.Tensor:
        """σ(g(x)): with the logistic loss, an estimate of p(y = +1 | x)."""
        return torch.sigmoid(self.scores(x))

    def predict(self, x) -> torch.Tensor:
        """1 for positive (g(x) > threshold), 0 otherwise."""
        return (self.scores(x) > self.threshold).long()


def save_model(path, model: torch.nn.Module, spec: ModelConfig, input_shape, preprocessing: dict,
               prior: float | None, method: str = "aapu", classes=(), positive_classes=(),
               threshold: float = 0.0) -> Path:
    """Write a :class:`SavedModel` to ``path`` (atomically)."""
    from ..core.checkpoint import save
    path = Path(path)
    save(path, {"format": FORMAT, "state": {k: v.cpu() for k, v in model.state_dict().items()},
                "spec": asdict(spec), "input_shape": list(input_shape), "preprocessing": preprocessing,
                "prior": None if prior is None else float(prior), "method": method,
                "classes": [str(c) for c in classes], "threshold": float(threshold),
                "positive_classes": [str(c) for c in positive_classes]})
    return path


#: What a model's inputs are saved as: a model file never ends so.
INPUT_SUFFIXES = (".csv", ".tsv", ".parquet", ".npy", ".npz", ".png", ".jpg", ".jpeg")


def load_model(path, device: str = "cpu") -> SavedModel:
    """The :class:`SavedModel` at ``path``; a missing, truncated or foreign file is an error
    naming it."""
    path = Path(path)
    if path.is_dir() or path.suffix.lower() in INPUT_SUFFIXES:
        raise ValueError(f"{path} is not a pusupport model but inputs (a folder or a table): did you "
                         "swap MODEL and INPUTS? The order is `pusupport predict MODEL INPUTS --csv OUT`")
    if not path.is_file():
        raise FileNotFoundError(f"no saved model at {path}: train one first "
                                "(pusupport train … --out model.pt)")
    try:
        blob = torch.load(path, map_location=device, weights_only=False)
    except Exception as err:
        raise ValueError(f"the saved model {path} cannot be read ({type(err).__name__}): it is not a "
                         "pusupport model, or one cut short while it was written (then train it "
                         "again); nothing was changed") from err
    if not isinstance(blob, dict) or blob.get("format") != FORMAT:
        raise ValueError(f"{path} is not a pusupport model ({FORMAT}): did you pass a "
                         "training checkpoint or another file?")
    spec = ModelConfig(**blob["spec"])
    shape = tuple(blob["input_shape"])
    model = build_model(spec, (1, *shape)).to(device)
    model.load_state_dict(blob["state"])
    return SavedModel(model.eval(), spec, shape, blob["preprocessing"], blob["prior"],
                      blob["method"], blob["classes"], blob["positive_classes"],
                      blob.get("threshold", 0.0))
