"""The executor and the plan know no page: they import nothing of the pages, the registry
or the experiments, and import-linter counts type-checking imports when it looks for cycles."""
import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "pusupport" / "book"
EXECUTOR = ("plan.py", "runs.py", "store.py", "cluster.py", "sources.py")
ABOVE = {"page", "pages", "registry", "experiments", "experiment"}


@pytest.mark.parametrize("module", EXECUTOR)
def test_the_executor_imports_nothing_of_the_pages(module):
    tree = ast.parse((BOOK / module).read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            imported |= {(node.module or "").split(".")[0]} | {a.name for a in node.names if not node.module}
    assert not imported & ABOVE, f"{module} imports {sorted(imported & ABOVE)}"
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert "Page" not in names, f"{module} handles a page"


def test_import_linter_counts_type_checking_imports():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert config["exclude_type_checking_imports"] is False
