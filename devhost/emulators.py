"""`make emulators`: Azurite and the Cosmos DB emulator in the foreground, on the standard addresses that
local.settings.json.example names, for `func start` (or `make run` with that file copied).

  Azurite (blob, queue, table)  http://127.0.0.1:10000-10002  AzureWebJobsStorage=UseDevelopmentStorage=true
  Cosmos DB emulator            https://127.0.0.1:8081         COSMOS_ENDPOINT, the emulator's published key

Data lives in the emulators' memory and is gone when they stop (Ctrl+C).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading

from core.settings import AZURITE_PORTS
from devhost.azurite_emulator import standard_command as azurite_command
from devhost.cosmos_emulator import STANDARD_PORT
from devhost.cosmos_emulator import command as cosmos_command
from devhost.processes import stop_process


def main() -> int:
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    # Their own output goes to this terminal: an address already in use shows there.
    processes = {
        "Azurite": subprocess.Popen(azurite_command(), stdin=subprocess.DEVNULL),
        "Cosmos DB emulator": subprocess.Popen(cosmos_command(STANDARD_PORT), stdin=subprocess.DEVNULL),
    }
    ports = ", ".join(f"{service.lower()} {port}" for service, port in AZURITE_PORTS.items())
    print(
        f"Azurite on 127.0.0.1 ({ports}); Cosmos DB emulator on https://127.0.0.1:{STANDARD_PORT}\n"
        "Now, in another terminal: `func start` (or `make run`) with local.settings.json copied from\n"
        "local.settings.json.example. Ctrl+C stops both; their data is in memory only.",
        flush=True,
    )
    try:
        while not stop.wait(0.5):
            exited = [name for name, process in processes.items() if process.poll() is not None]
            if exited:
                print(f"{', '.join(exited)} exited; stopping.", file=sys.stderr, flush=True)
                return 1
        return 0
    finally:
        for process in processes.values():
            stop_process(process)


if __name__ == "__main__":
    sys.exit(main())
