"""The README's "Use the package alone": its two commands, run in a fresh clone, install
the package without the book's extras and put `pusupport` on the PATH."""
import importlib.metadata as metadata
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    section = (ROOT / "README.md").read_text().split("## Use the package alone", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [line for line in block.splitlines() if line.strip()]


def test_the_package_alone_installs_and_trains_from_a_fresh_clone(tmp_path):
    clone = tmp_path / "clone"
    try:
        check_the_package_alone(clone, tmp_path)
    finally:
        shutil.rmtree(clone, ignore_errors=True)  # its virtual environment holds torch: GBs


def check_the_package_alone(clone: Path, tmp_path: Path) -> None:
    commands = readme_commands()
    assert len(commands) == 2
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    subprocess.run(["python3", "-m", "venv", str(clone / ".venv-pkg")], check=True)
    lend_torch(clone / ".venv-pkg")
    for command in commands:
        run = subprocess.run(["bash", "-c", command], cwd=clone, capture_output=True, text=True)
        assert run.returncode == 0, f"{command}\n{run.stderr[-3000:]}"
    assert "usage: pusupport" in run.stdout
    venv = clone / ".venv-pkg"
    listed = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "list"], capture_output=True,
                            text=True).stdout.lower()
    assert "torch " in listed and "ray " not in listed and "jupyter-book" not in listed
    rng = np.random.default_rng(0)
    y = np.arange(300) % 2
    pd.DataFrame({"a": rng.normal(2 * y, 0.5), "b": rng.normal(-y, 0.5), "label": y}).to_csv(
        tmp_path / "t.csv", index=False)
    run = subprocess.run(["bash", "-c", ". .venv-pkg/bin/activate && pusupport train --features "
                          f"{tmp_path / 't.csv'} --positive 1 --prior 0.3 --epochs 5 --device cpu "
                          f"--allow-degenerate --out {tmp_path / 'm.pt'}"],
                         cwd=clone, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    assert (tmp_path / "m.pt").is_file() and f"saved {tmp_path / 'm.pt'}" in run.stdout


def lend_torch(venv: Path) -> None:
    """Link torch, torchvision and everything they require (its CUDA libraries: 5.5 GB) from
    the test's own environment into ``venv``, so pip finds the pinned versions installed and
    the README's commands install the rest of the package's requirements, as for a user, in
    some hundred MB of disk (a CI machine once ran out of room here)."""
    source = Path(torch.__file__).parents[1]
    target = next((venv / "lib").glob("python3*/site-packages"))
    todo, seen = [Requirement("torch"), Requirement("torchvision")], set()
    while todo:
        req = todo.pop()
        name = metadata.distribution(req.name).metadata["Name"].lower()
        if name in seen:
            continue
        seen.add(name)
        dist = metadata.distribution(name)
        for top in {Path(f).parts[0] for f in dist.files if not str(f).startswith("..")}:
            if (source / top).exists() and not (target / top).exists():
                (target / top).symlink_to(source / top)
        for line in dist.requires or []:
            dep = Requirement(line)
            if dep.marker is None or any(dep.marker.evaluate({"extra": e}) for e in req.extras or {""}):
                todo.append(dep)
