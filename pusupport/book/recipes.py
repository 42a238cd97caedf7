"""Each PU method's recipe as "Where aaPU stands" lists it: its settings, where its authors
set them, and what this book changes — every row read from what its method declares
(:class:`~pusupport.core.methods.Method`: its description or own settings, ``source`` and
``departures``), the changes in a table of their own."""
from __future__ import annotations

from dataclasses import fields

import pandas as pd

from ..core.methods import get_method
from .experiments.standing import COMPARED

#: The methods of the table: aaPU, then those the page compares with it, in its order.
LISTED = ("aapu", *COMPARED)
#: What every row shares unless it says otherwise: the table's caption.
SHARED = ("Every method trains on its comparison page's data (less the held-out PU split where "
          "one is), network, optimiser (Adam), epochs, batch size, learning rate and schedule, "
          "with the logistic loss and, wherever nnPU's correction enters, β = 0 and γ = 1 "
          "(Kiryo et al.'s) — unless its row says otherwise.")


def hyperparameters() -> pd.DataFrame:
    """A row per method of :data:`LISTED`, from its declaration (:func:`row`)."""
    return pd.DataFrame([row(m) for m in LISTED], columns=["method", "settings", "source"])


def departures() -> pd.DataFrame:
    """A row per change this book makes to a method of :data:`LISTED`, and why — each from
    the method's declaration (``departures``); a method with none has none."""
    rows = [(get_method(m).label, what, why) for m in LISTED for what, why in get_method(m).departures]
    return pd.DataFrame(rows, columns=["method", "changed here", "why"])


def row(name: str) -> tuple:
    """A method's row: its own settings and its authors' values per data set (where it
    declares them; else its description, and for a method that grows S, where S's size comes
    from) and their source."""
    m = get_method(name)
    if m.settings is not None:
        settings = ", ".join(f"{f.name} = {getattr(m.settings(), f.name)}" for f in fields(m.settings))
        per = "; ".join(f"{d}: " + ", ".join(f"{k} = {v}" for k, v in given.items())
                        for d, given in m.by_dataset.items())
        settings += f" ({per})" if per else ""
    else:
        settings = m.description + ("; S grows by the page's n_select an epoch from its select_from"
                                    if m.selects else "")
    return (m.label, settings, m.source or "—")
