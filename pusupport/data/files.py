"""Where data live and how decoded data are cached.

The data directory is the ``data_dir`` argument, else the ``PUSUPPORT_DATA``
environment variable, else ``~/.cache/pusupport`` (:func:`data_root`, the one place
that reads the variable). Decoded tensors are cached under ``<data_dir>/cache``.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from pathlib import Path

import torch

from ..core.atomic import replacing

ENV_VAR = "PUSUPPORT_DATA"
CACHE_VERSION = 1


def data_root(data_dir=None) -> Path:
    """The data directory: ``data_dir``, else $PUSUPPORT_DATA, else ~/.cache/pusupport."""
    root = data_dir or os.environ.get(ENV_VAR) or Path.home() / ".cache" / "pusupport"
    return Path(root).expanduser()


class DatasetNotFoundError(FileNotFoundError):
    """A data set is neither on disk nor downloadable; the message says how to provide it."""

    def __init__(self, name: str, root: Path, looked_for: list[str], how: str, reason: str = "",
                 fix: str | None = None):
        where = "\n".join(f"  - {root / p}" for p in looked_for)
        ways = fix or (
            f"Provide it in one of three ways:\n"
            f"  1. with internet access, call with download=True (the default) to fetch {how};\n"
            f"  2. pass data_dir=<folder> (papermill: -p data_dir <folder>) to a folder holding one "
            f"of the layouts above;\n"
            f"  3. set the environment variable {ENV_VAR}=<folder>.")
        super().__init__(f"{name} was not found{': ' + reason if reason else ''}.\n"
                         f"Looked for:\n{where}\n{ways}")


def _cache_path(root: Path, key: str) -> Path:
    return root / "cache" / f"{key}.pt"


def cached(root: Path, key: str, signature: dict, build):
    """Load ``key`` from the cache if it is complete and matches ``signature``; else rebuild.

    The file is written atomically; a corrupt, partial or stale cache is rebuilt.
    """
    path = _cache_path(root, key)
    if path.exists():
        try:
            blob = torch.load(path, weights_only=False)
            if blob.get("version") == CACHE_VERSION and blob.get("signature") == signature:
                return blob["data"]
            warnings.warn(f"cache {path} is stale; rebuilding it", stacklevel=3)
        except Exception as err:   # a truncated or corrupt file
            warnings.warn(f"cache {path} is unreadable ({type(err).__name__}); rebuilding it",
                          stacklevel=3)
    data = build()
    with replacing(path) as tmp:
        torch.save({"version": CACHE_VERSION, "signature": signature, "data": data}, tmp)
    return data


def fetch_official(fetch, name, root, looked_for):
    """``fetch(folder)`` into a temporary folder, then move what arrived into ``root``:
    a failed download (no internet, DNS, HTTP error) creates nothing and raises
    :class:`DatasetNotFoundError`."""
    tmp = Path(tempfile.mkdtemp(prefix="pusupport-download-"))
    try:
        result = fetch(tmp)
        root.mkdir(parents=True, exist_ok=True)
        for item in tmp.iterdir():
            if not (root / item.name).exists():
                shutil.move(str(item), str(root / item.name))
        return result
    except Exception as err:
        raise DatasetNotFoundError(name, root, looked_for, "the official files",
                                   f"the download failed ({type(err).__name__}: {err})") from err
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
