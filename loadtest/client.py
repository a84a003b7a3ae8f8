"""The load's clients: one keep-alive connection per simulated store in a closed loop, the latencies and
errors they see, the sampler of the host's memory, and the wait for every close sent to be reconciled."""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field

from loadtest.host import PREFIX, Host
from loadtest.workload import Request, Worker


@dataclass
class Stats:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    records: int = 0
    error_samples: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self) -> int:
        return sum(len(values) for values in self.latencies.values())

    def add(self, request: Request, seconds: float, error: str | None) -> None:
        with self.lock:
            self.latencies[request.endpoint].append(seconds)
            if error is None:
                self.records += request.records
            else:
                self.errors[request.endpoint] += 1
                if len(self.error_samples) < 10:
                    self.error_samples.append(f"{request.endpoint}: {error}")


class Client:
    """One keep-alive connection, reopened after a failure."""

    def __init__(self, port: int, key: str) -> None:
        self.port, self.key = port, key
        self.connection: http.client.HTTPConnection | None = None

    def send(self, request: Request) -> tuple[int, bytes]:
        if self.connection is None:
            self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        headers = {"x-functions-key": self.key}
        if request.body is not None:
            headers["Content-Type"] = "application/json"
        try:
            self.connection.request(request.method, PREFIX + request.path, body=request.body, headers=headers)
            response = self.connection.getresponse()
            return response.status, response.read()
        except (OSError, http.client.HTTPException):
            self.connection.close()
            self.connection = None
            raise

    def call(self, request: Request, stats: Stats | None) -> int | None:
        started = time.perf_counter()
        error = None
        status = None
        try:
            status, body = self.send(request)
            if status not in request.expect:
                error = f"HTTP {status} {body[:300].decode(errors='replace')}"
        except (OSError, http.client.HTTPException) as exc:
            error = f"{type(exc).__name__}: {exc}"
        if stats is not None:
            stats.add(request, time.perf_counter() - started, error)
        elif error is not None:
            raise RuntimeError(f"set-up request {request.endpoint} failed: {error}")
        return status


def drive(worker: Worker, port: int, stop: threading.Event, stats: Stats) -> None:
    client = Client(port, worker.key)
    for request in worker.setup_requests():
        client.call(request, None)
    while not stop.is_set():
        client.call(worker.next_request(), stats)


def sample_memory(
    host: Host, stop: threading.Event, every: float, started: float, stats: Stats, samples: list[tuple[float, int, int]]
) -> None:
    while True:
        rss = host.rss_kib()
        if rss is not None:
            samples.append((time.monotonic() - started, rss, stats.count()))
        if stop.wait(every):
            return


def wait_for_results(
    workers: list[Worker], port: int, timeout: float, not_matched: list[str] | None = None
) -> dict[str, int]:
    """Every close sent must be reconciled, and MATCHED; `not_matched` gets "store/date status" of the others."""
    outcome: dict[str, int] = defaultdict(int)
    deadline = time.monotonic() + timeout
    for worker in workers:
        client = Client(port, worker.key)
        for day in worker.closed_days:
            while True:
                status, body = client.send(
                    Request("GET daily-close", "GET", f"daily-close/{worker.store_id}/{day.isoformat()}", None, (200,))
                )
                state = json.loads(body)["status"] if status == 200 else f"HTTP {status}"
                if state not in ("RECEIVED",) or time.monotonic() > deadline:
                    outcome[state] += 1
                    if state != "MATCHED" and not_matched is not None:
                        not_matched.append(f"{worker.store_id}/{day.isoformat()} {state}")
                    break
                time.sleep(0.2)
    return dict(outcome)
