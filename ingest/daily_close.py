"""POST /daily-close: a store-day's control totals; schedules its reconciliation (spec 3, 4.8).

The last close received for a store-day wins: it replaces the previous one and puts the result
back to RECEIVED. A close the store-day received before is a resend however late it comes (its batch
marker may be gone; the store-day keeps the batch_id of every close): it replaces nothing and sends no
message, so a day is never reconciled again against the totals of an earlier close.

The delayed queue message is sent before the close and its marker commit, so a
crash in between leaves either nothing (the partner's retry redoes it) or a message naming a
close that is not stored (the worker fails it, so the queue delivers it again until the close
commits or the attempts run out); the sweep re-sends any close left RECEIVED.
"""

from __future__ import annotations

import datetime as dt
from typing import Protocol

from core import faults, reconcile_messages
from core.ports import Admission, BatchMarkers, BatchWrites, DelayedQueue, MasterReads, Reconciliations
from core.records import ClosedDay, Partner, ReconcileRequest
from ingest import access
from ingest.amounts import money_problems, raw_money_problems
from ingest.batches import BatchOutcome, accept, known_batch, new_marker, unknown_member_warnings
from ingest.body_digests import meaning_of_body
from ingest.parsing import Refused, parse, raise_if_any
from ingest.retention import retired_day_problems
from ingest.trade_records import require_store_master, store_currency_problem
from ingest.wire.requests import DailyClose
from ingest.wire.resend_keys import StoreDayKey

AMOUNTS = ("net_sales_amount", "tax_amount", "tip_amount", "payment_total_amount")


class DailyCloseStorage(Admission, BatchMarkers, BatchWrites, MasterReads, Reconciliations, Protocol):
    """What POST /daily-close uses of storage: the store's master data, and whether the store-day received
    this close before (then it sends no message)."""


def _readable_problems(refused: Refused) -> list:
    """What a refused close's readable amounts show (pydantic lists the rest)."""
    return raw_money_problems(refused.raw, DailyClose, "")


def post_daily_close(
    storage: DailyCloseStorage,
    queue: DelayedQueue,
    partner: Partner,
    body: bytes,
    delay_seconds: int,
    *,
    validate_only: bool = False,
) -> BatchOutcome:
    resent = known_batch(storage, partner.partner_id, "daily-close", body, StoreDayKey, meaning_of_body(DailyClose))
    if resent is not None:
        return resent
    close, unknown = parse(DailyClose, body, _readable_problems)
    access.require_registered(storage, partner.partner_id, [close.store_id])
    store = require_store_master(storage, partner.partner_id, close.store_id)
    problems = store_currency_problem("currency", close.currency, store)
    problems += retired_day_problems(storage, close.business_date)
    problems += money_problems([(name, getattr(close, name)) for name in AMOUNTS], close.currency)
    raise_if_any(problems, body)

    marker = new_marker(
        partner.partner_id, close, "daily-close", 1, body, store_id=close.store_id, business_date=close.business_date
    )
    expected = close.model_dump(
        mode="json", include={"batch_count", "trade_record_count", "item_row_count", "payment_row_count", *AMOUNTS}
    )
    day = ClosedDay(
        close.store_id,
        close.business_date,
        marker.batch_id,
        close.currency,
        expected,
        received_at=marker.received_at,
        due_at=marker.received_at + dt.timedelta(seconds=delay_seconds),
        status="RECEIVED",
    )
    request = ReconcileRequest(partner.partner_id, close.store_id, close.business_date, marker.batch_id)

    def save(marker):
        if not storage.close_received(partner.partner_id, close.store_id, close.business_date, marker.batch_id):
            faults.point("close.before_enqueue")
            queue.send(reconcile_messages.encode(request), delay_seconds)
            faults.point("close.enqueued")
        return storage.save_daily_close(marker, day)  # the marker of a close received before: a resend

    return accept(
        storage,
        marker,
        save,  # not called for a validate-only request: nothing stored, nothing enqueued
        unknown_member_warnings(unknown),
        sent_batch_id=close.batch_id,
        validate_only=validate_only,
    )
