"""pusupport — the code behind the aaPU reproduction book, in four layers, each importing
only those below it: ``core`` (losses, risks, the method registry, selection, networks,
stacked seeds, the one training loop), ``data`` (the synthetic problem, the real data sets,
image folders), ``apps`` (your own data: the command line, prior estimation, saved models,
a scikit-learn estimator) and ``book`` (the paper's settings, pages, cost, claims,
verdicts, figures). The names below are the public API.
"""
from .core.config import DataConfig, ModelConfig, PageConfig, Settings, TrainConfig
from .core.problem import PUData
from .data.synthetic import synthetic
from .core.losses import get_loss, logistic_loss, sigmoid_loss
from .core.methods import METHODS
from .core.models import build_model
from .core.risks import Risk, aapu_risk, nnpu_risk, pn_risk, upu_risk
from .core.selection import SelectedSet, top_losses, unlabeled_losses
from .core.training import RunResult, train, train_seeds

__version__ = "0.1.0"
__all__ = ["DataConfig", "ModelConfig", "PageConfig", "Settings", "TrainConfig", "PUData",
           "synthetic", "get_loss", "logistic_loss", "sigmoid_loss", "METHODS", "build_model",
           "Risk", "aapu_risk", "nnpu_risk", "pn_risk", "upu_risk", "SelectedSet", "top_losses",
           "unlabeled_losses", "RunResult", "train", "train_seeds"]
