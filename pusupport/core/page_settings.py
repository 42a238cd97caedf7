"""A page's own settings: what it varies or shows beyond single runs. Each run a page
trains is a :class:`~pusupport.core.config.TrainConfig`; these never shape a run's numbers
(so they are not part of its identity, :mod:`~pusupport.core.identity`)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PageConfig:
    """What a page varies or shows, beyond single runs."""

    n_seeds: int = 1                     # seeds per method (each seed: its own data and init)
    noise_rates: list | None = None      # memorisation: fractions of flipped training labels
    extra_positives: int | None = None   # adding P: labelled positives added to nnPU's
    snapshot_epochs: list | None = None  # epochs after which U's losses are kept
    top_k: int | None = None             # histograms: purity of the k largest U losses
    n_select_grid: list | None = None    # discussion: n_select values tried
    select_from_grid: list | None = None  # discussion: first selection epochs tried
    selection_ks: list | None = None     # biased selection: sizes of the plotted selections
    prior_factors: list | None = None    # prior page: π used = true π × factor
    compared: dict | None = None         # where aaPU stands: data set → methods run beside aaPU

    def __post_init__(self):
        if not (isinstance(self.n_seeds, int) and not isinstance(self.n_seeds, bool) and self.n_seeds >= 1):
            raise ValueError(f"n_seeds must be an int >= 1, got {self.n_seeds!r}")
