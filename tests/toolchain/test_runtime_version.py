"""The Python production runs, named once and used everywhere (decision 0112): the Makefile's
PRODUCTION_PYTHON is the Function App's runtime in infra/, requirements.txt pins the worker Azure loads on
it, CI refuses to run on anything else, and `make` falls back to an older Python with a line saying so.

The Makefile's interpreter choice runs for real here, on a virtual environment folder of its own, with the
machine's own Pythons (pyenv's, as on this project's machines).
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from tests.conftest import ROOT

MAKEFILE = ROOT / "Makefile"


def production_python() -> str:
    return re.search(r"^PRODUCTION_PYTHON := (\d+\.\d+)$", MAKEFILE.read_text(encoding="utf-8"), re.M).group(1)


def pins(path: Path) -> dict[str, list[tuple[str, str]]]:
    """Package -> [(version, environment marker)] of a requirements file's `name==version[; marker]` lines."""
    found: dict[str, list[tuple[str, str]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if match := re.match(r"([A-Za-z0-9_.-]+)==([^;\s]+)\s*(?:;\s*(.*))?$", line):
            found.setdefault(match.group(1).lower(), []).append((match.group(2), match.group(3) or ""))
    return found


def test_production_runs_the_makefiles_python_on_flex_consumption():
    bicep = (ROOT / "infra" / "modules" / "functionapp.bicep").read_text(encoding="utf-8")
    runtime = re.search(r"runtime: \{\s*name: 'python'\s*version: '([\d.]+)'", bicep)
    assert runtime, "functionAppConfig.runtime of the Function App"
    assert runtime.group(1) == production_python()
    assert "REQUIRE_PRODUCTION_PYTHON=1 make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_requirements_pin_the_worker_production_loads_and_install_on_older_pythons():
    production = production_python()
    on_production = f'python_version >= "{production}"'
    below = f'python_version < "{production}"'
    requirements = pins(ROOT / "requirements.txt")
    # azure-functions 2.x on production's Python (1.x refuses it), 1.x below it.
    (major2,) = [version for version, marker in requirements["azure-functions"] if marker == on_production]
    (major1,) = [version for version, marker in requirements["azure-functions"] if marker == below]
    assert major2.startswith("2.") and major1.startswith("1.")
    # The worker, pinned (runtime version control), and its own dependency, only where Azure loads them.
    worker = {name: requirements[name] for name in ("azure-functions-runtime", "azurefunctions-extensions-base")}
    assert all(len(versions) == 1 and versions[0][1] == on_production for versions in worker.values())
    # The same pins install the worker for the indexing test on an older Python (the Makefile's fallback).
    assert pins(ROOT / "tests" / "requirements-worker.txt") == {
        name: [(versions[0][0], "")] for name, versions in worker.items()
    }


def test_this_environment_has_the_pinned_worker_and_functions_library():
    requirements = pins(ROOT / "requirements.txt")
    (runtime,) = requirements["azure-functions-runtime"]
    assert metadata.version("azure-functions-runtime") == runtime[0]
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    newer = tuple(map(int, here.split("."))) >= tuple(map(int, production_python().split(".")))
    expected = next(version for version, marker in requirements["azure-functions"] if (">=" in marker) == newer)
    assert metadata.version("azure-functions") == expected


def _pythons() -> dict[str, str]:
    """Minor version -> an interpreter of this machine (pyenv's, then PATH's)."""
    found = {}
    root = (
        subprocess.run(["pyenv", "root"], capture_output=True, text=True).stdout.strip()
        if shutil.which("pyenv")
        else ""
    )
    for minor in ("3.11", "3.12", "3.13"):
        candidates = sorted(glob.glob(f"{root}/versions/{minor}.*/bin/python{minor}")) if root else []
        candidates += [path for path in [shutil.which(f"python{minor}")] if path]
        for candidate in candidates:
            if subprocess.run([candidate, "-c", ""], capture_output=True).returncode == 0:
                found[minor] = candidate
                break
    return found


def _interpreter(venv: Path, *arguments: str, require: bool = False) -> subprocess.CompletedProcess:
    """`make VENV/.interpreter` as `make run` and `make test` run it first."""
    env = {name: value for name, value in os.environ.items() if name not in ("PYTHON", "REQUIRE_PRODUCTION_PYTHON")}
    if require:
        env["REQUIRE_PRODUCTION_PYTHON"] = "1"
    return subprocess.run(
        ["make", "-s", "-C", str(ROOT), f"VENV={venv}", *arguments, f"{venv}/.interpreter"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_make_uses_productions_python_where_it_is_installed(tmp_path):
    production = production_python()
    if production not in _pythons():
        pytest.skip(f"Python {production} is not installed here")
    chosen = _interpreter(tmp_path / "venv")
    assert chosen.returncode == 0, chosen.stdout + chosen.stderr
    assert f"Python {production}." in chosen.stdout and "the version production runs" in chosen.stdout
    assert (tmp_path / "venv" / ".interpreter").read_text().startswith(f"{production}.")


def test_make_falls_back_with_a_line_saying_so_and_ci_refuses_to(tmp_path):
    # A production version no machine has: what a machine without production's Python sees.
    absent = "PRODUCTION_PYTHON=3.99"
    fallback = _interpreter(tmp_path / "venv", absent)
    assert fallback.returncode == 0, fallback.stdout + fallback.stderr
    assert "Python 3.99 (production's) is not installed: falling back to Python 3." in fallback.stdout
    refused = _interpreter(tmp_path / "venv", absent, require=True)
    assert refused.returncode != 0
    assert "Python 3.99, the version production runs, is not installed" in refused.stdout


def test_make_makes_the_environment_again_when_the_interpreter_changes(tmp_path):
    pythons = sorted(_pythons().values())
    if len(pythons) < 2:
        pytest.skip("one Python on this machine")
    venv = tmp_path / "venv"
    first = _interpreter(venv, f"PYTHON={pythons[0]}")
    assert first.returncode == 0, first.stdout + first.stderr
    marker = venv / "made-with-the-first"
    marker.touch()
    same = _interpreter(venv, f"PYTHON={pythons[0]}")
    assert same.returncode == 0 and "changed" not in same.stdout and marker.exists()
    other = _interpreter(venv, f"PYTHON={pythons[1]}")
    assert other.returncode == 0, other.stdout + other.stderr
    assert "The interpreter changed: making" in other.stdout and not marker.exists()
