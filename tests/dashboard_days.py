"""A partner's store-days in every status the dashboard shows (decision 0078), written through the storage port,
for the dashboard's tests on the memory storage (tests/unit/test_dashboard.py) and on SQLite over HTTP
(tests/e2e/test_dashboard_http.py).

acme: S1 matched on D1 and mismatched on D2 (with causes); S2 received (D1, due an hour after NOW),
overdue (D2) and records without a close (D3); the HOSTILE store_ids registered with nothing received.
zeta: one registered store, nothing received.
"""

from __future__ import annotations

import datetime as dt
import uuid

from core.records import BatchMarker, ClosedDay, TradeRecordRow
from hq.dashboard.overview import DateRange
from ingest import onboarding

UTC = dt.UTC
NOW = dt.datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
D1, D2, D3 = dt.date(2026, 11, 19), dt.date(2026, 11, 20), dt.date(2026, 11, 21)
RANGE = DateRange(D1, D3)
HOSTILE = ("<script>alert(1)</script>", "../x", "a/b c?d#e")
TOTALS = {
    "batch_count": 1,
    "trade_record_count": 1,
    "item_row_count": 1,
    "payment_row_count": 1,
    "net_sales_amount": "10.00",
    "tax_amount": "0.80",
    "tip_amount": "0.00",
    "payment_total_amount": "10.80",
}


def records(storage, store_id: str, day: dt.date, count: int, seq: int = 1, warnings: dict | None = None) -> None:
    marker = BatchMarker(
        "acme", str(uuid.uuid4()), "trade-records", count, "d", NOW, store_id, day, seq, warnings=warnings or {}
    )
    rows = [
        TradeRecordRow(f"{store_id}-{day}-{seq}-{n}", 1, NOW, store_id, day, "01", 1, 1, 1080, 80, 0, {"SALE": 1080})
        for n in range(count)
    ]
    assert storage.save_trade_records(marker, rows).existing is None


def close(storage, store_id: str, day: dt.date, due_at: dt.datetime = NOW + dt.timedelta(hours=1)) -> ClosedDay:
    closed = ClosedDay(store_id, day, str(uuid.uuid4()), "USD", dict(TOTALS), NOW, due_at, "RECEIVED")
    marker = BatchMarker("acme", closed.close_batch_id, "daily-close", 1, "d", NOW, store_id, day)
    assert storage.save_daily_close(marker, closed) is None
    return closed


def result(storage, closed: ClosedDay, differences: list[str], details: dict) -> None:
    actual = {**TOTALS, "net_sales_amount": "9.00"} if differences else dict(TOTALS)
    actual.pop("batch_count")
    done = ClosedDay(
        closed.store_id, closed.business_date, closed.close_batch_id, "USD", closed.expected, NOW, closed.due_at,
        "MISMATCHED" if differences else "MATCHED", NOW, actual, differences, details,
    )  # fmt: skip
    assert storage.save_result("acme", done)


def populate(storage):
    """Write the store-days described above into `storage` (empty); returns it."""
    onboarding.add_partner(storage, "acme", "Acme <POS>", NOW)
    onboarding.add_partner(storage, "zeta", "Zeta", NOW)
    storage.register_stores("acme", ["S1", "S2", *HOSTILE], NOW)
    storage.register_stores("zeta", ["Z1"], NOW)
    records(storage, "S1", D1, 1, warnings={"PAYMENT_TYPE_UNKNOWN_DIRECTION": 1})
    result(storage, close(storage, "S1", D1), [], {})
    records(storage, "S1", D2, 1)
    details = {
        "raw_differences": {"net_sales_amount": "-1.00"},
        "missing_batch_seqs": [2],
        "unmapped_source_codes": ["01"],
        "unknown_payment_types": ["VOUCHER"],
        "source_codes": ["01"],
    }
    result(storage, close(storage, "S1", D2), ["net_sales_amount"], details)
    close(storage, "S2", D1)
    close(storage, "S2", D2, due_at=NOW - dt.timedelta(minutes=1))
    records(storage, "S2", D3, 3, warnings={"AMOUNT_MISMATCH": 2})
    records(storage, "S2", D3, 2, seq=2)
    return storage
