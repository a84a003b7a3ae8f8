"""GET /health (spec 4.10): whether storage and the queue answer, from a result kept a few seconds.

/health needs no key, so anyone can call it at any rate. Each check costs a Cosmos DB point read and a
Storage Queue request; kept for CHECK_INTERVAL_SECONDS, a check runs at most once per interval per
instance whatever the rate of calls, and while one runs the others answer the last result instead of
waiting for it (a check that hangs on a network timeout must not hold the worker's threads).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import azure.functions as func

from backends.factory import Backend
from core.ports import BackendUnavailable
from triggers.http import Call, Result, handle

# Probes (Azure's health check, a load balancer, a partner's monitoring) call every 10 s to 1 min: a
# result up to 5 s old tells them the same, and bounds the cost to 2 backend requests per 5 s per instance.
CHECK_INTERVAL_SECONDS = 5.0

log = logging.getLogger("pos.health")


@dataclass(frozen=True)
class Health:
    status: int
    body: dict[str, object]


def check(backend: Backend) -> Health:
    """Ask each part once; a part that does not answer is named in the body, with a 503."""
    started = time.perf_counter()
    checks: dict[str, str] = {}
    for name, part in (("storage", backend.storage), ("queue", backend.queue)):
        try:
            part.ping()
            checks[name] = "ok"
        except BackendUnavailable:
            checks[name] = "unavailable"
    healthy = all(state == "ok" for state in checks.values())
    # One line per check (at most one per interval): what the backends answered, and how fast.
    log.info(
        "health check: %s",
        "ok" if healthy else "unavailable",
        extra={
            "event": "health_check",
            **checks,  # flat: OpenTelemetry drops dict attributes
            "duration_ms": round((time.perf_counter() - started) * 1000, 1),
        },
    )
    return Health(200 if healthy else 503, {"status": "ok" if healthy else "unavailable", "checks": checks})


class CachedHealth:
    """The last check's result, checked again once it is `interval` seconds old."""

    def __init__(self, interval: float = CHECK_INTERVAL_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self._interval = interval
        self._clock = clock
        self._checking = threading.Lock()
        self._result: Health | None = None
        self._backend: Backend | None = None
        self._checked_at = 0.0

    def _fresh(self, backend: Backend) -> Health | None:
        """The last result if it is of this backend and younger than the interval."""
        if self._result is not None and self._backend is backend and self._clock() - self._checked_at < self._interval:
            return self._result
        return None

    def get(self, backend: Backend) -> Health:
        fresh = self._fresh(backend)
        if fresh is not None:
            return fresh
        last = self._result if self._backend is backend else None
        # A check is under way: answer the last result rather than wait (or wait when there is none).
        if last is not None and not self._checking.acquire(blocking=False):
            return last
        if last is None:
            self._checking.acquire()
        try:
            result = self._fresh(backend)  # another caller may have checked while this one waited
            if result is None:
                result = check(backend)
                # Timed from the end of the check: a check slowed by timeouts is not repeated at once.
                self._result, self._backend, self._checked_at = result, backend, self._clock()
            return result
        finally:
            self._checking.release()


HEALTH = CachedHealth()

bp = func.Blueprint()


def _health(call: Call) -> Result:
    health = HEALTH.get(call.backend)
    return health.status, health.body


@bp.route(route="health", methods=["GET"])
def health(req: func.HttpRequest, context: func.Context) -> func.HttpResponse:
    return handle(req, _health, context, authenticated=False)
