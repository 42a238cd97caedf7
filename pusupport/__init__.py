"""pusupport — the code behind the aaPU reproduction book.

Modules: ``losses`` (Eqs. 2–3), ``risks`` (uPU, nnPU, aaPU), ``selection``
(Algorithm 1, lines 7–9), ``data`` (PU problems, §4.1's synthetic set),
``models`` (the paper's networks), ``training`` (the loop), ``records``
(histories and summaries on disk).
"""
from .data import PUData, synthetic
from .losses import get_loss, logistic_loss, sigmoid_loss
from .models import build_model
from .risks import Risk, aapu_risk, nnpu_risk, upu_risk
from .selection import SelectedSet, top_losses, unlabeled_losses
from .training import RunResult, TrainConfig, train

__version__ = "0.1.0"
__all__ = ["PUData", "synthetic", "get_loss", "logistic_loss", "sigmoid_loss", "build_model",
           "Risk", "aapu_risk", "nnpu_risk", "upu_risk", "SelectedSet", "top_losses",
           "unlabeled_losses", "RunResult", "TrainConfig", "train"]
