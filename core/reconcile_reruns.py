"""When a store-day is reconciled (again): the request for one, and the re-runs its inputs call for.

A close asks for its day's reconciliation (ingest/daily_close.py); a mapping upload re-runs the days
whose result resolved a source code otherwise (rerun_after_mapping), and accepted records that change
a day with a result reopen it (reopen_changed_days). ingest and reconcile both ask, so this lives below
both; the requests travel as core/reconcile_messages.py writes them.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Protocol

from core import faults, reconcile_messages
from core.clock import utc_now
from core.ports import MasterReads, Reconciliations
from core.queue_ports import DelayedQueue
from core.records import ClosedDay, ReconcileRequest, RecordChanges, StoreDay
from core.retention import is_retired

log = logging.getLogger("pos.reconcile")


class MappingRerunStorage(MasterReads, Reconciliations, Protocol):
    """What re-running the days a new mapping re-maps uses of storage."""


def request_for(partner_id: str, day: ClosedDay) -> ReconcileRequest:
    return ReconcileRequest(partner_id, day.store_id, day.business_date, day.close_batch_id)


def is_stale(day: ClosedDay, standard_of: dict[str, str]) -> bool | None:
    """Whether a checked day's result resolved one of its source codes otherwise than `standard_of`
    does; None for a result saved before results recorded their mapping (mapped_source_codes)."""
    details = day.details
    if details is None or "mapped_source_codes" not in details:
        return None
    used = details["mapped_source_codes"]
    return any(standard_of.get(code) != used.get(code) for code in details.get("source_codes", []))


def rerun_after_mapping(
    storage: MappingRerunStorage, queue: DelayedQueue, partner_id: str, changed_codes: set[str]
) -> int:
    """Reconcile again every checked day of the partner whose result resolved a source code otherwise
    than the mapping in effect now; days not yet checked will use it anyway.

    Comparing with what each result used, rather than with the mapping before the upload, makes this
    safe to repeat: a mapping upload that failed after its mapping was stored (and before or while
    re-enqueueing) is completed by the partner's retry, which is answered ALREADY_RECEIVED and runs
    this again. `changed_codes` only serves results saved before they recorded their mapping. A store-day
    past the retention keeps its result."""
    standard_of = storage.get_mapping(partner_id).standard_code_of()
    today = utc_now().date()
    count = 0
    for day in storage.closed_days(partner_id):
        if day.status == "RECEIVED" or is_retired(day.business_date, today, storage.retention_days):
            continue  # a retired day keeps its result: its records are gone (decision 0086)
        stale = is_stale(day, standard_of)
        if stale is None:
            stale = day.details is not None and bool(set(day.details.get("source_codes", [])) & changed_codes)
        if stale:
            queue.send(reconcile_messages.encode(request_for(partner_id, day)), 0)
            count += 1
    return count


def reopen_changed_days(
    storage: Reconciliations,
    queue: DelayedQueue,
    partner_id: str,
    batch_day: StoreDay,
    changes: RecordChanges,
    delay_seconds: int,
    checked_before: dt.datetime | None = None,
) -> int:
    """Put back to RECEIVED every store-day with a result whose records a batch changed (the batch's own day
    when one of its records was newer, and each day a record moved out of), and send its message, delayed.

    Only the call that reopened a day sends: a day already RECEIVED is due anyway (its message, or the sweep
    when that was lost), so however many batches arrive, a day is reconciled once per delay. Safe to repeat:
    a retry of the batch, answered ALREADY_RECEIVED, runs this again from its marker, with `checked_before`
    the batch's time of receipt, so that a result computed since is not thrown away again. A day past the
    retention that a record moved out of keeps its result (its records may be gone already: decision
    0086). Returns the number of days reopened."""
    now = utc_now()
    due_at = now + dt.timedelta(seconds=delay_seconds)
    reopened = 0
    days = []
    for day in changes.days(batch_day):
        if is_retired(day.business_date, now.date(), storage.retention_days):
            log.info("store-day %s is past the retention: it keeps its result though a record moved out", day)
            continue
        days.append((day, [move for move in changes.moves if day in (move.left, move.to)]))
    for (day, _), closed in zip(days, storage.reopen_days(partner_id, days, due_at, checked_before), strict=True):
        if closed is None:
            continue
        faults.point("records.reopened")
        queue.send(reconcile_messages.encode(request_for(partner_id, closed)), delay_seconds)
        reopened += 1
        log.info("store-day %s reopened: accepted records changed it after its reconciliation", day)
    return reopened
