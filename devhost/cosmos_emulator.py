"""The Cosmos DB emulator: @vercel/cosmosdb-server from node_modules (`make install`), on a free
loopback port over HTTPS (self-signed certificate), for the tests and for `make run-azure`.

The emulator accepts any key; the published key of Microsoft's emulator is used so that the code path
is the one of a real account key. `devhost/cosmosdb_server_fixes.js` is preloaded into the emulator to
close two gaps with Cosmos DB (a 404 for a missing item, keep-alive connections): see that file.

"""

from __future__ import annotations

import shutil
import subprocess
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import requests

from devhost.processes import free_port as _free_port
from devhost.processes import stop_process

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "node_modules" / ".bin" / "cosmosdb-server"
FIXES = Path(__file__).resolve().with_name("cosmosdb_server_fixes.js")
STANDARD_PORT = 8081  # the address of Microsoft's emulator, https://127.0.0.1:8081, which the example names
# The published key of Microsoft's emulator: documented, protects nothing.
EMULATOR_KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU9DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="


@dataclass
class CosmosEmulator:
    endpoint: str
    key: str
    process: subprocess.Popen
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        stop_process(self.process)


def command(port: int) -> list[str]:
    """How to run the emulator on `port` (also usable for a local run against the emulator)."""
    node = shutil.which("node")
    if node is None or not SERVER.exists():
        raise RuntimeError("the Cosmos DB emulator is not installed: run `make install` (needs node and npm)")
    return [node, "--require", str(FIXES), str(SERVER), "--port", str(port), "--host", "127.0.0.1"]


def _answers(endpoint: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the emulator's self-signed certificate
        try:
            requests.get(endpoint, verify=False, timeout=2)
            return True
        except requests.ConnectionError:
            return False


def start_cosmos_emulator(log_path: Path, timeout_seconds: float = 30) -> CosmosEmulator:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(3):  # another process may take the free port before the emulator binds it
        emulator = _start_on(_free_port(), log_path, timeout_seconds)
        if emulator is not None:
            return emulator
    raise RuntimeError(f"the Cosmos DB emulator found no free port:\n{log_path.read_text(errors='replace')}")


def _start_on(port: int, log_path: Path, timeout_seconds: float) -> CosmosEmulator | None:
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(command(port), cwd=ROOT, stdout=log_file, stderr=subprocess.STDOUT)
    emulator = CosmosEmulator(f"https://127.0.0.1:{port}/", EMULATOR_KEY, process, log_path)
    deadline = time.monotonic() + timeout_seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            if "EADDRINUSE" in emulator.log():
                return None
            raise RuntimeError(f"the Cosmos DB emulator exited:\n{emulator.log()}")
        if _answers(emulator.endpoint):
            return emulator
        time.sleep(0.1)
    emulator.stop()
    raise RuntimeError(f"the Cosmos DB emulator did not answer within {timeout_seconds} s:\n{emulator.log()}")
