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
from devhost import cosmos_throttling
from devhost.azurite_emulator import start_azurite
from devhost.cosmos_emulator import start_cosmos_emulator
from devhost.cosmos_throttling import ThrottlePlan
from tests.throttled_storage import RetriedAfterThrottling


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


# Each call of the adapter meets a 429 with this probability (seeded: a failure can be replayed).
THROTTLED_FRACTION = 0.2


@pytest.fixture(scope="module")
def throttled_cosmos_storage(cosmos_emulator, request):
    """Cosmos DB storage on the module's own database, meeting a 429 on a fifth of its calls, each call
    retried once after a 429 as its caller would (tests/throttled_storage.py). Fails the module if no 429
    was ever injected: a suite that met none proved nothing about throttling."""
    module = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")
    plan = ThrottlePlan(fraction=THROTTLED_FRACTION, seed=7, retry_after_ms=1500)
    with cosmos_throttling.installed(plan):
        storage = CosmosStorage(
            cosmos_emulator.endpoint,
            f"{module}-429-{uuid.uuid4().hex[:8]}",
            key=cosmos_emulator.key,
            create_containers=True,
        )
    retried = RetriedAfterThrottling(storage, plan)
    yield retried
    storage.close()
    assert plan.injected > 0 and retried.retried > 0, "no 429 was injected"


def open_storage_of_kind(kind: str, request, tmp_path):
    """One adapter for a contract suite: SQLite in a temporary folder, Cosmos DB on the module's database
    (with 429s injected for "cosmos-429"), or the in-memory storage."""
    if kind == "sqlite":
        return SqliteStorage(tmp_path)
    if kind == "memory":
        return MemoryStorage()
    if kind == "cosmos-429":
        return request.getfixturevalue("throttled_cosmos_storage")
    return request.getfixturevalue("cosmos_storage")


@pytest.fixture(params=["sqlite", "cosmos", "memory"])
def storage(request, tmp_path):
    """Each storage adapter in turn, for the contract suites (a module may define its own `storage`
    instead; test_storage_contract.py adds Cosmos DB meeting 429s)."""
    return open_storage_of_kind(request.param, request, tmp_path)


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
