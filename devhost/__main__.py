"""`python -m devhost`: serve function_app.py at http://127.0.0.1:${PORT:-7071}/pos/v1.

--strict: take settings as the real Functions host does (`func start`), only from the settings file
(local.settings.json) and the environment, with no defaults of this host's own: a %SETTING% a binding
names must be set, and the queue trigger reads the Storage Queue its `connection` names, whatever
POS_BACKEND says. Without it, a binding setting the file leaves unset is taken from
local.settings.json.example, so `make run` works on a fresh clone.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import signal
import sys
import threading
from pathlib import Path

from core.settings import (
    EXAMPLE_SETTINGS_FILE,
    LOCAL_SETTINGS_FILE,
    Settings,
    host_settings,
    load_local_settings,
    queue_settings,
    route_prefix,
)

DEMO_PARTNER = "demo"
DEMO_STORE = "DEMO-001"


def _create_demo_partner(storage) -> None:
    """On an empty database, create a demo partner so a newcomer can try the API at once.
    No key is printed: only `hq key issue` shows a key, once, when it creates it."""
    from core.clock import utc_now
    from core.ports import AdminError

    if storage.list_partners():
        return
    now = utc_now()
    try:
        storage.add_partner(DEMO_PARTNER, "Demo partner", now)
    except AdminError:
        return  # another instance, started at the same moment on the same data, has just created it
    storage.register_stores(DEMO_PARTNER, [DEMO_STORE], now)
    print(
        f"Created demo partner '{DEMO_PARTNER}' with store {DEMO_STORE} registered.\n"
        f"Issue its API key with:  .venv/bin/python -m hq key issue {DEMO_PARTNER}",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devhost", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=None, help="port (default $PORT or 7071)")
    parser.add_argument(
        "--emulators",
        action="store_true",
        help="start the Cosmos DB and Azurite emulators (in memory) and use the Azure backend",
    )
    parser.add_argument(
        "--settings",
        type=Path,
        default=LOCAL_SETTINGS_FILE,
        help="the local.settings.json to read (default: the project's)",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="like `func start`: settings only from that file and the environment, no defaults",
    )
    args = parser.parse_args(argv)
    if args.strict and args.emulators:
        parser.error("--strict takes its addresses from the settings; start the emulators with `make emulators`")

    emulators = _start_emulators() if args.emulators else []
    try:
        return _serve(args)
    finally:
        for emulator in emulators:
            emulator.stop()


def _start_emulators() -> list:
    """The full Azure path on one machine: Cosmos DB and Storage Queue emulators, data in memory."""
    import tempfile
    from pathlib import Path

    from devhost.azurite_emulator import start_azurite
    from devhost.cosmos_emulator import start_cosmos_emulator

    work = Path(tempfile.mkdtemp(prefix="pos-emulators-"))
    print("Starting the Cosmos DB and Azurite emulators (data in memory, gone when the host stops) ...", flush=True)
    cosmos = start_cosmos_emulator(work / "cosmos.log")
    azurite = start_azurite(work)
    os.environ.update(
        {
            "POS_BACKEND": "azure",
            "COSMOS_ENDPOINT": cosmos.endpoint,
            "COSMOS_KEY": cosmos.key,
            "COSMOS_CREATE_CONTAINERS": "true",
            "AzureWebJobsStorage": azurite.connection_string,
        }
    )
    print(
        f"  Cosmos DB emulator at {cosmos.endpoint}, Azurite queues at {azurite.queue_endpoint}\n"
        "  For hq in another terminal (the emulators' published development keys):\n"
        f"  export POS_BACKEND=azure COSMOS_ENDPOINT={cosmos.endpoint} COSMOS_KEY='{cosmos.key}' "
        f"AzureWebJobsStorage='{azurite.connection_string}'",
        flush=True,
    )
    return [cosmos, azurite]


def _arm_faults() -> None:
    """Crash tests only: POS_FAULTS="point:count,..." (devhost/fault_injection.py) makes those steps fail, and
    POS_FAULTS_KILL="point:probability,..." kills the process there. Read once, here, at start; no request
    can turn them on, and the Functions app itself never reads them."""
    text = os.environ.get("POS_FAULTS", "").strip()
    if text:
        from devhost import fault_injection

        armed = fault_injection.arm_from_text(text)
        print(
            "FAULT INJECTION IS ON (POS_FAULTS): " + ", ".join(f"{f.name} x{f.times}" for f in armed),
            file=sys.stderr,
            flush=True,
        )
    kills = os.environ.get("POS_FAULTS_KILL", "").strip()
    if kills:  # the chaos run (loadtest/chaos.py): these points kill this process with SIGKILL
        from devhost import fault_injection

        armed = fault_injection.arm_kills_from_text(kills)
        print(f"FAULT KILLS ARE ON (POS_FAULTS_KILL): {kills} ({len(armed)} points)", file=sys.stderr, flush=True)


def _install_throttling() -> None:
    """Throttling tests only: COSMOS_INJECT_THROTTLING (devhost/cosmos_throttling.py) makes chosen Cosmos DB
    calls answer 429. Read once, here, at start; the Functions app itself never reads it."""
    if os.environ.get("COSMOS_INJECT_THROTTLING", "").strip():
        from devhost import cosmos_throttling

        cosmos_throttling.install_from_environment()


def _where_data_is(settings: Settings, emulators: bool) -> str:
    if settings.backend != "azure":
        return f"backend sqlite, data in {settings.data_dir}"
    where = "in the emulators' memory, gone when the host stops" if emulators else "kept by that account"
    return f"backend azure: Cosmos DB {settings.cosmos_endpoint} database {settings.cosmos_database}, data {where}"


def _reconciliation_line(delay_seconds: int) -> str:
    """Said at start: a newcomer who pushes a day otherwise waits 15 minutes without knowing why."""
    minutes = f" ({delay_seconds / 60:g} min)" if delay_seconds >= 120 else ""
    return (
        f"Daily closes are reconciled {delay_seconds} s{minutes} after they arrive (RECONCILE_DELAY_SECONDS).\n"
        "  Reconcile one now with: .venv/bin/python -m hq reconcile run PARTNER_ID STORE_ID DATE"
    )


class StrictSettingsError(Exception):
    """A setting the real Functions host would need is missing or unusable."""


def _check_strict_settings() -> None:
    """What `func start` refuses to start without (the settings file's values are in the environment)."""
    if os.environ.get("FUNCTIONS_WORKER_RUNTIME", "").strip().lower() != "python":
        raise StrictSettingsError("FUNCTIONS_WORKER_RUNTIME must be 'python'")


def _binding_settings(functions: list, strict: bool) -> None:
    """Every %SETTING% a binding names must be set, as the host resolves them at start. Outside strict
    mode, one the settings file leaves unset comes from local.settings.json.example: the one place
    that value lives, besides infra/ for Azure."""
    from devhost.functions import binding_setting_names

    names = binding_setting_names(functions)
    if not strict:
        load_local_settings(EXAMPLE_SETTINGS_FILE, only=names)
    missing = sorted(name for name in names if name not in os.environ)
    if missing:
        raise StrictSettingsError(f"the bindings name app settings that are not set: {', '.join(missing)}")


def _trigger_queue(settings: Settings, function, strict: bool):
    """The queue a queue trigger reads. The real host reads the Storage account of the trigger's
    `connection`, never the SQLite queue; strict mode does the same (POS_BACKEND=sqlite is then never
    reconciled, as under `func start`)."""
    from backends.queues import open_queue

    if not strict:
        return open_queue(settings, function.queue_name)
    from backends.azure_queue import CONNECTION, AzureQueue

    if function.connection != CONNECTION:
        raise StrictSettingsError(f"queue trigger {function.name}: connection {function.connection} is not supported")
    try:
        return AzureQueue.from_settings(settings, function.queue_name)
    except ValueError as error:
        raise StrictSettingsError(str(error)) from None


def _serve(args) -> int:
    load_local_settings(args.settings)
    try:
        if args.strict:
            _check_strict_settings()
        return _serve_with_settings(args)
    except StrictSettingsError as error:
        print(f"Cannot start: {error} (settings from {args.settings} and the environment).", file=sys.stderr)
        return 1


def _serve_with_settings(args) -> int:
    settings = Settings.from_env()
    _arm_faults()
    _install_throttling()
    from triggers.telemetry import JsonFormatter

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())  # structured, like Application Insights customDimensions
    logging.basicConfig(level=settings.log_level.upper(), handlers=[handler])
    port = args.port if args.port is not None else int(os.environ.get("PORT") or 7071)

    from devhost.functions import load_app, read_functions
    from devhost.server import FunctionsHttpServer
    from devhost.triggers import QueueTriggerRunner, TimerTriggerRunner
    from devhost.workers import WORKER_PROCESS_COUNT, WorkerCountError, supervise, worker_process_count
    from triggers.composition import current_backend

    host = host_settings()  # host.json and its AzureFunctionsJobHost__ overrides, as the host reads them
    prefix = route_prefix(host)
    functions = load_app().get_functions()  # allowed once per process
    _binding_settings(functions, args.strict)
    table = read_functions(functions)

    try:
        processes = worker_process_count(os.environ)
    except WorkerCountError as error:
        raise StrictSettingsError(str(error)) from None
    # Opened here, before any worker forks: the schema (or the containers) is made once, not by several
    # workers racing on a fresh database.
    backend = current_backend()
    if settings.create_demo_partner:
        _create_demo_partner(backend.storage)
    try:
        server = FunctionsHttpServer((args.host, port), table, prefix)
    except OSError as error:
        print(f"Cannot listen on {args.host}:{port}: {error.strerror}. Set PORT to a free port.", file=sys.stderr)
        return 1
    base = f"http://{args.host}:{server.server_address[1]}/{prefix}"
    print(f"Partner POS ingestion service on {base} ({_where_data_is(settings, args.emulators)})")
    for function in sorted(table.http, key=lambda f: f.template):
        print(f"  {','.join(sorted(function.methods)):<4} {base}/{function.template}")
    for function in table.queues:
        print(f"  queue trigger {function.name} on '{function.queue_name}'")
    for function in table.timers:
        print(f"  timer trigger {function.name} at '{function.schedule}'")
    if processes > 1:
        print(f"  {processes} worker processes ({WORKER_PROCESS_COUNT})")
    print(_reconciliation_line(settings.reconcile_delay_seconds))
    print("Press Ctrl+C to stop.", flush=True)

    def serve(index: int) -> int:
        """One worker: its own storage connections, the queue triggers, the timers in the first only."""
        if processes > 1:
            current_backend.cache_clear()  # never a connection opened before the fork
        stop = threading.Event()
        runners: list[threading.Thread] = [
            QueueTriggerRunner(f, _trigger_queue(settings, f, args.strict), queue_settings(host), stop)
            for f in table.queues
        ]
        if index == 0:
            runners += [TimerTriggerRunner(f, stop) for f in table.timers]
        for runner in runners:
            runner.start()

        def _stop(signum, frame):
            stop.set()
            threading.Thread(target=server.shutdown, daemon=True).start()

        signal.signal(signal.SIGTERM, _stop)
        signal.signal(signal.SIGINT, _stop)
        # Everything loaded so far (the app, its libraries, the backend) lives as long as the process: move
        # it out of the collector's generations, so that the full collections a large batch's many objects
        # set off do not walk it again on every request (p99 of a 500-record batch -20 to -25 % here).
        gc.collect()
        gc.freeze()
        server.serve_forever(poll_interval=0.5)
        server.server_close()
        return 0

    if processes == 1:
        return serve(0)
    return supervise(processes, serve)


if __name__ == "__main__":
    sys.exit(main())
