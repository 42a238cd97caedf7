"""Committed reference results under ``results/reference/`` and their provenance.

``results/reference/<profile>/spread.json``: the run-to-run spread of each data set's paired
difference when only floating-point arithmetic changes (another thread count), written
by ``book/spread.py`` (``make spread``) and shown on the summary page. A record holds the
settings fingerprint of the page it measured; a record whose fingerprint no longer matches
that page's results is stale, and says so.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import shlex
import subprocess
import time
from pathlib import Path

import torch

#: The committed reference folder (beside the book, at the repository's root).
ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "results" / "reference"


def record_runs(profile: str, name: str) -> Path:
    """Where the runs of a page's record ``name`` at ``profile`` are committed."""
    return REFERENCE / profile / name / "runs"


def fingerprint(values: dict) -> str:
    """A short, stable hash of settings (``values`` must be JSON-able)."""
    text = json.dumps(values, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def cpu_model() -> str:
    """This machine's CPU, as /proc/cpuinfo names it."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def code_commit() -> str:
    """This checkout's commit, "+uncommitted changes" when the package differs from it;
    ``PUSUPPORT_COMMIT``, where set, names it instead (a copy of the checkout on another
    machine, without git or with a stale .git)."""
    if os.environ.get("PUSUPPORT_COMMIT"):
        return os.environ["PUSUPPORT_COMMIT"]
    root = REFERENCE.parents[1]
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "pusupport"], cwd=root,
                               capture_output=True, text=True).stdout.strip()
        return commit + ("+uncommitted changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def relative(arg: str) -> str:
    """A path inside this checkout written relative to it (anything else as it is)."""
    path = Path(arg)
    return str(path.relative_to(ROOT)) if path.is_absolute() and path.is_relative_to(ROOT) else arg


def command_line(script: str, argv: list[str]) -> str:
    """``python <script> <argv>`` as a record keeps it: paths inside this checkout
    :func:`relative`, so a record names no folder of the machine that made it."""
    return f"python {script} " + " ".join(shlex.quote(relative(a)) for a in argv)


def provenance(command: str, wall_seconds: float, precision: str, started: str | None = None,
               **more) -> dict:
    """Where and how a result was made: commit, machine, threads, precision, date, wall
    time and the command (``more``: e.g. the layout, the training-code version). ``started``:
    the commit the run started from (:func:`code_commit`); where the checkout moved on before
    it finished, the record also names the commit at its end."""
    now = code_commit()
    gpu = torch.cuda.get_device_name() if torch.cuda.is_available() else None
    moved = {"commit_at_end": now} if started is not None and started != now else {}
    return {"commit": started or now, **moved, "cpu": cpu_model(), "cores": os.cpu_count(),
            "gpu": gpu, "torch": torch.__version__, "precision": precision, **more,
            "date": time.strftime("%Y-%m-%d %H:%M %Z"), "wall_seconds": round(wall_seconds, 1),
            "command": command}


def spread_path(profile: str, root: Path = REFERENCE) -> Path:
    return Path(root) / profile / "spread.json"


def read_spread(output_dir, profile: str = "cpu", root: Path = REFERENCE) -> list[dict]:
    """One row per measured data set, for display: data set, page, spread, status. A record
    is stale when the page it measured ran under ``output_dir`` with other settings."""
    path = spread_path(profile, root)
    if not path.exists():
        return []
    record = json.loads(path.read_text())
    rows = []
    for dataset, r in record["datasets"].items():
        summary = Path(output_dir) / r["page"] / "summary.json"
        ran = json.loads(summary.read_text()).get("fingerprint") if summary.exists() else None
        status = ("current" if ran in (None, r["fingerprint"]) else
                  "stale (settings changed): recompute with `make spread`")
        rows.append({"data set": dataset, "page": r["page"], "seeds": r["seeds"],
                     "spread": r["spread"], "largest per-seed change": r["per_seed"],
                     "threads": " vs ".join(map(str, r["threads"])), "status": status})
    return rows


def spread_table(output_dir, profile: str = "cpu", root: Path = REFERENCE):
    """The measured spread per data set (a table; empty where none was measured)."""
    import pandas as pd
    rows = read_spread(output_dir, profile, root)
    table = pd.DataFrame(rows, columns=["data set", "page", "seeds", "spread", "largest per-seed change",
                                        "threads", "status"])
    return table.rename(columns={"spread": "spread (largest shift of an interval end)",
                                 "largest per-seed change": "largest per-seed shift"})


def spread_text(output_dir, profile: str = "cpu", root: Path = REFERENCE) -> str:
    """Markdown: the provenance of each data set's measured spread, or why there is none."""
    rows = read_spread(output_dir, profile, root)
    if not rows:
        return (f"No run-to-run spread has been measured at the `{profile}` profile "
                "(`make spread` measures it).")
    record = json.loads(spread_path(profile, root).read_text())
    lines = []
    for dataset, r in record["datasets"].items():
        how = r["provenance"]
        lines.append(f"- {dataset}: commit {how['commit'][:12]}, {how['cpu']} ({how['cores']} cores), "
                     f"{how['precision']}, {how['date']}, {how['wall_seconds'] / 60:.1f} min: "
                     f"`{how['command']}`")
    return "\n".join(lines)
