"""A scikit-learn estimator for PU learning, following pulearn's convention.

``PUClassifier().fit(X, s)``: ``s`` marks the labelled positives by 1 as pulearn does —
1 against 0, 1 against −1, True against False — or, for two labels without a 1 (names, say),
by the one given as ``positive_label``; π (``prior``) is the positive fraction of
the unlabelled rows, estimated with BBE when None. Whatever the labels,
``decision_function(X) > 0`` means positive and ``classes_[1]`` is what ``predict`` calls a
positive: with numeric (or boolean) labels the two values of ``s`` (pulearn's reading, the
unlabelled value standing for negative), with names ``"negative"`` and ``"positive"`` — a
point predicted negative is never called "unlabeled". It passes scikit-learn's own estimator
checks (``tests/test_sklearn.py``) but those that fit on two names without saying which is
labelled. For model selection without negatives, :func:`lee_liu_score` (scorer
:func:`lee_liu_scorer`) is Lee & Liu's (2003) recall²/P(ŷ = positive), its recall taken
over the labelled positives: it rises with the true F1 score.
"""
from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from . import own
from ..core.config import as_model_config
from ..core.methods import get_method, usable_methods
from ..core.problem import from_arrays
from ..core.models import predict as model_scores


class PUClassifier(ClassifierMixin, BaseEstimator):
    """A PU classifier g trained with ``method`` (default aaPU) on dense features.

    ``model``: a model name or dict of ModelConfig fields. Left None, ``model``,
    ``epochs``, ``batch_size``, ``lr``, ``weight_decay`` and ``estimator_epochs`` are what
    ``pusupport train`` chooses for the data's size (:func:`~pusupport.apps.own.train_config`).
    ``prior=None`` estimates π in ``fit`` (BBE, the P-vs-U classifier stopped at its best
    held-out epoch) and stores it in ``prior_``; ``prior_estimate_`` holds the interval. A method that
    never reads π (``method="vpu"``) estimates none: ``prior_`` is None.
    ``positive_label``: the label of the labelled positives ("auto": 1 or True, in
    pulearn's conventions); ``positive_`` holds it after ``fit``. A method whose recipe
    stops early (``method="robustpu"``) holds a PU split out of training and keeps its
    model at the stop; ``stopped_`` says where (:func:`~pusupport.apps.own.fit`; else "").
    """

    def __init__(self, method="aapu", prior=None, model=None, epochs=None, batch_size=None, lr=None,
                 weight_decay=None, estimator_epochs=None, device="cpu", seed=0, progress=False,
                 positive_label="auto"):
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
        self.positive_label = positive_label

    def fit(self, X, y):
        """Train on features ``X`` (n, d) and the PU labels ``y`` (pulearn's s): two
        classes, the labelled positives (1 of 0/1 or −1/1, True of False, or
        ``positive_label``) and the unlabelled points (U)."""
        from ..core.runtime import LayoutNote
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LayoutNote)      # the book's build speed, not yours
            return self._fit(X, y)

    def _fit(self, X, y):
        if self.method not in usable_methods():
            raise ValueError(f"method={self.method!r}: use one of {usable_methods()}")
        X, y = validate_data(self, X, y, dtype=np.float32)
        check_classification_targets(y)
        kind = type_of_target(y, input_name="y", raise_unknown=True)
        if kind != "binary":
            raise ValueError(f"Only binary classification is supported. The type of the target "
                             f"is {kind}: PU labels are two classes — the labelled positives (1) "
                             "and the unlabelled points (0)")
        labels = np.unique(y)
        if len(labels) != 2:
            raise ValueError(f"y holds {len(labels)} class {labels.tolist()}: PU "
                             "learning needs both the labelled positives (1) and unlabelled "
                             "points (0)")
        self.positive_ = _positive(labels, self.positive_label)
        other = labels[labels != self.positive_]
        self.classes_ = (np.concatenate([other, [self.positive_]]) if labels.dtype.kind in "biuf"
                         else np.array(["negative", "positive"]))
        labeled = np.flatnonzero(y == self.positive_)
        spec = own.default_model(X.shape) if self.model is None else as_model_config(self.model)
        data = from_arrays(X, labeled, prior=0.5)      # π placeholder until given or estimated
        if get_method(self.method).needs_prior:
            config = own.estimator_config(X.shape, n_rows=len(X))
            if self.estimator_epochs is not None:
                config = replace(config, epochs=self.estimator_epochs)
            data, self.prior_estimate_ = own.choose_prior(data, self.prior, config, self.seed,
                                                          self.device)
            self.prior_ = data.prior
        else:                                         # VPU: no π given, none estimated
            self.prior_, self.prior_estimate_ = None, None
        given = {k: v for k, v in (("batch_size", self.batch_size), ("lr", self.lr),
                                   ("weight_decay", self.weight_decay)) if v is not None}
        cfg = own.train_config(len(data.x_u), spec, self.method, self.epochs, device=self.device,
                               seed=self.seed, progress=self.progress, **given)
        result, self.stopped_ = own.fit(data, cfg)
        self.model_, self.history_, self.config_ = result.model.eval(), result.history, cfg
        self.threshold_ = result.threshold
        problem = own.check_trained(result, data)      # the command line refuses such a model
        if problem:
            warnings.warn(f"PUClassifier: {problem}", UserWarning, stacklevel=3)
        return self

    def decision_function(self, X) -> np.ndarray:
        """g(x) − threshold_ (0 unless the method places its threshold from the training
        data, as nnPUSB and VPU do): above 0 means positive, ``classes_[1]``."""
        check_is_fitted(self, "model_")
        X = validate_data(self, X, dtype=np.float32, reset=False)
        device = next(self.model_.parameters()).device
        x = torch.from_numpy(np.array(X, dtype=np.float32, order="C"))
        return model_scores(self.model_, x.to(device)).cpu().numpy() - self.threshold_

    def predict_proba(self, X) -> np.ndarray:
        """(n, 2), columns in ``classes_`` order: σ(−f(x)), σ(f(x)), f the decision function;
        the second, under the logistic loss, the trained risk's estimate of P(y = +1 | x)."""
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


def _positive(classes: np.ndarray, given):
    """The label of the labelled positives among the two ``classes``: ``given``, or with
    "auto" the number 1 (or True), pulearn's mark of the labelled positives (1/0, 1/−1,
    True/False; 1.0 of a float column too), or the names the command line recognises
    ("labeled" against "unlabeled", say: :data:`~pusupport.apps.pu_data.LABELED_MARKS`)."""
    from .pu_data import recognised_mark
    if given != "auto":
        if given not in classes.tolist():
            raise ValueError(f"positive_label={given!r} is not one of the labels {classes.tolist()}")
        return given
    if classes.dtype.kind in "biuf" and 1 in classes.tolist():
        return classes[classes == 1][0]
    names = [str(c).strip().lower() for c in classes]
    if (mark := recognised_mark(names)) is not None:
        return classes[names.index(mark)]
    raise ValueError(f"labels {classes.tolist()}: say which marks the labelled positives with "
                     "positive_label=..., or mark them 1 (pulearn's 1/0, 1/−1 or True/False)")


def lee_liu_score(s, y_pred, positive=1) -> float:
    """recall²/P(ŷ = positive): recall over the labelled positives (s = ``positive``),
    P(ŷ = positive) over all rows."""
    s, y_pred = np.asarray(s), np.asarray(y_pred)
    positive_rate = float((y_pred == positive).mean())
    if positive_rate == 0 or not (s == positive).any():
        return 0.0
    recall = float((y_pred[s == positive] == positive).mean())
    return recall ** 2 / positive_rate


def lee_liu_scorer(estimator, X, s) -> float:
    """The scorer for ``GridSearchCV(..., scoring=lee_liu_scorer)`` with ``y = s``: Lee &
    Liu's score of the estimator's predictions (a pipeline's: its last step's labels)."""
    last = estimator.steps[-1][1] if hasattr(estimator, "steps") else estimator
    return lee_liu_score(np.asarray(s) == last.positive_, estimator.predict(X) == last.classes_[1], True)
