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
    process: subprocess.Popen | None
    port: int
    env: dict
    work: Path
    emulators: list = field(default_factory=list)

    @property
    def log_path(self) -> Path:
        return self.work / "host.log"

    def launch(self, **settings: str) -> bool:
        """Start `python -m devhost` on this host's port, data and emulators (`settings` for this start
        only); True once it answers /health, False if it exited first (the chaos run kills it at will)."""
        with self.log_path.open("ab") as log:  # appended: a restarted host keeps one log
            self.process = subprocess.Popen(
                [sys.executable, "-m", "devhost"],
                cwd=ROOT,
                env={**self.env, **settings},
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            with contextlib.suppress(OSError, http.client.HTTPException):
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                connection.request("GET", PREFIX + "health")
                if connection.getresponse().status == 200:
                    connection.close()
                    return True
            time.sleep(0.2)
        raise RuntimeError("the host did not answer /health within a minute")

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
        if self.process is None:
            return None
        try:
            for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        except OSError:
            return None
        return None

    def stop_process(self) -> None:
        """Stop the host process (SIGTERM, then SIGKILL); the emulators keep running."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)

    def stop(self) -> None:
        self.stop_process()
        for emulator in self.emulators:
            emulator.stop()


def prepare_host(work: Path, backend: str, **settings: str) -> Host:
    """A host not started yet: a free port, a data folder in `work`, the rate limit off and a 1 s
    reconciliation delay (`settings` add to these), and on "azure" the Cosmos DB and Azurite emulators,
    started here and kept running across restarts of the host."""
    env = {
        **os.environ,
        "POS_DATA_DIR": str(work / "data"),
        "PORT": str(free_port()),
        "RATE_LIMIT_PER_MINUTE": "0",
        "POS_CREATE_DEMO_PARTNER": "false",
        "RECONCILE_DELAY_SECONDS": "1",
        "PYTHONUNBUFFERED": "1",
        **settings,
    }
    env.pop("POS_FAULTS", None)
    env.pop("POS_FAULTS_KILL", None)
    emulators = []
    if backend == "azure":
        from devhost.azurite_emulator import start_azurite
        from devhost.cosmos_emulator import start_cosmos_emulator

        cosmos = start_cosmos_emulator(work / "cosmos.log")
        try:
            azurite = start_azurite(work)
        except BaseException:  # interrupted or failed: leave no emulator behind
            cosmos.stop()
            raise
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
    return Host(None, int(env["PORT"]), env, work, emulators)


def start_host(work: Path, backend: str) -> Host:
    host = prepare_host(work, backend)
    launch_or_stop(host)
    return host


def launch_or_stop(host: Host) -> None:
    """Launch a prepared host; one that fails or exits at start is stopped, and its log's end raised."""
    try:
        started = host.launch()
    except RuntimeError:
        host.stop()
        raise
    if not started:
        host.stop()
        raise RuntimeError(f"the host exited at start:\n{host.log_path.read_text(errors='replace')[-4000:]}")


def onboard(host: Host, partners: int, stores: int, seed: int) -> list[Worker]:
    workers: list[Worker] = []
    for number in range(partners):
        partner_id = f"load-{number + 1}-{uuid.uuid4().hex[:6]}"
        store_ids = [f"L{number + 1}-{index + 1}" for index in range(stores)]
        host.hq("partner", "add", partner_id, "--name", f"Load partner {number + 1}")
        host.hq("store", "register", partner_id, *store_ids)
        key = host.hq("key", "issue", partner_id).strip().splitlines()[-1]
        workers += [Worker(partner_id, key, store_id, seed * 1000 + len(workers)) for store_id in store_ids]
    return workers
