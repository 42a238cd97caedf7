"""The data layer: PU problems from the synthetic process, the real data sets, image
folders and feature tables. It builds on :mod:`pusupport.core` and knows nothing of the
book or the applications."""
from ..core.problem import (LabeledData, PUData, as_features, flip_labels, from_arrays, make_pu,
                            resolve_classes, supervised)
from .files import DatasetNotFoundError, data_root
from .synthetic import SYNTHETIC_PRIOR, synthetic

__all__ = ["LabeledData", "PUData", "as_features", "flip_labels", "from_arrays", "make_pu",
           "resolve_classes", "supervised", "DatasetNotFoundError", "data_root",
           "SYNTHETIC_PRIOR", "synthetic"]
