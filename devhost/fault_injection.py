"""Fault injection at the app's fault points (core/faults.py), for the crash tests and the chaos run: this
module is the hook they install; the Functions app never imports it (.funcignore does not even deploy it).

`POINTS` enumerates every step, with the flows that reach it; tests/e2e/test_faults.py injects a failure at
each (point, flow) and proves that the retry converges. A point is armed:

- in the tests' own process: `with fault_injection.injected("storage.data_written"):` raises InjectedFault
  at the first time the step is reached (`skip`, `times`), or runs `action` there instead (to pause a
  reconciliation while a new close arrives, for example);
- in the local host process: `POS_FAULTS="name:count,name2"` (count defaults to 1), read once by
  `python -m devhost` at start;
- for a chaos run (loadtest/chaos.py), in the local host process: `POS_FAULTS_KILL="name:probability"`
  ("*" for every point) makes each hit of the point kill the process with SIGKILL, with that probability:
  a real crash in the middle of a write, with no exception, no rollback and no `finally`.

No request can arm a fault: no route, header or body reaches this module.

An injected fault is an exception raised at that step, which is what a crash there leaves behind for
the next attempt: the writes before it are done, none after it is; an open SQLite transaction rolls
back, as it would if the process died.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from core import faults

BATCH_FLOWS = ("stores", "products", "mappings", "trade-records", "daily-close")


@dataclass(frozen=True)
class FaultPoint:
    name: str
    step: str  # what is done, and what is not yet, when the point is reached
    flows: tuple[str, ...]  # the use cases that reach it
    adapter: str | None = None  # only this storage adapter reaches it; None: the use case, on every adapter


POINTS: tuple[FaultPoint, ...] = (
    # -- a batch acceptance (ingest/batches.py accept, every write endpoint) --
    FaultPoint(
        "batch.validated", "the request is valid and its batch_id was not known; nothing is written yet", BATCH_FLOWS
    ),
    # -- a daily close: the queue message first, then the close and its marker --
    FaultPoint(
        "close.before_enqueue", "the close is valid and its batch_id unknown; nothing sent or written", ("daily-close",)
    ),
    FaultPoint("close.enqueued", "the reconciliation message is sent; the close is not stored", ("daily-close",)),
    # -- master data on Cosmos DB: one item at a time (SQLite writes a batch in one transaction) --
    FaultPoint(
        "cosmos.master_written",
        "one store, product or modifier group is written; the others of the batch may not be",
        ("stores", "products"),
        "cosmos",
    ),
    # -- trade records on Cosmos DB: per record, then per batch --
    FaultPoint(
        "cosmos.version_entry",
        "a record's version entry moved forward; the store-days it left are not buried, the record is not written",
        ("trade-records",),
        "cosmos",
    ),
    FaultPoint(
        "cosmos.record",
        "the record is written in its store-day, after the tombstones of the store-days it left",
        ("trade-records",),
        "cosmos",
    ),
    FaultPoint(
        "cosmos.tombstone",
        "a tombstone is written where the record was; the record is not written in its new store-day",
        ("trade-records",),
        "cosmos",
    ),
    FaultPoint(
        "cosmos.batch_entry",
        "the batch entry (read by batch_seqs) is written; the marker is not",
        ("trade-records",),
        "cosmos",
    ),
    # -- every batch, in the adapters --
    FaultPoint(
        "storage.data_written",
        "all the batch's data (records, close, mapping, masters) is written; the "
        "marker is not committed (SQLite: inside the one transaction that holds "
        "both)",
        BATCH_FLOWS,
    ),
    FaultPoint("cosmos.marker_committed", "the marker is created; the adapter has not returned", BATCH_FLOWS, "cosmos"),
    FaultPoint("batch.before_response", "data and marker are committed; the answer is not sent", BATCH_FLOWS),
    FaultPoint(
        "records.saved",
        "the trade records and their marker are committed; the store-days they changed are not reopened",
        ("trade-records",),
    ),
    FaultPoint(
        "records.reopened",
        "a store-day the batch changed is back to RECEIVED; its reconciliation message is not sent",
        ("trade-records",),
    ),
    FaultPoint(
        "mapping.before_rerun",
        "the mapping and its marker are committed; the days it changes are not re-enqueued",
        ("mappings",),
    ),
    # -- a reconciliation (reconcile/service.py, run by the queue trigger) --
    FaultPoint("reconcile.close_read", "the close is read; nothing else", ("reconcile",)),
    FaultPoint(
        "reconcile.totals_read", "the store-day's totals are read; the mapping and directions are not", ("reconcile",)
    ),
    FaultPoint("reconcile.before_save", "the result is computed; it is not saved", ("reconcile",)),
    FaultPoint("reconcile.saved", "the result is saved; the queue message is not deleted", ("reconcile",)),
    # -- the sweep of overdue closes (timer trigger) --
    FaultPoint("sweep.enqueued", "an overdue close's message is re-sent; its due time is not moved", ("sweep",)),
)

NAMES = frozenset(point.name for point in POINTS)


class InjectedFault(Exception):
    """Raised at an armed fault point: the step failed there, as if the process had died."""

    def __init__(self, name: str) -> None:
        super().__init__(f"injected fault at {name}")
        self.point = name


@dataclass
class Fault:
    """An armed point: skip its first `skip` hits, then act on the next `times` (-1: every one)."""

    name: str
    times: int = 1
    skip: int = 0
    action: Callable[[], None] | None = None
    reached: int = 0
    fired: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _due(self) -> bool:
        with self._lock:
            self.reached += 1
            if self.reached <= self.skip or self.times == self.fired:
                return False
            self.fired += 1
            return True


_armed: dict[str, Fault] = {}


def _reached(name: str) -> None:
    """The hook core/faults.py calls at every point while a fault is armed."""
    fault = _armed.get(name)
    if fault is not None and fault._due():
        if fault.action is None:
            raise InjectedFault(name)
        fault.action()


def _install_while_armed() -> None:
    faults.install(_reached if _armed else None)


def _check(name: str) -> None:
    if name not in NAMES:
        raise ValueError(f"unknown fault point {name!r}; the points are listed in devhost/fault_injection.py")


def arm(name: str, *, times: int = 1, skip: int = 0, action: Callable[[], None] | None = None) -> Fault:
    _check(name)
    fault = Fault(name, times, skip, action)
    _armed[name] = fault
    _install_while_armed()
    return fault


def disarm(name: str | None = None) -> None:
    """Disarm one point, or every point."""
    if name is None:
        _armed.clear()
    else:
        _armed.pop(name, None)
    _install_while_armed()


@contextlib.contextmanager
def injected(name: str, *, times: int = 1, skip: int = 0, action: Callable[[], None] | None = None) -> Iterator[Fault]:
    """Arm `name` for the duration of the block; the Fault tells how often it was reached and fired."""
    fault = arm(name, times=times, skip=skip, action=action)
    try:
        yield fault
    finally:
        if _armed.get(name) is fault:
            disarm(name)


def arm_from_text(text: str) -> list[Fault]:
    """POS_FAULTS for the local host: "name:count,name2" (count defaults to 1; -1 = every time)."""
    armed = []
    for part in (piece.strip() for piece in text.split(",")):
        if not part:
            continue
        name, _, count = part.partition(":")
        try:
            times = int(count) if count.strip() else 1
        except ValueError:
            raise ValueError(f"POS_FAULTS: {part!r} is not name or name:count") from None
        armed.append(arm(name.strip(), times=times))
    return armed


KILL_LINE = "FAULT KILL at "  # written to stderr just before a kill: the chaos run counts kills per point


def kill_process(name: str) -> None:
    """Die here as a crash would (kill -9): no exception, no rollback, no `finally`, nothing flushed.
    The line goes straight to file descriptor 2, so the log has it even though the process never exits."""
    os.write(2, f"{KILL_LINE}{name}\n".encode())
    os.kill(os.getpid(), signal.SIGKILL)


def arm_kills_from_text(text: str, rng: random.Random | None = None) -> list[Fault]:
    """POS_FAULTS_KILL for a chaos run: "name:probability,..." with "*" for every point not named; each hit
    of such a point kills this process with that probability (0 < probability <= 1)."""
    rng = rng or random.Random()
    wanted: dict[str, float] = {}
    for part in (piece.strip() for piece in text.split(",")):
        if not part:
            continue
        name, _, probability = part.partition(":")
        try:
            chance = float(probability)
        except ValueError:
            chance = -1.0
        if not 0 < chance <= 1:
            raise ValueError(f"POS_FAULTS_KILL: {part!r} is not name:probability with 0 < probability <= 1")
        name = name.strip()
        if name == "*":
            wanted.update({other: chance for other in NAMES if other not in wanted})
        else:
            _check(name)
            wanted[name] = chance
    return [arm(name, times=-1, action=_kill_with(name, chance, rng)) for name, chance in sorted(wanted.items())]


def _kill_with(name: str, chance: float, rng: random.Random) -> Callable[[], None]:
    def maybe_kill() -> None:
        if rng.random() < chance:
            kill_process(name)

    return maybe_kill
