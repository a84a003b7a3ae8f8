"""Session fixtures that start the emulators (one of each per test session or xdist worker)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from devhost.azurite_emulator import start_azurite
from devhost.cosmos_emulator import start_cosmos_emulator


@pytest.fixture(scope="session")
def cosmos_emulator(tmp_path_factory):
    emulator = start_cosmos_emulator(tmp_path_factory.mktemp("cosmos") / "emulator.log")
    yield emulator
    emulator.stop()


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
