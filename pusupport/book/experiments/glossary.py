"""The glossary: PU terms, statistics terms and the book's own (no training)."""
from ..experiment import Experiment

EXPERIMENT = Experiment("glossary")
