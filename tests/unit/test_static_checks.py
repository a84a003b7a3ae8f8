"""The type checker is strict enough that a storage adapter which no longer satisfies its port fails.

The app's packages and mypy.ini are copied to a temporary folder; in each copy one adapter loses a
method of the Storage port (wherever in the adapter it is defined), and mypy must fail naming the
adapter and the method. The clean copy must pass. mypy's cache lives in the temporary folder.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APP = [
    "core",
    "reference",
    "ingest",
    "reconcile",
    "export",
    "backends",
    "triggers",
    "hq",
    "function_app.py",
    "mypy.ini",
]
# A port method each adapter must have (core.ports Storage), and where each adapter's code lives.
REMOVED = "postpone"
ADAPTERS = {
    "SqliteStorage": "backends/sqlite",
    "CosmosStorage": "backends/cosmos",
    "MemoryStorage": "backends/memory",
}


@pytest.fixture(scope="module")
def app_copy(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("static")
    for name in APP:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, root / name, ignore=shutil.ignore_patterns("__pycache__", "data"))
        else:
            shutil.copy(source, root / name)
    return root


def mypy(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--cache-dir", str(root.parent / "mypy-cache")],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )


def without_method(root: Path, folder: str, adapter: str, method: str) -> Path:
    """Remove `method` from the adapter's class, or from the first of its bases (in the adapter's code)
    that defines it; returns the file changed."""
    classes = {}
    for path in sorted((root / "backends").rglob("*.py")):
        if str(path.relative_to(root)).startswith(folder):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            classes.update({node.name: (path, node) for node in tree.body if isinstance(node, ast.ClassDef)})
    path, function = next(
        (path, item)
        for path, node in _with_bases(classes, adapter)
        for item in node.body
        if isinstance(item, ast.FunctionDef) and item.name == method
    )
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    first = min([function.lineno, *(decorator.lineno for decorator in function.decorator_list)])
    del lines[first - 1 : function.end_lineno]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _with_bases(classes: dict, name: str) -> list:
    path, node = classes[name]
    found = [(path, node)]
    for base in node.bases:
        if isinstance(base, ast.Name) and base.id in classes:
            found += _with_bases(classes, base.id)
    return found


def test_the_app_passes_the_type_checker(app_copy):
    checked = mypy(app_copy)
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_an_adapter_without_a_port_method_fails_the_type_checker(app_copy, adapter, tmp_path):
    root = tmp_path / "app"
    shutil.copytree(app_copy, root)
    without_method(root, ADAPTERS[adapter], adapter, REMOVED)
    checked = mypy(root)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert f'"{adapter}" is missing following "Storage" protocol member' in checked.stdout, checked.stdout
    assert REMOVED in checked.stdout
