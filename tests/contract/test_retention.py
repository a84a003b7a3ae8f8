"""Retiring store-days past the retention (decision 0086) on the adapters that delete
(SQLite and memory, the same answers): bounded steps, what leaves and what stays, nothing before the export.
Cosmos DB lets the items expire by their ttl instead: tests/contract/test_cosmos_retention.py.

Data shaped like partners': numeric store and record ids, payment ids and documents in Japanese and Thai."""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid

import orjson
import pytest

from backends.memory.storage import MemoryStorage
from backends.sqlite.storage import SqliteStorage
from core.records import BatchMarker, ClosedDay, RecordChanges, TradeRecordRow
from reconcile.retention import NEVER_CLOSED, NOT_EXPORTED, retire_store_days

UTC = dt.UTC
RETENTION = 30
TODAY = dt.date(2026, 11, 27)
RETIRED = TODAY - dt.timedelta(days=RETENTION + 1)  # the youngest day retired
KEPT = TODAY - dt.timedelta(days=RETENTION)  # the oldest day kept
T0 = dt.datetime(2026, 10, 20, 21, 0, tzinfo=UTC)


@pytest.fixture(params=["sqlite", "memory"])
def storage(request, tmp_path):
    if request.param == "sqlite":
        return SqliteStorage(tmp_path, RETENTION)
    return MemoryStorage(RETENTION)


def row(number: int, business_date: dt.date, store_id: str = "0042") -> TradeRecordRow:
    document = {"trade_record_id": str(number), "items": [{"product_name": "เบอร์เกอร์ชีส 起司漢堡"}]}
    return TradeRecordRow(
        str(900_000_000 + number),  # a ticket number
        1,
        T0,
        store_id,
        business_date,
        "01",
        1,
        1,
        1200,
        109,
        0,
        {"SALE": 1200},
        orjson.dumps(document).decode(),
        (f"支払-{number}",),
        {"4901234567894": 1},
    )


def batch(storage, partner_id: str, rows: list[TradeRecordRow], seq: int = 1) -> str:
    first = rows[0]
    batch_id = f"バッチ-{uuid.uuid4().hex[:8]}"
    marker = BatchMarker(
        partner_id, batch_id, "trade-records", len(rows), "digest", T0, first.store_id, first.business_date, seq
    )
    assert storage.save_trade_records(marker, rows).existing is None
    return batch_id


def closed_and_checked(storage, partner_id: str, business_date: dt.date, checked_at: dt.datetime) -> ClosedDay:
    close_id = f"close-{business_date}"
    day = ClosedDay("0042", business_date, close_id, "JPY", {"trade_record_count": 5}, T0, T0, "RECEIVED")
    marker = BatchMarker(partner_id, close_id, "daily-close", 1, "digest", T0, "0042", business_date)
    assert storage.save_daily_close(marker, day) is None
    result = ClosedDay(
        "0042", business_date, close_id, "JPY", {"trade_record_count": 5}, T0, T0, "MATCHED",
        checked_at, {"trade_record_count": 5}, [], {"source_codes": ["01"]}, 0, [],
    )  # fmt: skip
    assert storage.save_result(partner_id, result) is True
    return result


def test_a_day_larger_than_a_step_leaves_in_several_and_younger_days_stay(storage):
    storage.add_partner("7001", "ร้านอาหาร", T0)
    old = [row(n, RETIRED) for n in range(5)]
    old_batches = [batch(storage, "7001", old[:3]), batch(storage, "7001", old[3:], seq=2)]
    young = [row(n, KEPT) for n in range(10, 13)]
    young_batch = batch(storage, "7001", young)
    other_store = [row(20, RETIRED, store_id="0043")]  # another store, same old day, never closed
    batch(storage, "7001", other_store)
    result = closed_and_checked(storage, "7001", RETIRED, T0)

    steps: list[tuple[str, int]] = []
    retired = retire_store_days(storage, TODAY, RETENTION, T0, 2, lambda day, rows: steps.append((day.store_id, rows)))
    # 5 records in steps of 2, then its 2 batches; the other store's day is not known to be exported
    assert steps == [("0042", 2), ("0042", 2), ("0042", 1), ("0042", 2)]
    assert (retired.days, retired.rows, dict(retired.kept)) == (1, 7, {NEVER_CLOSED: 1})
    assert len(storage.store_day_rows("7001", "0043", RETIRED)) == 1
    by_date = retire_store_days(storage, TODAY, RETENTION, None, 2)  # no export: by date alone
    assert (by_date.days, by_date.rows) == (1, 2)

    assert storage.store_day_rows("7001", "0042", RETIRED) == []
    assert storage.store_day_rows("7001", "0043", RETIRED) == []
    assert storage.batch_seqs("7001", "0042", RETIRED) == []
    assert [storage.find_batch("7001", batch_id) for batch_id in old_batches] == [None, None]
    assert storage.trade_record_versions("7001", [r.trade_record_id for r in old]) == {}
    assert storage.trade_records_by_payment_id("7001", ["支払-0", "支払-4"]) == {}
    # what stays: the close, its result and its marker; every row of the younger day
    assert storage.get_closed_day("7001", "0042", RETIRED) == result
    assert storage.find_batch("7001", f"close-{RETIRED}") is not None
    assert sorted(r.trade_record_id for r in storage.store_day_rows("7001", "0042", KEPT)) == [
        r.trade_record_id for r in young
    ]
    assert storage.find_batch("7001", young_batch) is not None
    assert storage.trade_records_by_payment_id("7001", ["支払-10"]) == {"支払-10": {young[0].trade_record_id}}
    assert retire_store_days(storage, TODAY, RETENTION, None, 2) == type(retired)()  # nothing left: a no-op


def test_a_day_reconciled_after_the_exports_checkpoint_stays(storage):
    storage.add_partner("7002", "パートナー", T0)
    batch(storage, "7002", [row(1, RETIRED)])
    checked_at = T0 + dt.timedelta(days=1)
    closed_and_checked(storage, "7002", RETIRED, checked_at)

    waiting = retire_store_days(storage, TODAY, RETENTION, checked_at - dt.timedelta(microseconds=1), 100)
    assert (waiting.days, waiting.rows, dict(waiting.kept)) == (0, 0, {NOT_EXPORTED: 1})
    assert len(storage.store_day_rows("7002", "0042", RETIRED)) == 1
    assert retire_store_days(storage, TODAY, RETENTION, checked_at, 100).days == 1
    assert storage.store_day_rows("7002", "0042", RETIRED) == []


def test_a_record_that_moved_out_of_a_retired_day_stays_with_its_new_day(storage):
    storage.add_partner("7003", "Partner", T0)
    batch(storage, "7003", [row(1, RETIRED), row(2, RETIRED)])
    moved = dataclasses.replace(row(2, KEPT), version=2)  # its version 2, in the kept day
    changes = storage.save_trade_records(
        BatchMarker("7003", "b-moved", "trade-records", 1, "d", T0, "0042", KEPT, 1), [moved]
    ).changes
    assert isinstance(changes, RecordChanges) and len(changes.moves) == 1
    assert retire_store_days(storage, TODAY, RETENTION, None, 100).rows == 2  # one record, one batch
    assert [(r.trade_record_id, r.version) for r in storage.store_day_rows("7003", "0042", KEPT)] == [
        (moved.trade_record_id, 2)
    ]
    assert storage.trade_records_by_payment_id("7003", ["支払-2"]) == {"支払-2": {moved.trade_record_id}}
