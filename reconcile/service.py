"""Run a reconciliation, sweep overdue closes, and re-run days a new mapping affects.

Queue delivery is at least once, so running the same request twice gives the same result, and
a result is stored only if the close it reconciled is still the latest one for the store-day.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging

from core.clock import utc_now
from core.money import currency_exponent
from core.ports import ClosedDay, DelayedQueue, ReconcileRequest, Storage
from reconcile import messages
from reconcile.totals import compute_totals, differences, expected_minor, payment_directions, raw_differences

log = logging.getLogger("pos.reconcile")


def reconcile(storage: Storage, request: ReconcileRequest, now: dt.datetime | None = None) -> ClosedDay | None:
    """Reconcile the close named by `request`; None when a newer close has replaced it."""
    day = storage.get_closed_day(request.partner_id, request.store_id, request.business_date)
    if day is None or day.close_batch_id != request.close_batch_id:
        log.info("reconciliation skipped: close %s of %s/%s is no longer the latest", request.close_batch_id,
                 request.store_id, request.business_date)
        return None
    exponent = currency_exponent(day.currency)
    rows = storage.store_day_rows(request.partner_id, request.store_id, request.business_date)
    standard_of = storage.get_mapping(request.partner_id).standard_code_of()
    directions = payment_directions(storage.payment_directions(request.partner_id))
    actual = compute_totals(rows, standard_of, directions)
    expected = expected_minor(day.expected, exponent)
    differing = differences(expected, actual)
    result = dataclasses.replace(
        day,
        status="MISMATCHED" if differing else "MATCHED",
        checked_at=now or utc_now(),
        actual=actual.as_wire(exponent),
        differences=differing,
        details=_details(storage, request, day, actual, expected, exponent),
    )
    if not storage.save_result(request.partner_id, result):
        log.info("reconciliation result dropped: a newer close arrived for %s/%s", request.store_id,
                 request.business_date)
        return None
    log.info("reconciled partner_id=%s store_id=%s business_date=%s status=%s differences=%s",
             request.partner_id, request.store_id, request.business_date, result.status, differing)
    return result


def _details(storage: Storage, request: ReconcileRequest, day: ClosedDay, actual, expected, exponent) -> dict:
    """What HQ knows that helps a partner find the cause of a mismatch."""
    seqs = storage.batch_seqs(request.partner_id, request.store_id, request.business_date)
    expected_batches = day.expected.get("batch_count", 0)
    return {
        "raw_differences": raw_differences(expected, actual, exponent),
        "batch_count_received": len(seqs),
        "batch_count_expected": expected_batches,
        "batch_seqs_received": seqs,
        "missing_batch_seqs": sorted(set(range(1, expected_batches + 1)) - set(seqs)),
        "unmapped_source_codes": sorted(actual.unmapped_source_codes),
        "unknown_payment_types": sorted(actual.unknown_payment_types),
        "source_codes": sorted(actual.source_codes),
    }


def request_for(partner_id: str, day: ClosedDay) -> ReconcileRequest:
    return ReconcileRequest(partner_id, day.store_id, day.business_date, day.close_batch_id)


def sweep(storage: Storage, queue: DelayedQueue, grace_seconds: int, now: dt.datetime | None = None) -> int:
    """Re-enqueue closes still RECEIVED past their due time (a lost or failed message)."""
    now = now or utc_now()
    overdue = storage.days_due(now - dt.timedelta(seconds=grace_seconds))
    for partner_id, day in overdue:
        queue.send(messages.encode(request_for(partner_id, day)), 0)
        storage.postpone(partner_id, day.store_id, day.business_date, now)
    if overdue:
        log.warning("sweep re-enqueued %d overdue reconciliations", len(overdue))
    return len(overdue)


def rerun_after_mapping(storage: Storage, queue: DelayedQueue, partner_id: str, changed_codes: set[str]) -> int:
    """Reconcile again every checked day of the partner that holds a source code whose mapping
    changed; days not yet checked will use the new mapping anyway."""
    count = 0
    for day in storage.closed_days(partner_id):
        seen = set((day.details or {}).get("source_codes", []))
        if day.status != "RECEIVED" and seen & changed_codes:
            queue.send(messages.encode(request_for(partner_id, day)), 0)
            count += 1
    return count
