"""POST /daily-close: a store-day's control totals; schedules its reconciliation (spec 3, 4.8). The shape of
every write (ingest/write_flow.py): its checks read the store's master data.

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
from dataclasses import dataclass
from typing import Protocol

from core import faults, reconcile_messages
from core.errors import FieldProblem
from core.ports import Admission, BatchMarkers, BatchWrites, MasterReads, Reconciliations
from core.queue_ports import DelayedQueue
from core.records import ClosedDay, Partner, ReconcileRequest, StoreMaster
from core.retention import Retention
from ingest.amounts import money_problems, raw_money_problems
from ingest.batches import BatchOutcome, accept, new_marker, unknown_member_warnings
from ingest.body_digests import meaning_of_body
from ingest.parsing import Refused, raise_if_any
from ingest.retention import EVERY_DAY_HELD, HeldDays, held_days
from ingest.store_checks import no_store_master, store_currency_problem
from ingest.wire.requests import DailyClose
from ingest.wire.resend_keys import StoreDayKey
from ingest.write_flow import Checked, Opened, Write, open_batch

AMOUNTS = ("net_sales_amount", "tax_amount", "tip_amount", "payment_total_amount")


class DailyCloseStorage(Admission, BatchMarkers, BatchWrites, MasterReads, Reconciliations, Retention, Protocol):
    """What POST /daily-close uses of storage: the store's master data, and whether the store-day received
    this close before (then it sends no message)."""


def _readable_problems(refused: Refused) -> list[FieldProblem]:
    """What a refused close's readable amounts show (pydantic lists the rest)."""
    return raw_money_problems(refused.raw, DailyClose, "")


DAILY_CLOSE = Write(
    "daily-close",
    DailyClose,
    StoreDayKey,
    meaning_of_body(DailyClose),
    _readable_problems,
    lambda close: [close.store_id],
)


def post_daily_close(
    storage: DailyCloseStorage,
    queue: DelayedQueue,
    partner: Partner,
    body: bytes,
    delay_seconds: int,
    *,
    validate_only: bool = False,
) -> BatchOutcome:
    opened = open_batch(storage, partner.partner_id, DAILY_CLOSE, body)
    if isinstance(opened, BatchOutcome):  # a resend
        return opened
    needs = read_needs(storage, partner.partner_id, opened.batch)
    checked = check(opened, needs)
    raise_if_any(checked.problems, body)
    return save(storage, queue, partner.partner_id, opened, checked, delay_seconds, validate_only)


@dataclass(frozen=True, slots=True)
class CloseNeeds:
    """What the checks of a daily close read from storage (`read_needs`)."""

    store: StoreMaster | None  # None: no master data yet, and the close is refused
    held: HeldDays = EVERY_DAY_HELD  # the store-days the hot store still holds (TRADE_RECORD_RETENTION_DAYS)


def read_needs(storage: DailyCloseStorage, partner_id: str, close: DailyClose) -> CloseNeeds:
    """The store's master data (None: not sent yet), for its currency, and the retention in effect."""
    return CloseNeeds(storage.get_store(partner_id, close.store_id), held_days(storage))


def check(opened: Opened[DailyClose], needs: CloseNeeds) -> Checked:
    """The store's master data was sent first (`no_store_master`); the close is in the store's currency,
    with amounts in its minor units, for a store-day the hot store still holds."""
    close, store = opened.batch, needs.store
    if store is None:
        return Checked(no_store_master(close.store_id))
    problems = store_currency_problem("currency", close.currency, store)
    problems += needs.held.problems(close.business_date)
    problems += money_problems([(name, getattr(close, name)) for name in AMOUNTS], close.currency)
    if problems:
        return Checked(problems)
    return Checked(warnings=unknown_member_warnings(opened.unknown))


def save(
    storage: DailyCloseStorage,
    queue: DelayedQueue,
    partner_id: str,
    opened: Opened[DailyClose],
    checked: Checked,
    delay_seconds: int,
    validate_only: bool,
) -> BatchOutcome:
    """The reconciliation message first, then the close and its marker (this module's docstring)."""
    close = opened.batch
    marker = new_marker(
        partner_id, close, "daily-close", 1, opened.body, store_id=close.store_id, business_date=close.business_date
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
    request = ReconcileRequest(partner_id, close.store_id, close.business_date, marker.batch_id)

    accepted = accept(storage, marker, checked.warnings, sent_batch_id=close.batch_id, validate_only=validate_only)
    if isinstance(accepted, BatchOutcome):  # a known batch_id, or validate-only: nothing stored, nothing enqueued
        return accepted
    if not storage.close_received(partner_id, close.store_id, close.business_date, marker.batch_id):
        faults.point("close.before_enqueue")
        queue.send(reconcile_messages.encode(request), delay_seconds)
        faults.point("close.enqueued")
    # the marker of a close received before (a resend) comes back from the store-day's own record of it
    return accepted.saved(storage.save_daily_close(accepted.marker, day))
