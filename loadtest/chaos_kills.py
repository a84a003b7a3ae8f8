"""The chaos run's controller: kills the local host with SIGKILL, over and over, and starts it again on the
same data (the SQLite file, or the same emulators, which keep running).

Each life of the host ends in a kill -9, of one of two kinds:
- at a named step (devhost/fault_injection.py): the life is started with POS_FAULTS_KILL="point:probability", so the
  host kills itself there, in the middle of a SQLite transaction or between the writes of a Cosmos DB
  batch; the points are taken in turn from a shuffled cycle;
- at a random moment: the controller sends SIGKILL after a random time, wherever the host is then (one life
  in three, and any armed life whose point was not reached in time).
The kill's point is read from the line the host writes just before it dies (fault_injection.KILL_LINE).
"""

from __future__ import annotations

import random
import re
import signal
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from devhost import fault_injection
from loadtest.host import Host

RANDOM_MOMENT = "random moment"
# Points the chaos workload never reaches: it uploads the mapping once at set-up, never moves a record to
# another day and never corrects a day already closed (loadtest/workload.py).
UNREACHED = frozenset({"mapping.before_rerun", "records.reopened", "cosmos.tombstone"})
# The chance that one hit of a point kills: lower for the points hit many times a request. New records are
# written in transactional batches (a version entry hit per index bucket, up to 16 a batch; a record hit per
# batch of up to 100), corrections one by one (both hit per record).
PER_HIT_CHANCE = {"cosmos.version_entry": 0.05, "cosmos.record": 0.2, "cosmos.master_written": 0.2}
DEFAULT_CHANCE = 0.5


def kill_points(backend: str) -> list[tuple[str, float]]:
    """The named steps a kill can be armed at on this backend, with the chance per hit."""
    adapter = "cosmos" if backend == "azure" else "sqlite"
    return [
        (point.name, PER_HIT_CHANCE.get(point.name, DEFAULT_CHANCE))
        for point in fault_injection.POINTS
        if point.adapter in (None, adapter) and point.name not in UNREACHED
    ]


@dataclass
class Kills:
    by_point: Counter = field(default_factory=Counter)
    unreached: Counter = field(default_factory=Counter)  # armed lives whose point did not come in time
    restarts_seconds: list[float] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.by_point.values())


@dataclass
class Plan:
    """Which kill each life gets: `first` in order (a test's), then one life in three at a random moment and
    the others at the next point of a shuffled cycle of `points`. Seeded, so a run's choices repeat."""

    points: Sequence[tuple[str, float]]
    rng: random.Random
    first: Sequence[tuple[str, float]] = ()
    random_seconds: tuple[float, float] = (0.3, 3.0)  # a random-moment life, after /health answers
    armed_seconds: tuple[float, float] = (2.0, 6.0)  # an armed life waits this long for its point
    _first: list[tuple[str, float]] = field(default_factory=list)
    _cycle: list[tuple[str, float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._first = list(self.first)

    def next_life(self) -> tuple[tuple[str, float] | None, float]:
        """(point and chance, or None for a random moment; the seconds before the controller kills)."""
        if self._first:
            return self._first.pop(0), self.rng.uniform(*self.armed_seconds)
        if self.rng.random() < 1 / 3:
            return None, self.rng.uniform(*self.random_seconds)
        if not self._cycle:
            self._cycle = list(self.points)
            self.rng.shuffle(self._cycle)
        return self._cycle.pop(0), self.rng.uniform(*self.armed_seconds)


def control(host: Host, plan: Plan, stop: threading.Event, kills: Kills, until_kills: int | None = None) -> None:
    """Kill and restart the host until `stop` (or `until_kills` kills); then leave it running, unarmed, for
    the drain. The host is running (unarmed) when this starts: its first life ends at a random moment."""
    armed: tuple[str, float] | None = None
    wait = plan.rng.uniform(*plan.random_seconds)
    offset = host.log_path.stat().st_size
    while True:
        stopped = _live(host, wait, stop)
        _end_life(host, kills, offset, armed[0] if armed else None)
        if stopped or (until_kills is not None and kills.total >= until_kills):
            break
        armed, wait = plan.next_life()
        settings = {"POS_FAULTS_KILL": f"{armed[0]}:{armed[1]}"} if armed else {}
        offset = host.log_path.stat().st_size  # before the start: a kill line may come at once
        started = time.monotonic()
        host.launch(**settings)  # False when killed at its point before /health answered: that life is over
        kills.restarts_seconds.append(time.monotonic() - started)
    if not host.launch():
        raise RuntimeError("the host did not start again after the chaos")


def _live(host: Host, seconds: float, stop: threading.Event) -> bool:
    """Let the host run for `seconds`, or until it kills itself; True when the run is to stop."""
    deadline = time.monotonic() + seconds
    while host.process is not None and host.process.poll() is None and time.monotonic() < deadline:
        if stop.wait(0.05):
            return True
    return stop.is_set()


def _end_life(host: Host, kills: Kills, offset: int, armed: str | None) -> None:
    """SIGKILL the host unless it killed itself at a point; count the kill where it landed."""
    process = host.process
    assert process is not None
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
    code = process.wait(30)
    with host.log_path.open("rb") as log:
        log.seek(offset)
        tail = log.read().decode(errors="replace")
    if code != -signal.SIGKILL:
        raise RuntimeError(f"the host exited by itself (code {code}):\n{tail[-3000:]}")
    landed = re.findall(re.escape(fault_injection.KILL_LINE) + r"(\S+)", tail)
    kills.by_point[landed[-1] if landed else RANDOM_MOMENT] += 1
    if armed and not landed:
        kills.unreached[armed] += 1
