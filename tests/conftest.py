"""Test fixtures: the real local host over real HTTP, on a temporary SQLite backend.

One host process serves the whole session; each test makes its own partner (unique ids), so
tests stay independent without restarting the host. HQ set-up goes through the real `hq` code
against the same database the host uses.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sqlite3
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests

from devhost.processes import free_port, stop_process, wait_until_serving

ROOT = Path(__file__).resolve().parent.parent

pytest_plugins = ["tests.emulators", "tests.identity_provider"]


@dataclass
class LocalHost:
    """A running `python -m devhost` process."""

    base_url: str
    data_dir: Path
    env: dict
    process: subprocess.Popen
    log_path: Path

    def url(self, path: str) -> str:
        return f"{self.base_url}/{path.lstrip('/')}"

    def hq(self, *args: str) -> subprocess.CompletedProcess:
        """Run the real command line as HQ would, against this host's data."""
        return subprocess.run(
            [sys.executable, "-m", "hq", *args], cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=60
        )

    def hq_in_process(self, *args: str) -> subprocess.CompletedProcess:
        """The same `hq` code in this process, against this host's data: for set-up in every test,
        where starting an interpreter per command would dominate the suite's run time."""
        from hq.cli import main

        saved = dict(os.environ)
        out, err = io.StringIO(), io.StringIO()
        try:
            os.environ.clear()
            os.environ.update(self.env)
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(list(args))
        finally:
            os.environ.clear()
            os.environ.update(saved)
        return subprocess.CompletedProcess(["hq", *args], code, out.getvalue(), err.getvalue())

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def storage(self):
        """The host's SQLite storage, opened from the test process to check what was stored."""
        from backends.sqlite.storage import SqliteStorage

        return SqliteStorage(self.data_dir)

    def query(self, sql: str, *args) -> list[tuple]:
        """A read-only query on the host's database, for what the storage port does not read back."""
        with contextlib.closing(sqlite3.connect(f"file:{self.data_dir / 'pos.sqlite3'}?mode=ro", uri=True)) as db:
            return db.execute(sql, args).fetchall()

    def stop(self) -> None:
        stop_process(self.process)


def start_host(tmp: Path, data_dir: Path | None = None, **settings: str) -> LocalHost:
    """A local host whose log is in tmp, on the SQLite data in data_dir (default tmp/data): several hosts
    may share one data_dir, as instances share one database."""
    port = free_port()
    data_dir = data_dir or tmp / "data"
    env = {
        **os.environ,
        "POS_DATA_DIR": str(data_dir),
        "PORT": str(port),
        "POS_CREATE_DEMO_PARTNER": "false",
        "RATE_LIMIT_PER_MINUTE": "0",
        "AUTH_FAILURES_PER_MINUTE": "0",
        "RECONCILE_DELAY_SECONDS": "1",
        "PYTHONUNBUFFERED": "1",
        **settings,
    }
    log_path = tmp / "host.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "devhost"], cwd=ROOT, env=env, stdout=log_path.open("wb"), stderr=subprocess.STDOUT
    )
    host = LocalHost(f"http://127.0.0.1:{port}/pos/v1", data_dir, env, process, log_path)
    try:
        wait_until_serving(process, port, "/pos/v1/health", "local host", host.log)
    except RuntimeError:
        host.stop()
        raise
    return host


def start_azure_host(
    tmp: Path, cosmos, queue_connection: str, database: str | None = None, **settings: str
) -> LocalHost:
    """The local host on the Azure adapters: a database of its own on the Cosmos DB emulator `cosmos` (or
    `database`, to share one with other hosts), and the Storage account (Azurite, or a proxy in front of
    it) that `queue_connection` names."""
    return start_host(
        tmp,
        POS_BACKEND="azure",
        COSMOS_ENDPOINT=cosmos.endpoint,
        COSMOS_KEY=cosmos.key,
        COSMOS_DATABASE=database or f"e2e-{uuid.uuid4().hex[:8]}",
        COSMOS_CREATE_CONTAINERS="true",
        AzureWebJobsStorage=queue_connection,
        **settings,
    )


@pytest.fixture(scope="session")
def host(tmp_path_factory) -> LocalHost:
    running = start_host(tmp_path_factory.mktemp("host"))
    yield running
    running.stop()


@pytest.fixture(scope="session")
def azure_host(tmp_path_factory, cosmos_emulator) -> LocalHost:
    """The local host on the Azure adapters: Cosmos DB emulator (its own database) and its own Azurite,
    so no other test touches its queue."""
    from devhost.azurite_emulator import start_azurite

    tmp = tmp_path_factory.mktemp("azure-host")
    azurite = start_azurite(tmp)
    running = start_azure_host(tmp, cosmos_emulator, azurite.connection_string)
    yield running
    running.stop()
    azurite.stop()


@pytest.fixture(scope="session", params=["sqlite", "azure"])
def backend_host(request) -> LocalHost:
    """The local host on each backend in turn: end-to-end tests that use it run on both."""
    return request.getfixturevalue("host" if request.param == "sqlite" else "azure_host")


@dataclass
class PartnerClient:
    """A partner with one key, calling the host over HTTP."""

    host: LocalHost
    partner_id: str
    key: str
    key_id: str
    stores: list[str] = field(default_factory=list)

    def headers(self, key: str | None = None) -> dict:
        return {"x-functions-key": self.key if key is None else key}

    def get(self, path: str, **kwargs) -> requests.Response:
        kwargs.setdefault("headers", self.headers())
        return requests.get(self.host.url(path), timeout=30, **kwargs)

    def put(self, path: str, body, **kwargs) -> requests.Response:
        return self._send("put", path, body, **kwargs)

    def post(self, path: str, body, **kwargs) -> requests.Response:
        return self._send("post", path, body, **kwargs)

    def _send(self, method: str, path: str, body, **kwargs) -> requests.Response:
        headers = {**self.headers(), **kwargs.pop("headers", {})}
        if isinstance(body, (bytes, str)):
            headers.setdefault("Content-Type", "application/json")
            return requests.request(method, self.host.url(path), data=body, headers=headers, timeout=60, **kwargs)
        return requests.request(method, self.host.url(path), json=body, headers=headers, timeout=60, **kwargs)


def issue_key(host: LocalHost, partner_id: str) -> tuple[str, str]:
    """A new key (key_id, key) of the partner, read from `hq key issue --format json` (the text form a
    person reads is checked in tests/e2e/test_cli.py)."""
    issued = host.hq_in_process("key", "issue", partner_id, "--format", "json")
    assert issued.returncode == 0, issued.stderr
    key = json.loads(issued.stdout)
    return key["key_id"], key["key"]


def make_partner(host: LocalHost, stores: tuple[str, ...] = ("S1",), prefix: str = "p") -> PartnerClient:
    partner_id = f"{prefix}-{uuid.uuid4().hex[:10]}"
    added = host.hq_in_process("partner", "add", partner_id, "--name", f"Test {partner_id}")
    assert added.returncode == 0, added.stderr
    if stores:
        registered = host.hq_in_process("store", "register", partner_id, *stores)
        assert registered.returncode == 0, registered.stderr
    key_id, key = issue_key(host, partner_id)
    return PartnerClient(host, partner_id, key, key_id, list(stores))


@pytest.fixture
def partner(host) -> PartnerClient:
    return make_partner(host)


@pytest.fixture
def new_partner(host):
    """Factory for more partners in one test: new_partner(stores=("A", "B"))."""
    return lambda stores=("S1",), prefix="p": make_partner(host, tuple(stores), prefix)


def new_batch_id() -> str:
    return str(uuid.uuid4())
