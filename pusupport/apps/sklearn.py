"""A scikit-learn estimator for PU learning, following pulearn's convention.

``PUClassifier().fit(X, s)``: ``s`` is 1 for labelled positives and 0 for unlabelled
points (any two labels work: the larger marks the labelled positives); π (``prior``) is
the positive fraction of the unlabelled rows, estimated with BBE when None. It passes
scikit-learn's own estimator checks (``tests/test_sklearn.py``). For model selection without negatives, :func:`lee_liu_score` (scorer
:data:`lee_liu_scorer`) is Lee & Liu's (2003) recall²/P(ŷ = 1), its recall taken over
the labelled positives (s = 1): it rises with the true F1 score.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.metrics import make_scorer
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from . import own
from ..core.config import TrainConfig, as_model_config
from ..core.methods import get_method, usable_methods
from ..core.problem import from_arrays
from ..core.models import predict as model_scores
from ..core.training import train


class PUClassifier(ClassifierMixin, BaseEstimator):
    """A PU classifier g trained with ``method`` (default aaPU) on dense features.

    ``model``: a model name or dict of ModelConfig fields ("mlp", the §4.1 MLP, by
    default). ``prior=None`` estimates π in ``fit`` (BBE, ``estimator_epochs`` epochs)
    and stores it in ``prior_``; ``prior_estimate_`` holds the interval. A method that
    never reads π (``method="vpu"``) estimates none: ``prior_`` is None.
    """

    def __init__(self, method="aapu", prior=None, model="mlp", epochs=20, batch_size=128, lr=1e-3,
                 weight_decay=1e-4, estimator_epochs=20, device="cpu", seed=0, progress=False):
        self.method = method
        self.prior = prior
        self.model = model
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.weight_decay = weight_decay
        self.estimator_epochs = estimator_epochs
        self.device = device
        self.seed = seed
        self.progress = progress

    def fit(self, X, y):
        """Train on features ``X`` (n, d) and the PU labels ``y`` (pulearn's s): two
        classes, the larger in sorted order (1 of 0/1, 1 of −1/1, or the later name) marks
        the labelled positives, the other the unlabelled points (U)."""
        if self.method not in usable_methods():
            raise ValueError(f"method={self.method!r}: use one of {usable_methods()}")
        X, y = validate_data(self, X, y, dtype=np.float32)
        check_classification_targets(y)
        kind = type_of_target(y, input_name="y", raise_unknown=True)
        if kind != "binary":
            raise ValueError(f"Only binary classification is supported. The type of the target "
                             f"is {kind}: PU labels are two classes — the labelled positives (1) "
                             "and the unlabelled points (0)")
        self.classes_ = np.unique(y)
        if len(self.classes_) != 2:
            raise ValueError(f"y holds {len(self.classes_)} class {self.classes_.tolist()}: PU "
                             "learning needs both the labelled positives (1) and unlabelled "
                             "points (0)")
        labeled = np.flatnonzero(y == self.classes_[1])
        spec = as_model_config(self.model)
        base = TrainConfig(method=self.method, model=spec, batch_size=self.batch_size, lr=self.lr,
                           lr_schedule={}, weight_decay=self.weight_decay, device=self.device,
                           seed=self.seed, progress=self.progress)
        data = from_arrays(X, labeled, prior=0.5)      # π placeholder until given or estimated
        if get_method(self.method).needs_prior:
            config = replace(own.estimator_config(X.shape), epochs=self.estimator_epochs)
            data, self.prior_estimate_ = own.choose_prior(data, self.prior, config, self.seed,
                                                          self.device)
            self.prior_ = data.prior
        else:                                         # VPU: no π given, none estimated
            self.prior_, self.prior_estimate_ = None, None
        cfg = own.train_config(len(data.x_u), spec, self.method, self.epochs, base=base,
                               batch_size=self.batch_size, lr=self.lr)
        result = train(data, cfg)
        self.model_, self.history_ = result.model.eval(), result.history
        self.threshold_ = result.threshold
        return self

    def decision_function(self, X) -> np.ndarray:
        """g(x) − threshold_ (0 unless the method places its threshold from the training
        data, as nnPUSB and VPU do): positive means ``classes_[1]``."""
        check_is_fitted(self, "model_")
        X = validate_data(self, X, dtype=np.float32, reset=False)
        device = next(self.model_.parameters()).device
        x = torch.from_numpy(np.array(X, dtype=np.float32, order="C"))
        return model_scores(self.model_, x.to(device)).cpu().numpy() - self.threshold_

    def predict_proba(self, X) -> np.ndarray:
        """(n, 2), columns in ``classes_`` order: σ(−f(x)), σ(f(x)), f the decision function."""
        p = 1 / (1 + np.exp(-self.decision_function(X).astype(np.float64)))
        return np.column_stack([1 - p, p])

    def predict(self, X) -> np.ndarray:
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False       # PU: labelled positives vs U
        tags.classifier_tags.poor_score = True         # s is not y: U holds positives too
        return tags


def lee_liu_score(s, y_pred) -> float:
    """recall²/P(ŷ = 1): recall over the labelled positives (s = 1), P(ŷ = 1) over all rows."""
    s, y_pred = np.asarray(s), np.asarray(y_pred)
    positive_rate = float((y_pred == 1).mean())
    if positive_rate == 0 or not (s == 1).any():
        return 0.0
    recall = float((y_pred[s == 1] == 1).mean())
    return recall ** 2 / positive_rate


#: The scorer for ``GridSearchCV(..., scoring=lee_liu_scorer)`` with ``y = s``.
lee_liu_scorer = make_scorer(lee_liu_score)
