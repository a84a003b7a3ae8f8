"""The export timer's catch-up: each run exports the store-days whose result was checked since the export's
checkpoint, then moves the checkpoint (decision 0085).

The checkpoint is a small file beside the files it describes (`_checkpoint.json` at the destination's root):
the instant up to which every store-day checked has been exported there. A run that fails or never runs
leaves it where it was, so the next run exports what that one missed; a destination emptied or new starts
from no checkpoint, and gets every checked day. A day checked again after its export (its records changed,
a newer close, a new mapping) has a later checked_at, so a later run exports it again over the same files.

A result's checked_at is taken when its run starts computing it and saved a moment later: a run reads only
the days checked up to SETTLE ago, so a result being saved now is not passed over by the checkpoint.

A run is bounded, whatever it has to catch up (a first run over years of results, a chain's busiest night):
it takes the span in steps of at most MAX_DAYS_PER_STEP store-days (a span holding more is halved until it
holds fewer), moves the checkpoint after each step, and stops after RUN_BUDGET, well inside the host's
functionTimeout (host.json: 5 minutes). The next run goes on from there; a run killed by its timeout loses
one step at most."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Iterator

import orjson

from core.clock import from_utc_text, to_utc_text, utc_now
from core.ports import ExportDestination
from core.records import StoreDay
from export.layout import CHECKPOINT
from export.store_days import Exported, ExportStorage, Progress, export_days

SETTLE = dt.timedelta(minutes=10)
MAX_DAYS_PER_STEP = 500
RUN_BUDGET = dt.timedelta(minutes=3)
# Before any result: where a first run's span starts (the service keeps nothing checked before it).
EARLIEST = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
# A span this short is exported whole, however many days it holds.
SHORTEST_SPAN = dt.timedelta(milliseconds=1)


def exported_through(destination: ExportDestination) -> dt.datetime | None:
    """The instant up to which every store-day checked has been exported to `destination`; None before its
    first run. Whatever deletes what has been exported (retention) deletes nothing checked after it."""
    data = destination.read(CHECKPOINT)
    return None if data is None else from_utc_text(orjson.loads(data)["exported_through"])


def export_newly_checked(
    storage: ExportStorage,
    destination: ExportDestination,
    now: dt.datetime | None = None,
    progress: Progress | None = None,
    *,
    max_days: int = MAX_DAYS_PER_STEP,
    budget: dt.timedelta = RUN_BUDGET,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[Exported, dt.datetime | None]:
    """Export the store-days checked after the checkpoint and up to SETTLE before `now`, step by step (each
    step moves the checkpoint) until caught up or past `budget`; returns what was written and the checkpoint
    now, which is SETTLE before `now` once caught up."""
    after = exported_through(destination)
    through = (now or utc_now()) - SETTLE
    if after is not None and through <= after:
        return Exported(), after
    exported, deadline = Exported(), clock() + budget.total_seconds()
    for end, days in _steps(storage, after or EARLIEST, through, max_days):
        exported.add(export_days(storage, destination, days, progress))
        note = {"exported_through": to_utc_text(end), "store_days": exported.days, "files": exported.files}
        destination.write(CHECKPOINT, orjson.dumps(note, option=orjson.OPT_INDENT_2))
        after = end
        if clock() >= deadline:
            break
    return exported, after


def caught_up(checkpoint: dt.datetime | None, now: dt.datetime) -> bool:
    """Whether a run at `now` left the checkpoint where a complete run leaves it."""
    return checkpoint is not None and checkpoint >= now - SETTLE


def _steps(
    storage: ExportStorage, start: dt.datetime, through: dt.datetime, max_days: int
) -> Iterator[tuple[dt.datetime, list[tuple[str, StoreDay]]]]:
    """The span (start, through] in consecutive spans, oldest first, each with its at most `max_days` store-days
    (or a span shorter than SHORTEST_SPAN, whole): (its end, its days)."""
    spans = [(start, through)]
    while spans:
        first, last = spans.pop()
        days = storage.days_checked(first, last, max_days + 1)
        if len(days) > max_days and last - first > SHORTEST_SPAN:
            middle = first + (last - first) / 2
            spans += [(middle, last), (first, middle)]  # the older half is taken first
            continue
        if len(days) > max_days:
            days = storage.days_checked(first, last)
        yield last, days
