"""The introduction: the paper's settings and what each profile changes (no training)."""
from ..experiment import Experiment

EXPERIMENT = Experiment("introduction")
