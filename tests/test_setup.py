"""Project set-up: environment.yml lists the same dependencies as pyproject.toml."""
import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _norm(req: str) -> tuple[str, str]:
    name, spec = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*(.*)$", req).groups()
    return name.lower().replace("_", "-"), spec.replace(" ", "").replace("=", "==", 1) \
        if re.match(r"^=[^=]", spec) else spec.replace(" ", "")


def test_environment_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = dict(_norm(r) for r in project["dependencies"])
    for extra in project["optional-dependencies"].values():
        wanted.update(_norm(r) for r in extra)
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    listed = {}
    for dep in env["dependencies"]:
        items = dep["pip"] if isinstance(dep, dict) else [dep]
        for item in items:
            if item.startswith("-e") or item.split("=")[0] in ("python", "pip"):
                continue
            listed.update([_norm(item)])
    assert listed == wanted


def test_ci_runs_make_test():
    run = (ROOT / ".ci" / "run").read_text()
    assert "make test" in run
    assert (ROOT / ".ci" / "run").stat().st_mode & 0o111
