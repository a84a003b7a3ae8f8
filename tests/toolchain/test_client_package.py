"""client/ is a package of its own: `pip install client/` into a fresh virtual environment works without the
service's code or requirements, it imports nothing of the service, and it is fully typed (mypy --strict)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

CLIENT = ROOT / "client"
SERVICE_PACKAGES = {
    "core",
    "reference",
    "ingest",
    "reconcile",
    "backends",
    "triggers",
    "hq",
    "devhost",
    "function_app",
    "bench",
    "loadtest",
    "tests",
}


def imported_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    return names | {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
    }


def test_the_package_imports_only_the_standard_library_and_rich():
    sources = sorted((CLIENT / "pos_partner_client").glob("*.py"))
    assert sources
    for source in sources:
        foreign = imported_names(source) - set(sys.stdlib_module_names) - {"rich", "pos_partner_client"}
        assert not foreign, (source.name, foreign)


def test_pip_install_of_the_folder_works_on_its_own(tmp_path):
    source = shutil.copytree(CLIENT, tmp_path / "client", ignore=shutil.ignore_patterns("build", "*.egg-info"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-input", str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    # (A copy is installed: building in place would leave client/build/ behind.) Run from elsewhere than
    # the project, so that nothing of it can be found on sys.path.
    check = (
        "import sys, pos_partner_client, pos_partner_client.cli\n"
        f"service = {sorted(SERVICE_PACKAGES)!r}\n"
        "print(pos_partner_client.__file__)\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] in service))\n"
    )
    ran = subprocess.run(
        [str(python), "-c", check],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert ran.returncode == 0, ran.stderr
    location, modules = ran.stdout.splitlines()
    assert location.startswith(str(venv)) and modules == "[]", ran.stdout
    helped = subprocess.run(
        [str(venv / "bin" / "pos-partner"), "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert helped.returncode == 0 and "push" in helped.stdout and "status" in helped.stdout, helped.stderr


def test_the_package_is_fully_typed():
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "pos_partner_client"],
        cwd=CLIENT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
