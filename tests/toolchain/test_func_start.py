"""`cp local.settings.json.example local.settings.json && func start`, as far as one machine without the
Core Tools can prove it: the local host in strict mode takes its settings only from a copy of the example
and the environment (no defaults of its own, the queue trigger on the Storage Queue), on the emulators.

The real `func start` finds the emulators on their standard addresses (`make emulators`: Azurite on
10000-10002, Cosmos DB on 8081); the tests run their own on free ports, so the copy's addresses, and only
they, are rewritten.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from backends.azure_queue import AzureQueue
from backends.queues import RECONCILE_QUEUE
from core.settings import EXAMPLE_SETTINGS_FILE, read_settings_file
from devhost.azurite_emulator import start_azurite
from devhost.processes import free_port, stop_process
from tests.conftest import LocalHost, make_partner
from tests.payloads import mapping_batch, store, stores_batch
from tests.trade_payloads import Line, daily_close, totals_of, trade_batch, trade_record

ROOT = Path(__file__).resolve().parents[2]
DAY = "2026-11-20"
DIRECTIONS = {"SALE": 1, "REFUND": -1, "DEPOSIT": 1, "DEPOSIT_APPLIED": 0, "ADJUSTMENT": 1}
# What the environment of a developer's shell holds besides the settings: nothing of the app's.
SHELL = {name: os.environ[name] for name in ("PATH", "HOME", "LANG", "TMPDIR") if name in os.environ}


def copy_example(app_dir: Path, addresses: dict[str, str], drop: tuple[str, ...] = ()) -> Path:
    """local.settings.json from the example, with only the emulators' addresses replaced."""
    document = json.loads(EXAMPLE_SETTINGS_FILE.read_text(encoding="utf-8"))
    for name in addresses:
        assert name in document["Values"], name
    document["Values"].update(addresses)
    for name in drop:
        del document["Values"][name]
    path = app_dir / "local.settings.json"
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return path


def start_strict(app_dir: Path, settings_file: Path, **environment: str) -> tuple[subprocess.Popen, int, Path]:
    port = free_port()
    log_path = app_dir / "host.log"
    # cwd is the copy's folder: a relative POS_DATA_DIR lands there, never in the project.
    process = subprocess.Popen(
        [sys.executable, "-m", "devhost", "--strict", "--settings", str(settings_file), "--port", str(port)],
        cwd=app_dir,
        env={**SHELL, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", **environment},
        stdout=log_path.open("wb"),
        stderr=subprocess.STDOUT,
    )
    return process, port, log_path


def wait_until_healthy(process: subprocess.Popen, base_url: str, log_path: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the strict host exited:\n{log_path.read_text(errors='replace')}")
        with contextlib.suppress(requests.ConnectionError):
            if requests.get(f"{base_url}/health", timeout=5).status_code == 200:
                return
        time.sleep(0.2)
    raise AssertionError(f"the strict host did not start:\n{log_path.read_text(errors='replace')}")


@pytest.fixture(scope="module")
def azurite_queue(tmp_path_factory):
    emulator = start_azurite(tmp_path_factory.mktemp("func-start-azurite"))
    yield emulator
    emulator.stop()


@pytest.fixture(scope="module")
def strict_host(tmp_path_factory, cosmos_emulator, azurite_queue):
    app_dir = tmp_path_factory.mktemp("func-start")
    settings_file = copy_example(
        app_dir, {"AzureWebJobsStorage": azurite_queue.connection_string, "COSMOS_ENDPOINT": cosmos_emulator.endpoint}
    )
    # The environment wins over the file, as with the Core Tools: a short delay, so the day reconciles
    # within the test rather than 15 minutes later.
    environment = {"RECONCILE_DELAY_SECONDS": "1"}
    process, port, log_path = start_strict(app_dir, settings_file, **environment)
    base_url = f"http://127.0.0.1:{port}/pos/v1"
    try:
        wait_until_healthy(process, base_url, log_path)
        # hq on the same settings, as an operator with that local.settings.json would run it.
        values = {**read_settings_file(settings_file), **environment, "POS_DATA_DIR": str(app_dir / ".data")}
        yield LocalHost(base_url, app_dir / ".data", {**SHELL, **values}, process, log_path)
    finally:
        stop_process(process)


def test_the_example_settings_reconcile_a_business_day_through_the_storage_queue(strict_host, azurite_queue):
    log = strict_host.log()
    assert "queue trigger reconcile_store_day on 'reconcile-requests'" in log
    assert "timer trigger sweep_overdue_closes at '0 */5 * * * *'" in log  # the example's schedule
    partner = make_partner(strict_host, ("TKY-0042",))
    assert partner.put("stores", stores_batch(store("TKY-0042"))).status_code == 202
    assert partner.put("mappings/transaction-types", mapping_batch(("01", "SALE"), ("02", "REFUND"))).status_code == 202
    records = [
        trade_record("TKY-0042", DAY, [Line("SKU-001.A", 2, 550), Line("ラーメン/醤油", 1, 980)], tax=130),
        trade_record("TKY-0042", DAY, [Line("SKU-001.A", -1, 550)], source_type="02", tax=-50),
    ]
    accepted = partner.post("trade-records", trade_batch("TKY-0042", DAY, records))
    assert accepted.status_code == 202, accepted.text
    closed = partner.post("daily-close", daily_close("TKY-0042", DAY, totals_of(records, {"01", "02"}, DIRECTIONS)))
    assert closed.status_code == 202, closed.text

    deadline = time.monotonic() + 30
    while (result := partner.get(f"daily-close/TKY-0042/{DAY}").json())["status"] == "RECEIVED":
        assert time.monotonic() < deadline, strict_host.log()
        time.sleep(0.2)
    assert result["status"] == "MATCHED", result
    # Through the Storage Queue: nothing was ever written to an embedded SQLite queue.
    assert not (strict_host.data_dir / "queue.sqlite3").exists()
    queue = AzureQueue(RECONCILE_QUEUE, connection_string=azurite_queue.connection_string)
    assert queue._client.peek_messages() == [] and queue.poison_count() == 0


@pytest.mark.parametrize(
    "drop, named",
    [
        (("RECONCILE_SWEEP_SCHEDULE",), "RECONCILE_SWEEP_SCHEDULE"),
        (("FUNCTIONS_WORKER_RUNTIME",), "FUNCTIONS_WORKER_RUNTIME"),
    ],
)
def test_strict_mode_has_no_defaults_of_its_own(tmp_path, drop, named):
    settings_file = copy_example(tmp_path, {}, drop=drop)
    process, _, log_path = start_strict(tmp_path, settings_file)
    assert process.wait(60) == 1
    log = log_path.read_text(errors="replace")
    assert "Cannot start" in log and named in log, log


def test_without_strict_mode_a_binding_setting_comes_from_the_example(tmp_path):
    """`make run` on a fresh clone: no local.settings.json, the sweep's schedule from the example."""
    port = free_port()
    log_path = tmp_path / "host.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "devhost", "--settings", str(tmp_path / "missing.json"), "--port", str(port)],
        cwd=tmp_path,
        env={
            **SHELL,
            "PYTHONPATH": str(ROOT),
            "PYTHONUNBUFFERED": "1",
            "POS_DATA_DIR": str(tmp_path / "data"),
            "POS_CREATE_DEMO_PARTNER": "false",
        },
        stdout=log_path.open("wb"),
        stderr=subprocess.STDOUT,
    )
    try:
        wait_until_healthy(process, f"http://127.0.0.1:{port}/pos/v1", log_path)
        schedule = read_settings_file(EXAMPLE_SETTINGS_FILE)["RECONCILE_SWEEP_SCHEDULE"]
        assert f"timer trigger sweep_overdue_closes at '{schedule}'" in log_path.read_text()
        assert "backend sqlite" in log_path.read_text()
    finally:
        stop_process(process)
