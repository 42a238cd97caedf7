"""The summary: every claim's verdict, read from the other pages' results (no training)."""
from ..experiment import Experiment

EXPERIMENT = Experiment("summary", reads_every_page=True)
