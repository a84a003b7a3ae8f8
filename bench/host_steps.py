"""`python -m bench.host_steps`: what the local host adds to an accept over HTTP, step by step (decision 0005).

The host runs in this process as `python -m devhost` runs it (its server, the app's real function table,
the benchmark's settings of bench/over_http.py, the JSON log line written to a file, gc.freeze()), without
its queue and timer triggers, which sit idle during the benchmark (a poll a second); the
benchmark's 500-record bodies are POSTed to it over a real socket, one persistent connection. Each step
of a request is timed with time.thread_time() in the thread that serves it, so neither the client nor
a neighbour's process is counted. The use case alone, called in this thread on bodies of the same size,
alternates with the requests: "the host's own" is the whole request minus its use case.

    python -m bench.host_steps [--requests 25] [--records 500] [--rate-limit 0]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import http.client
import importlib
import logging
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from unittest import mock

from bench import generate, harness
from bench.measure import ms

WARMUP = 2
WHOLE = "whole request"
USE_CASE = "  use case (post_trade_records)"
GC_LABEL = "garbage collection (inside the steps above)"

# (label, owner, attribute): the steps of one request, in the order they run. Nested steps (everything
# from "key check" to "log line and counters") run inside "function"; "use case" inside the action.
STEPS: list[tuple[str, str, str]] = [
    ("request line and headers", "devhost.server:_Handler", "parse_request"),
    ("body read", "devhost.server:_Handler", "_read_body"),
    ("function (route, request, handler)", "devhost.server:FunctionsHttpServer", "dispatch"),
    ("  key check (hash, one read)", "triggers.http", "_authenticate"),
    ("  rate limit count (one write)", "ingest.access", "count_request"),
    ("  key's last-used hour", "ingest.access", "note_key_use"),
    (USE_CASE, "ingest.trade_records", "post_trade_records"),
    ("  answer body (orjson)", "triggers.http", "json_response"),
    ("  log line and counters", "triggers.telemetry", "record_request"),
    ("answer written", "devhost.server:_Handler", "_send"),
]


def _owner(name: str):
    """ "module" or "module:Class": where a step's function is looked up when it is called."""
    module_name, _, class_name = name.partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, class_name) if class_name else module


class StepClock:
    """CPU time of each step, in the thread that serves the requests only, summed per request."""

    def __init__(self) -> None:
        self.serving: int | None = None  # the ident of the thread serving the benchmark's connection
        self.current: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self.requests: list[dict[str, float]] = []
        self.requests_calls: list[dict[str, int]] = []
        self._gc_started = 0.0

    def timed(self, label: str, call: Callable) -> Callable:
        def step(*args, **kwargs):
            if threading.get_ident() != self.serving:
                return call(*args, **kwargs)
            started = time.thread_time()
            try:
                return call(*args, **kwargs)
            finally:
                self.current[label] += time.thread_time() - started
                self.calls[label] += 1

        return step

    def whole(self, call: Callable) -> Callable:
        """handle_one_request: one request, from its request line to its answer (None when the client
        closed the connection)."""

        def request(handler, *args, **kwargs):
            self.serving = threading.get_ident()
            started = time.thread_time()
            try:
                return call(handler, *args, **kwargs)
            finally:
                if self.current:
                    self.current[WHOLE] = time.thread_time() - started
                    self.calls[WHOLE] = 1
                    self.requests.append(dict(self.current))
                    self.requests_calls.append(dict(self.calls))
                self.current.clear()
                self.calls.clear()

        return request

    def on_gc(self, phase: str, _info: dict) -> None:
        if threading.get_ident() != self.serving:
            return
        if phase == "start":
            self._gc_started = time.thread_time()
        else:
            self.current[GC_LABEL] += time.thread_time() - self._gc_started
            self.calls[GC_LABEL] += 1


@contextlib.contextmanager
def instrumented(clock: StepClock) -> Iterator[None]:
    from devhost.server import _Handler

    with contextlib.ExitStack() as stack:
        for label, owner_name, attribute in STEPS:
            owner = _owner(owner_name)
            stack.enter_context(mock.patch.object(owner, attribute, clock.timed(label, getattr(owner, attribute))))
        stack.enter_context(mock.patch.object(_Handler, "handle_one_request", clock.whole(_Handler.handle_one_request)))
        gc.callbacks.append(clock.on_gc)
        stack.callback(gc.callbacks.remove, clock.on_gc)
        yield


def _start_host(data: Path, rate_limit: int):
    """The local host in a thread of this process, set up as bench/over_http.py sets up `python -m devhost`."""
    os.environ.update(
        {
            "POS_BACKEND": "sqlite",  # the storage harness.open_service set up
            "POS_DATA_DIR": str(data),
            "POS_CREATE_DEMO_PARTNER": "false",
            "RATE_LIMIT_PER_MINUTE": str(rate_limit),
        }
    )
    os.environ.pop("APPLICATIONINSIGHTS_CONNECTION_STRING", None)
    from core.settings import (
        EXAMPLE_SETTINGS_FILE,
        LOCAL_SETTINGS_FILE,
        host_settings,
        load_local_settings,
        route_prefix,
    )
    from devhost.functions import binding_setting_names, load_app, read_functions
    from devhost.server import FunctionsHttpServer
    from triggers.telemetry import JsonFormatter

    load_local_settings(LOCAL_SETTINGS_FILE)
    log_handler = logging.FileHandler(data / "host.log")
    log_handler.setFormatter(JsonFormatter())
    logging.basicConfig(level="INFO", handlers=[log_handler], force=True)
    functions = load_app().get_functions()
    load_local_settings(EXAMPLE_SETTINGS_FILE, only=binding_setting_names(functions))
    server = FunctionsHttpServer(("127.0.0.1", 0), read_functions(functions), route_prefix(host_settings()))
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.5}, daemon=True).start()
    return server


def measure(requests: int, records: int, rate_limit: int, seed: int = generate.DEFAULT_SEED) -> dict:
    """Per-request CPU of each step (ms) and the use case alone in this thread (ms). No wall time: the
    client shares this process's GIL, so its waits are not the host's (bench/over_http.py measures wall
    time with the host in a process of its own)."""
    tmp = Path(tempfile.mkdtemp(prefix="host-steps-"))
    service = harness.open_service(tmp / "host")
    key = harness.issue_key(service.storage)
    alone = harness.open_service(tmp / "alone")
    server = _start_host(tmp / "host", rate_limit)
    over_http = generate.batch_bodies(WARMUP + requests, records, seed=seed, tag="H")
    in_process = generate.batch_bodies(WARMUP + requests, records, seed=seed, tag="I")
    headers = {"Content-Type": "application/json", "x-functions-key": key}
    from ingest.trade_records import post_trade_records  # before it is instrumented

    clock = StepClock()
    use_case_alone = []
    gc.collect()
    gc.freeze()  # as the host does before it serves
    connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=300)
    try:
        with instrumented(clock):
            for body, other in zip(over_http, in_process, strict=True):
                connection.request("POST", "/pos/v1/trade-records", body, headers)
                response = connection.getresponse()
                answer = response.read()
                if response.status != 202:
                    raise RuntimeError(f"the host answered {response.status}: {answer[:500]!r}")
                started = time.thread_time()
                outcome = post_trade_records(alone.storage, harness.NullQueue(), alone.partner, other, 0)
                use_case_alone.append(ms(time.thread_time() - started))
                if outcome.http_status != 202:
                    raise RuntimeError(f"the use case answered {outcome.as_dict()}")
    finally:
        connection.close()
        server.shutdown()
        server.server_close()
    served = clock.requests[WARMUP:]
    return {
        "requests": len(served),
        "records": records,
        "body_bytes": len(over_http[-1]),
        "steps_ms": {label: [ms(request.get(label, 0.0)) for request in served] for label in _labels()},
        "calls": {
            label: statistics.median(calls.get(label, 0) for calls in clock.requests_calls[WARMUP:])
            for label in _labels()
        },
        "host_own_ms": [ms(request[WHOLE] - request.get(USE_CASE, 0.0)) for request in served],
        "use_case_alone_ms": use_case_alone[WARMUP:],
    }


def _labels() -> list[str]:
    return [WHOLE] + [label for label, _, _ in STEPS] + [GC_LABEL]


def render(result: dict) -> str:
    def line(label: str, samples: list[float], calls: str = "") -> str:
        return f"{label:<44} {statistics.median(samples):9.2f} {min(samples):9.2f} {calls:>6}"

    lines = [
        f"The local host serving {result['requests']} POSTs of {result['records']} records "
        f"({result['body_bytes'] / 1e6:.2f} MB): CPU of the serving thread per request, ms",
        f"{'step':<44} {'median':>9} {'min':>9} {'calls':>6}",
        *(line(label, samples, f"{result['calls'][label]:g}") for label, samples in result["steps_ms"].items()),
        line("the host's own (whole request - use case)", result["host_own_ms"]),
        line("use case alone, in-process (same run)", result["use_case_alone_ms"]),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.host_steps", description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=25, help="measured requests (default 25)")
    parser.add_argument("--records", type=int, default=generate.BATCH_LIMIT, help="records per body (default 500)")
    parser.add_argument(
        "--rate-limit", type=int, default=0, help="RATE_LIMIT_PER_MINUTE (default 0, off, as in bench/over_http.py)"
    )
    args = parser.parse_args(argv)
    print(render(measure(args.requests, args.records, args.rate_limit)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
