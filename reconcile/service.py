"""Run a reconciliation and sweep overdue closes (the re-runs other changes call for: core/reconcile_reruns.py).

Queue delivery is at least once, so running the same request twice gives the same result, and
a result is stored only if the close it reconciled is still the latest one for the store-day. The queue
worker leaves a close that has its current result as it is, so each close's result is written once.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import logging
from typing import Protocol

from core import faults, reconcile_messages
from core.clock import utc_now
from core.money import currency_exponent
from core.ports import BatchMarkers, MasterReads, Overview, Reconciliations, TradeRecordReads
from core.queue_ports import DelayedQueue
from core.reconcile_reruns import is_stale, request_for
from core.records import ClosedDay, ReconcileRequest
from core.retention import is_retired
from core.stored_json import ResultDetails
from reconcile.totals import (
    DayTotals,
    ExpectedTotals,
    breakdown_by_type,
    compute_totals,
    differences,
    expected_minor,
    raw_differences,
)
from reference.codes import payment_directions_in_effect

log = logging.getLogger("pos.reconcile")

# A mapping saved or records accepted while a run was reading make the run start again (see reconcile);
# beyond this many back-to-back changes, the mapping upload's own re-run (or the sweep) covers the day.
MAX_RUNS = 3


class _Rerun(enum.Enum):
    """_reconcile_once's answer when the day's records changed during the run, or another run of the same
    close saved its result first (this run's result was not saved)."""

    CHANGED_MEANWHILE = enum.auto()


_CHANGED_MEANWHILE = _Rerun.CHANGED_MEANWHILE


class ReconcileStorage(Reconciliations, BatchMarkers, TradeRecordReads, MasterReads, Protocol):
    """What a reconciliation run uses of storage: the close, the day's sums and batch_seqs, the mapping and
    payment directions, and the conditional save of its result."""


class CloseNotCommitted(Exception):
    """The message names a close whose request has not committed (yet): the close sends its message
    before it commits, and a short delay or a slow commit can deliver the message first."""


def reconcile(
    storage: ReconcileStorage,
    request: ReconcileRequest,
    now: dt.datetime | None = None,
    *,
    keep_current_result: bool = False,
) -> ClosedDay | None:
    """Reconcile the close named by `request`; None when a newer close has replaced it, or when
    `keep_current_result` (the queue worker) and the close has a result that used the mapping in effect.

    That close needs nothing more: its message came again (delivery is at least once), or concurrent
    duplicates of the close, through one instance or several, each sent one before one of them committed.
    A day whose records or mapping changed is RECEIVED again or stale, so it is run again; HQ's
    `reconcile run` (keep_current_result False) always runs it.

    A mapping upload re-runs the days already checked whose codes it re-maps, but a day being checked
    at that moment is still RECEIVED and so not re-run: if the mapping changed after this run read it,
    the run starts again, so the result kept always uses the mapping in effect after it was saved. Records
    accepted during the run change the day's revision, and another run of the close saving first changes
    its result: either way this run's result is not saved and the run starts again (the queue worker's then
    finds the close's current result and stops)."""
    kept = _kept_past_retention(storage, request, now)
    if kept is not None:
        return kept
    result: ClosedDay | _Rerun | None = None
    for _ in range(MAX_RUNS):
        result = _reconcile_once(storage, request, now, keep_current_result)
        if result is _CHANGED_MEANWHILE:
            log.info(
                "records or result of %s/%s changed during its reconciliation; running it again",
                request.store_id,
                request.business_date,
            )
            continue
        if result is None or not is_stale(result, storage.get_mapping(request.partner_id).standard_code_of()):
            return result
        log.info(
            "the mapping changed during the reconciliation of %s/%s; running it again",
            request.store_id,
            request.business_date,
        )
    return None if result is _CHANGED_MEANWHILE else result  # still RECEIVED: the sweep runs it again


def _reconcile_once(
    storage: ReconcileStorage, request: ReconcileRequest, now: dt.datetime | None, keep_current_result: bool
) -> ClosedDay | _Rerun | None:
    day = storage.get_closed_day(request.partner_id, request.store_id, request.business_date)
    if day is None or day.close_batch_id != request.close_batch_id:
        # A close stored before the store-day kept its closes' batch_ids is known by its marker only.
        received = (
            storage.close_received(request.partner_id, request.store_id, request.business_date, request.close_batch_id)
            or storage.find_batch(request.partner_id, request.close_batch_id) is not None
        )
        if not received:
            # The store-day never received it: the close is not stored yet (or its request failed). Not
            # "replaced": let the queue deliver the message again; a close that commits later is reconciled.
            raise CloseNotCommitted(
                f"close {request.close_batch_id} of {request.store_id}/{request.business_date} is not committed yet"
            )
        log.info(
            "reconciliation skipped: close %s of %s/%s is no longer the latest",
            request.close_batch_id,
            request.store_id,
            request.business_date,
        )
        return None
    if keep_current_result and _has_current_result(storage, request.partner_id, day):
        log.info(
            "reconciliation skipped: close %s of %s/%s has its result already",
            request.close_batch_id,
            request.store_id,
            request.business_date,
        )
        return None
    faults.point("reconcile.close_read")
    exponent = currency_exponent(day.currency)
    if exponent is None:  # cannot happen: a close is accepted only in its store's ISO 4217 currency
        raise ValueError(f"close {day.close_batch_id} is in {day.currency!r}, which has no minor units")
    day_totals = storage.store_day_totals(request.partner_id, request.store_id, request.business_date)
    faults.point("reconcile.totals_read")
    standard_of = storage.get_mapping(request.partner_id).standard_code_of()
    directions = payment_directions_in_effect(storage.payment_directions(request.partner_id))
    actual = compute_totals(day_totals, standard_of, directions)
    expected = expected_minor(day.expected, exponent)
    differing = differences(expected, actual)
    result = dataclasses.replace(
        day,
        status="MISMATCHED" if differing else "MATCHED",
        checked_at=now or utc_now(),
        actual=actual.as_wire(exponent),
        differences=differing,
        details={
            **_details(storage, request, day, actual, expected, exponent, standard_of),
            "by_transaction_type": breakdown_by_type(day_totals, standard_of, directions, exponent),
        },
    )
    faults.point("reconcile.before_save")
    if not storage.save_result(request.partner_id, result, replacing=day):
        now_stored = storage.get_closed_day(request.partner_id, request.store_id, request.business_date)
        if now_stored is not None and now_stored.close_batch_id == request.close_batch_id:
            return _CHANGED_MEANWHILE
        log.info(
            "reconciliation result dropped: a newer close arrived for %s/%s", request.store_id, request.business_date
        )
        return None
    faults.point("reconcile.saved")
    log.info(
        "reconciled partner_id=%s store_id=%s business_date=%s status=%s differences=%s",
        request.partner_id,
        request.store_id,
        request.business_date,
        result.status,
        differing,
    )
    return result


def _kept_past_retention(
    storage: ReconcileStorage, request: ReconcileRequest, now: dt.datetime | None
) -> ClosedDay | None:
    """The close of a store-day past the retention that has a result: kept as it is, since its records are
    gone or going (decision 0086). A day never checked is still computed, from
    what is left. None: reconcile as usual."""
    if not is_retired(request.business_date, (now or utc_now()).date(), storage.retention_days):
        return None
    day = storage.get_closed_day(request.partner_id, request.store_id, request.business_date)
    if day is None or day.close_batch_id != request.close_batch_id or day.status == "RECEIVED":
        return None
    log.info(
        "reconciliation skipped: %s/%s is past the retention of %d days and keeps its result",
        request.store_id,
        request.business_date,
        storage.retention_days,
    )
    return day


def _has_current_result(storage: ReconcileStorage, partner_id: str, day: ClosedDay) -> bool:
    """A checked close whose result resolved its source codes as the mapping in effect does (a result saved
    before results recorded their mapping is not known to be current)."""
    return day.status != "RECEIVED" and is_stale(day, storage.get_mapping(partner_id).standard_code_of()) is False


def _details(
    storage: BatchMarkers,
    request: ReconcileRequest,
    day: ClosedDay,
    actual: DayTotals,
    expected: ExpectedTotals,
    exponent: int,
    standard_of: dict[str, str],
) -> ResultDetails:
    """What HQ knows that helps a partner find the cause of a mismatch, and the standard type each
    source code seen was resolved to (what a later mapping is compared with, see is_stale)."""
    seqs = storage.batch_seqs(request.partner_id, request.store_id, request.business_date)
    expected_batches: int = day.expected.get("batch_count", 0)
    return ResultDetails(
        raw_differences=raw_differences(expected, actual, exponent),
        batch_count_received=len(seqs),
        batch_count_expected=expected_batches,
        batch_seqs_received=seqs,
        missing_batch_seqs=_missing_seqs(expected_batches, seqs),
        unmapped_source_codes=sorted(actual.unmapped_source_codes),
        unknown_payment_types=sorted(actual.unknown_payment_types),
        source_codes=sorted(actual.source_codes),
        mapped_source_codes={code: standard_of[code] for code in sorted(actual.source_codes) if code in standard_of},
        records_moved_out=day.moved_out,
    )


MISSING_SEQS_SHOWN = 1_000


def _missing_seqs(expected_batches: int, seqs: list[int]) -> list[int]:
    """The first batch_seq numbers not received: at most MISSING_SEQS_SHOWN, computed without building
    the whole range, since batch_count comes from the partner (closes stored before it was bounded too)."""
    received, missing = set(seqs), []
    for seq in range(1, expected_batches + 1):
        if seq not in received:
            missing.append(seq)
            if len(missing) == MISSING_SEQS_SHOWN:
                break
    return missing


class SweepStorage(Reconciliations, Overview, Protocol):
    """What the overdue sweep uses of storage: the closes due, postponing them, and noting that it ran."""


def sweep(storage: SweepStorage, queue: DelayedQueue, grace_seconds: int, now: dt.datetime | None = None) -> int:
    """Re-enqueue closes still RECEIVED past their due time (a lost or failed message), then note the
    sweep's time (HQ's dashboard shows it): a sweep that failed half-way is not noted."""
    now = now or utc_now()
    overdue = storage.days_due(now - dt.timedelta(seconds=grace_seconds))
    for partner_id, day in overdue:
        queue.send(reconcile_messages.encode(request_for(partner_id, day)), 0)
        faults.point("sweep.enqueued")
        storage.postpone(partner_id, day.store_id, day.business_date, now)
    if overdue:
        log.warning("sweep re-enqueued %d overdue reconciliations", len(overdue))
    storage.record_sweep(now)
    return len(overdue)
