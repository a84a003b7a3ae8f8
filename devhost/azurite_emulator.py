"""Azurite: installed from the npm registry by the project's package.json (`make install`). The queue
service alone, in memory on a free loopback port, for the tests and `make run-azure`; or all three
services (blob, queue, table) on their standard ports, which "UseDevelopmentStorage=true" names, for
`make emulators` and `func start` (the Functions host keeps its locks and timer state in blobs).
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.settings import AZURITE_PORTS, DEVELOPMENT_ACCOUNT, DEVELOPMENT_KEY
from devhost.processes import free_port as _free_port
from devhost.processes import stop_process

ROOT = Path(__file__).resolve().parent.parent
AZURITE_QUEUE = ROOT / "node_modules" / ".bin" / "azurite-queue"
AZURITE = ROOT / "node_modules" / ".bin" / "azurite"  # blob, queue and table in one process
ACCOUNT = DEVELOPMENT_ACCOUNT
# Azurite's published development key: the emulator accepts only this one; it protects nothing.
ACCOUNT_KEY = DEVELOPMENT_KEY
# In memory; any client API version (the Functions host and the SDKs may be newer than the emulator).
COMMON_OPTIONS = [
    "--inMemoryPersistence",
    "--extentMemoryLimit",
    "64",
    "--silent",
    "--skipApiVersionCheck",
    "--disableTelemetry",
]


def connection_string(port: int) -> str:
    return (
        f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={ACCOUNT_KEY};"
        f"QueueEndpoint=http://127.0.0.1:{port}/{ACCOUNT};"
    )


@dataclass(frozen=True)
class Azurite:
    port: int
    process: subprocess.Popen
    log_path: Path

    @property
    def queue_endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}/{ACCOUNT}"

    @property
    def connection_string(self) -> str:
        return connection_string(self.port)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        stop_process(self.process)


def standard_command() -> list[str]:
    """Blob, queue and table on Azurite's standard ports (10000-10002), as UseDevelopmentStorage=true names them."""
    if not AZURITE.exists():
        raise RuntimeError(f"{AZURITE} is missing: run `make install` (npm ci) to install the emulators")
    return [
        str(AZURITE),
        "--blobHost",
        "127.0.0.1",
        "--blobPort",
        str(AZURITE_PORTS["Blob"]),
        "--queueHost",
        "127.0.0.1",
        "--queuePort",
        str(AZURITE_PORTS["Queue"]),
        "--tableHost",
        "127.0.0.1",
        "--tablePort",
        str(AZURITE_PORTS["Table"]),
        *COMMON_OPTIONS,
    ]


def _answers(port: int) -> bool:
    """Ready when the queue service answers a real request (listing queues), not just a TCP connect."""
    from azure.core.exceptions import AzureError
    from azure.storage.queue import LinearRetry, QueueServiceClient

    service = QueueServiceClient.from_connection_string(
        connection_string(port), retry_policy=LinearRetry(retry_total=0), connection_timeout=1, read_timeout=2
    )
    with contextlib.suppress(AzureError):
        list(service.list_queues(results_per_page=1))
        return True
    return False


def start_azurite(work_dir: Path, attempts: int = 3) -> Azurite:
    """Start azurite-queue in memory; a port taken between choosing and binding it is retried."""
    return _start(AZURITE_QUEUE, "queue", _answers, work_dir, attempts)


AZURITE_BLOB = ROOT / "node_modules" / ".bin" / "azurite-blob"


def start_azurite_blob(work_dir: Path, attempts: int = 3) -> Azurite:
    """Start azurite-blob in memory on a free loopback port (the Parquet export's Blob destination in tests);
    its account URL is http://127.0.0.1:PORT/devstoreaccount1."""
    return _start(AZURITE_BLOB, "blob", _blob_answers, work_dir, attempts)


def _start(binary: Path, service: str, answers: Callable[[int], bool], work_dir: Path, attempts: int) -> Azurite:
    """One Azurite service (`queue`, `blob`) on a free port, ready once `answers(port)`."""
    if not binary.exists():
        raise RuntimeError(f"{binary} is missing: run `make install` (npm ci) to install the emulators")
    for _ in range(attempts):
        port = _free_port()
        log_path = work_dir / f"azurite-{service}-{port}.log"
        # cwd is a scratch directory: Azurite writes nothing to the project even if it writes debug files.
        process = subprocess.Popen(
            [str(binary), f"--{service}Host", "127.0.0.1", f"--{service}Port", str(port), *COMMON_OPTIONS],
            cwd=work_dir,
            stdout=log_path.open("wb"),
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        emulator = Azurite(port, process, log_path)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and process.poll() is None:
            if answers(port):
                return emulator
            time.sleep(0.1)
        emulator.stop()
        if "EADDRINUSE" not in emulator.log():
            raise RuntimeError(f"Azurite ({service}) did not start on port {port}:\n{emulator.log()}")
    raise RuntimeError(f"Azurite ({service}) could not find a free port")


def _blob_answers(port: int) -> bool:
    """Ready when the blob service answers HTTP at all (an error status too)."""
    from urllib.error import HTTPError
    from urllib.request import urlopen

    try:
        urlopen(f"http://127.0.0.1:{port}/", timeout=1)
    except HTTPError:
        return True
    except OSError:
        return False
    return True
