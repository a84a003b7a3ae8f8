"""The local host under load: `python -m devhost` on a free port with its own data folder and the rate
limit off (on the Cosmos DB and Azurite emulators with LOAD_BACKEND=azure), its resident memory, and
the partners onboarded through the real `hq` command line."""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from devhost.processes import free_port
from loadtest.workload import Worker

ROOT = Path(__file__).resolve().parent.parent
PREFIX = "/pos/v1/"


@dataclass
class Host:
    process: subprocess.Popen
    port: int
    env: dict
    work: Path
    emulators: list = field(default_factory=list)

    def hq(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "hq", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"hq {' '.join(args)} failed: {done.stderr}")
        return done.stdout

    def rss_kib(self) -> int | None:
        try:
            for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        except OSError:
            return None
        return None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        for emulator in self.emulators:
            emulator.stop()


def start_host(work: Path, backend: str) -> Host:
    port = free_port()
    env = {
        **os.environ,
        "POS_DATA_DIR": str(work / "data"),
        "PORT": str(port),
        "RATE_LIMIT_PER_MINUTE": "0",
        "POS_CREATE_DEMO_PARTNER": "false",
        "RECONCILE_DELAY_SECONDS": "1",
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("POS_FAULTS", None)
    emulators = []
    if backend == "azure":
        from devhost.azurite_emulator import start_azurite
        from devhost.cosmos_emulator import start_cosmos_emulator

        cosmos = start_cosmos_emulator(work / "cosmos.log")
        azurite = start_azurite(work)
        emulators = [cosmos, azurite]
        env.update(
            {
                "POS_BACKEND": "azure",
                "COSMOS_ENDPOINT": cosmos.endpoint,
                "COSMOS_KEY": cosmos.key,
                "COSMOS_DATABASE": "load",
                "COSMOS_CREATE_CONTAINERS": "true",
                "AzureWebJobsStorage": azurite.connection_string,
            }
        )
    log = (work / "host.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "devhost"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    host = Host(process, port, env, work, emulators)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            host.stop()
            raise RuntimeError(f"the host exited at start:\n{(work / 'host.log').read_text(errors='replace')}")
        with contextlib.suppress(OSError, http.client.HTTPException):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", PREFIX + "health")
            if connection.getresponse().status == 200:
                connection.close()
                return host
        time.sleep(0.2)
    host.stop()
    raise RuntimeError("the host did not answer /health within a minute")


def onboard(host: Host, partners: int, stores: int, seed: int) -> list[Worker]:
    workers = []
    for number in range(partners):
        partner_id = f"load-{number + 1}-{uuid.uuid4().hex[:6]}"
        store_ids = [f"L{number + 1}-{index + 1}" for index in range(stores)]
        host.hq("partner", "add", partner_id, "--name", f"Load partner {number + 1}")
        host.hq("store", "register", partner_id, *store_ids)
        key = host.hq("key", "issue", partner_id).strip().splitlines()[-1]
        workers += [Worker(partner_id, key, store_id, seed * 1000 + len(workers)) for store_id in store_ids]
    return workers
