"""pusupport — the code behind the aaPU reproduction book.

Modules: ``losses`` (Eqs. 2–3), ``risks`` (PN, uPU, nnPU, aaPU), ``methods`` (the
registry of trained methods), ``selection`` (Algorithm 1, lines 7–9), ``data``,
``datasets`` and ``images`` (PU problems), ``models`` (the paper's networks),
``stacking`` and ``members`` (K seeds as one network), ``config`` (typed settings),
``training`` (the one loop), ``records`` and ``verdicts`` (results and paired
comparisons), ``claims`` (the paper's claims), ``paper``, ``pages``, ``runs`` and
``experiments`` (the book's pages), ``own``, ``saved``, ``cli`` and ``sklearn`` (your
own data: the command line, saved models, a scikit-learn estimator).
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
