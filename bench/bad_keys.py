"""What a flood of bad API keys costs (decision 0037): storage calls and CPU per request.

The real request path (`triggers.http.handle`, the limiter of `triggers/auth_failures.py`, the key check of
`ingest/access.py`) runs in this process on a SqliteStorage in a temporary directory whose every call
is counted. Three floods of random keys shaped like real ones:

- one address, limit on (the default 60 per minute): after the limit, no storage call;
- the same flood with the limit off (`AUTH_FAILURES_PER_MINUTE=0`): one key lookup per request, what
  every bad key cost before (a SQLite lookup here; a Cosmos DB point read over the network in Azure);
- every request from a new address: the limit cannot help (each address is under it), and the memory
  it keeps stays at its cap.

    python -m bench.bad_keys                 # 20,000 requests per flood
    python -m bench.bad_keys --requests 500  # a smoke test (tests/e2e/test_bad_keys.py runs it)
"""

from __future__ import annotations

import argparse
import secrets
import tempfile
import time
import tracemalloc
from pathlib import Path

import azure.functions as func

from backends.factory import Backend
from core.settings import Settings
from triggers import auth_failures, http
from triggers.auth_failures import FailureLimiter

DEFAULT_LIMIT = 60


class CountingStorage:
    """The storage, every method call counted."""

    def __init__(self, storage) -> None:
        self._storage = storage
        self.calls = 0

    def __getattr__(self, name):
        attribute = getattr(self._storage, name)
        if not callable(attribute):
            return attribute

        def counted(*args, **kwargs):
            self.calls += 1
            return attribute(*args, **kwargs)

        return counted


def _request(address: str) -> func.HttpRequest:
    headers = {"x-functions-key": "posk_" + secrets.token_urlsafe(32), "x-forwarded-for": f"{address}:50432"}
    return func.HttpRequest("GET", "http://localhost/pos/v1/mappings/transaction-types", headers=headers, body=b"")


def _flood(storage: CountingStorage, limiter: FailureLimiter, addresses: list[str]) -> dict:
    """Send one bad key per address given (in order); statuses, storage calls and CPU per request."""
    requests = [_request(address) for address in addresses]  # made before the clock starts
    statuses: dict[int, int] = {}
    before_calls = storage.calls
    auth_failures.limiter = lambda: limiter
    started = time.process_time()
    for request in requests:
        status = http.handle(request, lambda call: (200, {})).status_code
        statuses[status] = statuses.get(status, 0) + 1
    cpu = time.process_time() - started
    return {
        "requests": len(requests),
        "statuses": statuses,
        "storage_calls": storage.calls - before_calls,
        "cpu_us_per_request": round(cpu / len(requests) * 1e6, 1),
    }


def run(count: int, limit: int = DEFAULT_LIMIT) -> dict:
    from backends.sqlite.storage import SqliteStorage

    saved_limiter = auth_failures.limiter
    saved_backend = http.current_backend
    with tempfile.TemporaryDirectory() as tmp:
        storage = CountingStorage(SqliteStorage(Path(tmp)))
        backend = Backend(Settings.from_env(), storage, queue=None)
        http.current_backend = lambda: backend
        try:
            limiter = FailureLimiter(limit)
            reaching = _flood(storage, limiter, ["203.0.113.7"] * limit)  # up to the limit: each one read
            one_address = _flood(storage, limiter, ["203.0.113.7"] * count)  # over it
            off = _flood(storage, FailureLimiter(0), ["203.0.113.7"] * count)
            many = _flood(storage, FailureLimiter(limit), [_address(i) for i in range(count)])
        finally:
            auth_failures.limiter = saved_limiter
            http.current_backend = saved_backend
    return {
        "limit_per_minute": limit,
        "up_to_the_limit": reaching,
        "over_the_limit": one_address,
        "limit_off": off,
        "every_request_a_new_address": many,
        "limiter_memory": _limiter_memory(),
    }


def _address(index: int) -> str:
    return f"10.{index // 65536 % 256}.{index // 256 % 256}.{index % 256}"


def _limiter_memory() -> dict:
    """The limiter's memory at its caps: twice as many addresses and keys as it keeps, one failure each."""
    limiter = FailureLimiter(DEFAULT_LIMIT)
    tracemalloc.start()
    for index in range(2 * auth_failures.MAX_ADDRESSES):
        limiter.failed(_address(index), None)
        limiter.accepted(f"{index:064x}")
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "addresses_kept": limiter.tracked_addresses(),
        "traced_mb": round(current / 2**20, 2),
        "traced_peak_mb": round(peak / 2**20, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bad_keys", description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=20_000, help="requests per flood (default 20,000)")
    args = parser.parse_args(argv)
    result = run(args.requests)
    for name, figures in result.items():
        print(f"{name}: {figures}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
