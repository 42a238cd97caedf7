"""Progress bars (tqdm.auto) that honour TQDM_DISABLE also inside notebooks."""
from __future__ import annotations

import os

from tqdm.auto import tqdm


def progress(iterable=None, enabled: bool = True, **kwargs):
    """A tqdm.auto bar, off when ``enabled`` is False or $TQDM_DISABLE is set (CI)."""
    off = not enabled or os.environ.get("TQDM_DISABLE", "").lower() not in ("", "0", "false")
    return tqdm(iterable, disable=off, **kwargs)


def run_label(method: str, seeds: list, runs: int) -> str:
    """A training bar's name: the method and its seed, or how many runs and members it trains."""
    K = len(seeds)
    return (f"{method} seed {seeds[0]}" if K == 1 else f"{method} × {K} seeds" if runs == 1
            else f"{runs} runs, {K} members")
