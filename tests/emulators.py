"""Session fixtures that start the emulators (one of each per test session or xdist worker)."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path

import pytest

from backends.cosmos.storage import CosmosStorage
from backends.memory.storage import MemoryStorage
from backends.sqlite.storage import SqliteStorage
from devhost.azurite_emulator import start_azurite
from devhost.cosmos_emulator import start_cosmos_emulator


@pytest.fixture(scope="session")
def cosmos_emulator(tmp_path_factory):
    emulator = start_cosmos_emulator(tmp_path_factory.mktemp("cosmos") / "emulator.log")
    yield emulator
    emulator.stop()


@pytest.fixture(scope="module")
def cosmos_storage(cosmos_emulator, request):
    """A Cosmos DB storage on a database of the test module's own (the sweep and some checks look at
    every partner's data, so modules must not share one)."""
    module = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")
    storage = CosmosStorage(
        cosmos_emulator.endpoint, f"{module}-{uuid.uuid4().hex[:8]}", key=cosmos_emulator.key, create_containers=True
    )
    yield storage
    storage.close()


@pytest.fixture(params=["sqlite", "cosmos", "memory"])
def storage(request, tmp_path):
    """Each storage adapter in turn, for the contract suites: SQLite in a temporary folder, Cosmos DB on the
    module's database, and the in-memory storage (a module may define its own `storage` instead)."""
    if request.param == "sqlite":
        return SqliteStorage(tmp_path)
    if request.param == "memory":
        return MemoryStorage()
    return request.getfixturevalue("cosmos_storage")


@pytest.fixture(scope="session")
def azurite():
    """A running Azurite queue service for the whole session."""
    work_dir = Path(tempfile.mkdtemp(prefix="azurite-"))
    emulator = start_azurite(work_dir)
    try:
        yield emulator
    finally:
        emulator.stop()
        if not os.environ.get("KEEP_EMULATOR_LOGS"):
            shutil.rmtree(work_dir, ignore_errors=True)
