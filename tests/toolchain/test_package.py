"""The deployment package, as Azure gets it (decision 0070).

`func azure functionapp publish` zips the project minus what `.funcignore` denies, read by Core Tools'
own matcher (below: Core Tools' GitIgnoreParser, which differs from git's rules), and the remote build
installs requirements.txt alone. Here the same files are copied to a temporary folder, requirements.txt
alone is installed into a virtual environment of its own, and tests/package_smoke.py, run there, imports
function_app, indexes it and answers GET /health and a write: nothing the app needs is left out of the
package, and nothing it imports comes from the development tools.

The virtual environment is kept between runs under .venv/ (or the temporary folder), named by the
hash of requirements.txt and the Python version, and made again when either changes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.funcignore import CoreToolsIgnore
from tests.payloads import store, stores_batch

# What Core Tools never packages, whatever .funcignore says (FileSystemHelpers.GetLocalFiles).
ALWAYS_LEFT_OUT_DIRECTORIES = {".git", ".vscode"}
ALWAYS_LEFT_OUT_FILES = {".funcignore", ".gitignore", "appsettings.json", "local.settings.json", "project.lock.json"}


def packaged_files(root: Path) -> list[str]:
    """The project's files that Core Tools puts in the package, relative to root, with `/`."""
    ignore = CoreToolsIgnore((root / ".funcignore").read_text(encoding="utf-8"))
    files = []
    for folder, folders, names in os.walk(root):
        relative = Path(folder).relative_to(root).as_posix()
        prefix = "" if relative == "." else relative + "/"
        # Not walked: folders always left out, and those denied whole (.venv, node_modules) when no
        # `!pattern` could take a file of theirs back (a shortcut: the result is the same).
        folders[:] = [
            name
            for name in folders
            if name not in ALWAYS_LEFT_OUT_DIRECTORIES
            and not (
                ignore.denies(f"{prefix}{name}/")
                and not any(pattern.startswith(f"{prefix}{name}/") for pattern in ignore.negative_patterns)
            )
        ]
        files += [
            f"{prefix}{name}"
            for name in names
            if name not in ALWAYS_LEFT_OUT_FILES and not ignore.denies(f"{prefix}{name}")
        ]
    return sorted(files)


def build_package(root: Path, destination: Path) -> Path:
    for name in packaged_files(root):
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, target)
    return destination


def package_venv() -> Path:
    """A virtual environment with requirements.txt alone, from the package registry (pip's cache
    helps): made once per requirements.txt and Python version, kept for the next runs."""
    requirements = (ROOT / "requirements.txt").read_bytes()
    key = hashlib.sha256(requirements + sys.version.encode()).hexdigest()[:16]
    parent = ROOT / ".venv" if (ROOT / ".venv").is_dir() else Path(tempfile.gettempdir())
    venv = parent / f"package-check-{key}"
    if (venv / "complete").exists():
        return venv
    building = Path(tempfile.mkdtemp(prefix="package-check-", dir=parent))
    # --without-pip: nothing in it but what requirements.txt installs (pip runs from this environment).
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(building)], check=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(building / "bin" / "python"),
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-input",
            "-r",
            str(ROOT / "requirements.txt"),
        ],
        check=True,
        timeout=900,
    )
    (building / "complete").touch()
    try:
        building.rename(venv)
    except OSError:  # another run made it meanwhile
        shutil.rmtree(building, ignore_errors=True)
    return venv


def run_in_package_environment(arguments: list[str], package: Path) -> subprocess.CompletedProcess:
    """`python -I ARGUMENTS` on the package's own environment, in the package's folder (the worker's working
    directory is the app's root, /home/site/wwwroot), with none of this environment's Python variables."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(("PYTHON", "VIRTUAL_ENV"))}
    python = package_venv() / "bin" / "python"
    return subprocess.run(
        [str(python), "-I", *arguments], capture_output=True, text=True, timeout=300, env=env, cwd=package
    )


@pytest.fixture(scope="module")
def smoke(tmp_path_factory) -> dict:
    """What tests/package_smoke.py reports, run in the package on its own environment."""
    work = tmp_path_factory.mktemp("package")
    package = build_package(ROOT, work / "wwwroot")
    # A store shaped like a real partner's: punctuation in its id, a name in Chinese, a Taipei time zone.
    body = stores_batch(
        store(
            "TPE-101.B1-03",
            store_name="台北101 信義店",
            country_code="TW",
            currency="TWD",
            time_zone="Asia/Taipei",
            locale="zh-TW",
            last_modified_at="2026-11-01T09:00:00+08:00",
        )
    )
    (work / "stores.json").write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
    ran = run_in_package_environment(
        [str(ROOT / "tests" / "package_smoke.py"), str(package), str(work / "data"), str(work / "stores.json")], package
    )
    assert ran.returncode == 0, ran.stderr
    return {**json.loads(ran.stdout.strip().splitlines()[-1]), "package": package, "body": body}


def test_the_package_holds_the_app_and_none_of_the_tools():
    files = set(packaged_files(ROOT))
    for needed in (
        "function_app.py",
        "host.json",
        "requirements.txt",
        "docs/openapi.json",
        "infra/cosmos/containers.json",
        "triggers/http.py",
        "reference/data",
    ):
        assert needed in files or any(name.startswith(needed + "/") for name in files), needed
    for tool in (
        "tests/",
        "devhost/",
        "hq/",
        "bench/",
        "loadtest/",
        "examples/",
        "node_modules/",
        ".venv/",
        "requirements-dev.txt",
        "Makefile",
        "local.settings.json.example",
        "infra/main.bicep",
    ):
        assert not any(name == tool or name.startswith(tool) for name in files), tool


INDEX = (
    "import json, function_app\n"
    "print(json.dumps({f.get_function_name(): json.loads(f.get_function_json())"
    " for f in function_app.app.get_functions()}))"
)


def test_the_package_indexes_as_the_development_tree_does(smoke):
    # In a process of its own: the app may list its functions only once per process (tests/e2e/test_openapi.py).
    indexed = subprocess.run([sys.executable, "-c", INDEX], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert indexed.returncode == 0, indexed.stderr
    expected = json.loads(indexed.stdout.strip().splitlines()[-1])
    assert smoke["functions"] == expected
    assert {"health", "put_stores", "post_trade_records", "post_daily_close"} <= set(smoke["functions"])


def test_the_package_answers_health_and_a_write_on_its_own_dependencies(smoke):
    answers = smoke["answers"]
    assert answers["health"] == {"status": 200, "body": {"status": "ok", "checks": {"storage": "ok", "queue": "ok"}}}
    assert answers["put_stores"]["status"] == 202
    assert answers["put_stores"]["body"]["batch_id"] == smoke["body"]["batch_id"]
    assert answers["unauthorized"]["status"] == 401 and answers["unauthorized"]["body"]["code"] == "UNAUTHORIZED"
    assert smoke["stored_store_name"] == "台北101 信義店"
    assert smoke["bearer_client"] == "client-1"  # a bearer token checked on the package's PyJWT and cryptography
    assert Path(smoke["prefix"]).name.startswith("package-check-")
    # Every module came from the package, its environment or the standard library; no tool was loaded.
    assert smoke["foreign_modules"] == []
    assert not {"devhost", "hq", "tests", "bench", "croniter", "pytest"} & set(smoke["top_level_modules"])


# The worker's own loader, as Azure runs it on Python 3.13: it imports function_app from the package's root.
WORKER_INDEX = (
    "import json, sys\n"
    "from importlib import metadata\n"
    "from azure_functions_runtime import loader\n"
    "from azure_functions_runtime.bindings import meta\n"
    "sys.path.insert(0, sys.argv[1])\n"
    "meta.load_binding_registry()\n"
    "functions = loader.index_function_app(sys.argv[1] + '/function_app.py')\n"
    "print(json.dumps({'worker': metadata.version('azure-functions-runtime'),"
    " 'functions': sorted(function.get_function_name() for function in functions)}))"
)


@pytest.mark.skipif(sys.version_info < (3, 13), reason="requirements.txt brings the worker on Python 3.13 only")
def test_the_pinned_worker_indexes_the_package_on_its_own_environment(smoke):
    """The worker requirements.txt pins (what Azure loads the app with) is in the package's environment and
    finds every function the app declares."""
    ran = run_in_package_environment(["-c", WORKER_INDEX, str(smoke["package"])], smoke["package"])
    assert ran.returncode == 0, ran.stderr
    indexed = json.loads(ran.stdout.strip().splitlines()[-1])
    assert indexed["functions"] == sorted(smoke["functions"])
    pinned = re.search(r"^azure-functions-runtime==([^;\s]+)", (ROOT / "requirements.txt").read_text(), re.M)
    assert indexed["worker"] == pinned.group(1)


def _import_names(distribution: str) -> set[str]:
    names = {
        name
        for name, owners in metadata.packages_distributions().items()
        if distribution.lower().replace("_", "-") in {owner.lower().replace("_", "-") for owner in owners}
    }
    return {name for name in names if not name.startswith("_")}


# Deployed but not imported by name: zoneinfo reads tzdata; the OpenTelemetry SDK is what
# azure-monitor-opentelemetry runs on, pinned with the API; cryptography is what PyJWT verifies RS/PS/ES/EdDSA
# signatures with (bearer tokens); the Python worker (and its one dependency) is what Azure loads the app with
# on Python 3.13 (runtime version control, decision 0112).
NOT_IMPORTED_BY_NAME = {
    "tzdata",
    "opentelemetry-sdk",
    "cryptography",
    "azure-functions-runtime",
    "azurefunctions-extensions-base",
}


def test_every_requirement_is_imported_by_the_app():
    """requirements.txt holds what runs in Azure: each package is imported by a packaged module."""
    sources = "\n".join(
        (ROOT / name).read_text(encoding="utf-8") for name in packaged_files(ROOT) if name.endswith(".py")
    )
    requirements = [
        line.split("==")[0]
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    unused = []
    for requirement in requirements:
        if requirement in NOT_IMPORTED_BY_NAME:
            continue
        # The azure-* packages share the `azure` namespace: each is imported by its own dotted name.
        names = {requirement.replace("-", ".")} if requirement.startswith("azure-") else _import_names(requirement)
        pattern = "|".join(re.escape(name) for name in names)
        if not names or not re.search(
            rf"(^|\n)\s*(from|import)\s+({pattern})\b|import_module\(f?\"({pattern})\.", sources
        ):
            unused.append(requirement)
    assert unused == []
