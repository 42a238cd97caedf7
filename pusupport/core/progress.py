"""Progress bars (tqdm.auto) that honour TQDM_DISABLE also inside notebooks."""
from __future__ import annotations

import os

from tqdm.auto import tqdm


def progress(iterable=None, enabled: bool = True, **kwargs):
    """A tqdm.auto bar, off when ``enabled`` is False or $TQDM_DISABLE is set (CI)."""
    off = not enabled or os.environ.get("TQDM_DISABLE", "").lower() not in ("", "0", "false")
    return tqdm(iterable, disable=off, **kwargs)
