"""Retiring store-days past the retention (TRADE_RECORD_RETENTION_DAYS) from the hot store: their trade
records, payment-id entries and trade record batches leave in bounded steps; closes and results stay.
Run after each export run, with the export's checkpoint; `hq retention run` runs it by hand. On Cosmos DB
the items expire by their ttl instead, and only the export's lag is checked here (decision 0086)."""

from __future__ import annotations

import datetime as dt
import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from core.ports import Retirement
from core.retention import EXPIRY_GRACE_DAYS, HeldDay, first_kept_date

log = logging.getLogger("pos.retention")

# Why a store-day past the retention stays (Retired.kept counts them).
AWAITING_RESULT = "closed, not reconciled yet"
NOT_EXPORTED = "reconciled after the export's checkpoint"
NEVER_CLOSED = "never closed (the export covers reconciled days only)"


@dataclass
class Retired:
    """What a run did: the store-days retired and the rows deleted, and the days past the retention kept, by why."""

    days: int = 0
    rows: int = 0
    kept: Counter[str] = field(default_factory=Counter)


def why_kept(day: HeldDay, exported_through: dt.datetime | None) -> str | None:
    """Why a store-day past the retention must stay for now; None: it may leave. A day waiting for its result
    keeps the records it is computed from; with an export configured, a day leaves once the export has its
    result (checked at or before the checkpoint); without one, by date alone."""
    if day.status == "RECEIVED":
        return AWAITING_RESULT
    if exported_through is None:
        return None
    if day.checked_at is None:
        return NEVER_CLOSED
    return None if day.checked_at <= exported_through else NOT_EXPORTED


def export_lag_warning(exported_through: dt.datetime | None, now: dt.datetime) -> str | None:
    """A warning when the export's checkpoint is more than EXPIRY_GRACE_DAYS old: on Cosmos DB a retired
    day's items expire that long after it is retired, whether exported or not."""
    if exported_through is None or now - exported_through <= dt.timedelta(days=EXPIRY_GRACE_DAYS):
        return None
    return (
        f"the export's checkpoint ({exported_through.isoformat()}) is more than {EXPIRY_GRACE_DAYS} days old: "
        "store-days past the retention may leave the hot store (Cosmos DB: expire) before they are exported"
    )


# Rows deleted per transaction by the timer's run: short enough that a partner's write never waits long on
# SQLite's one write lock.
TIMER_STEP_ROWS = 500


def retire_after_export(
    retirement: Retirement | None, retention_days: int, exported_through: dt.datetime | None, now: dt.datetime
) -> Retired:
    """The timer's step after the export: on SQLite (`retirement`) the store-days past the retention that the
    export has leave in bounded steps; on Cosmos DB (None) their items expire by ttl, and only the export's
    lag is checked. Nothing when retention is off."""
    if retention_days <= 0:
        return Retired()
    if retirement is None:
        lag = export_lag_warning(exported_through, now)
        if lag is not None:
            log.warning(lag)
        return Retired()
    return retire_store_days(retirement, now.date(), retention_days, exported_through, TIMER_STEP_ROWS)


def retire_store_days(
    storage: Retirement,
    today: dt.date,
    retention_days: int,
    exported_through: dt.datetime | None,
    max_rows: int,
    on_step: Callable[[HeldDay, int], None] | None = None,
) -> Retired:
    """Delete what the hot store holds of every store-day older than today (UTC) minus `retention_days`
    that may leave (why_kept), each step one transaction of at most `max_rows` rows; `on_step(day, rows)`
    after each step. Nothing when retention is off (0). Safe to repeat or to stop half-way: a day half
    retired is finished by the next run. Logs export_lag_warning as of the start of `today`."""
    retired = Retired()
    first_kept = first_kept_date(today, retention_days)
    if first_kept is None:
        return retired
    lag = export_lag_warning(exported_through, dt.datetime.combine(today, dt.time(), dt.UTC))
    if lag is not None:
        log.warning(lag)
    if max_rows < 1:
        raise ValueError("max_rows must be at least 1")
    for day in storage.held_days_before(first_kept):
        reason = why_kept(day, exported_through)
        if reason is not None:
            retired.kept[reason] += 1
            continue
        while rows := storage.retire_rows(day.partner_id, day.store_id, day.business_date, max_rows):
            retired.rows += rows
            if on_step is not None:
                on_step(day, rows)
        retired.days += 1
        log.info("store-day %s/%s/%s retired", day.partner_id, day.store_id, day.business_date)
    if retired.kept:
        log.info("store-days past the retention kept: %s", dict(retired.kept))
    return retired
