"""The parameters papermill injected into the running notebook, read back so that a
misspelt ``-p`` name fails the page's first cell instead of being ignored.

Papermill writes its ``-p`` values as assignments in a cell of their own, after the
notebook's ``parameters`` cell, headed ``# Parameters``; a name the notebook does not
define is only warned about, and the page would run on its defaults. The kernel's input
history (IPython's ``In``) holds that cell: its assigned names are the ones given.
"""
from __future__ import annotations

import ast

HEADER = "# Parameters"


def injected_names() -> set[str]:
    """The names papermill's injected cell assigned in this kernel (none outside one)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return set()
    shell = get_ipython()
    cells = shell.user_ns.get("In", []) if shell is not None else []
    names = set()
    for source in (c for c in cells if c.lstrip().startswith(HEADER)):
        for node in ast.parse(source).body:
            names |= {t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)}
    return names
