"""The Overview role of the Storage port (HQ's dashboard reads, decision 0079), on every adapter: SQLite, Cosmos DB
on the emulator and the in-memory storage. Store-days over a range of business dates, summed from the trade
record batch markers and read from the closes; a store-day's batches with their warnings; the partner's
stores; the last sweep. Markers and reads made before the dashboard existed still read (SQLite, Cosmos DB)."""

from __future__ import annotations

import datetime as dt
import sqlite3
from dataclasses import replace

import pytest

from backends.sqlite.storage import SqliteStorage
from core.records import BatchMarker, DayStatus, ReceivedDay, StoreMaster
from tests.contract.test_storage_contract import DAY, NEXT_DAY, T0, close_day, marker, new_id, record, result_of

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")

# Store ids a URL path and a storage key cannot hold as they are (common.md, spec: store_id is text).
ODD_STORES = ["S1", "店舗/新宿 #1", "a%2Fb?c", "Ünïcødé-Straße 5", "דוכן 7"]
DAY_BEFORE = DAY - dt.timedelta(days=1)


@pytest.fixture
def partner(storage) -> str:
    partner_id = new_id()
    storage.add_partner(partner_id, "Partner", T0)
    storage.register_stores(partner_id, ODD_STORES, T0)
    return partner_id


def send_batch(
    storage,
    partner_id: str,
    store_id: str,
    business_date: dt.date,
    seq: int,
    record_ids: list[str],
    warnings: dict[str, int] | None = None,
    received_at: dt.datetime = T0,
) -> BatchMarker:
    batch = replace(
        marker(partner_id, "trade-records", len(record_ids), store_id=store_id, business_date=business_date, seq=seq),
        received_at=received_at,
        warnings=warnings or {},
    )
    rows = [record(record_id, store_id=store_id, business_date=business_date) for record_id in record_ids]
    assert storage.save_trade_records(batch, rows).existing is None
    return batch


def test_a_marker_is_read_back_with_its_warnings(storage, partner):
    warned = send_batch(storage, partner, "S1", DAY, 1, ["T1", "T2"], {"UNKNOWN_PAYMENT_TYPE": 2, "PHONE_LIKE": 1})
    quiet = send_batch(storage, partner, "S1", DAY, 2, ["T3"])
    assert storage.find_batch(partner, warned.batch_id).warnings == {"UNKNOWN_PAYMENT_TYPE": 2, "PHONE_LIKE": 1}
    assert storage.find_batch(partner, quiet.batch_id).warnings == {}


def test_received_days_sum_the_batches_of_each_store_day_in_the_range(storage, partner):
    send_batch(storage, partner, "S1", DAY, 1, ["A1", "A2"], {"UNKNOWN_PAYMENT_TYPE": 2})
    send_batch(storage, partner, "S1", DAY, 2, ["A3"], {"UNKNOWN_PAYMENT_TYPE": 1, "PHONE_LIKE": 1})
    send_batch(storage, partner, "S1", DAY, 2, ["A1"])  # a resent batch_seq and a record again: both count
    send_batch(storage, partner, "店舗/新宿 #1", DAY, 1, ["B1"])
    send_batch(storage, partner, "a%2Fb?c", NEXT_DAY, 1, ["C1", "C2", "C3"], {"TRADE_RECORD_MOVED": 1})
    send_batch(storage, partner, "S1", DAY_BEFORE, 1, ["D1"])  # outside the range below
    close_day(storage, partner, "close-S1", "S1", DAY)  # a close is not a batch of trade records
    for other in (new_id(), f"{partner}-2", f"{partner}|2"):  # other partners, some named like it
        storage.add_partner(other, "Other", T0)
        storage.register_stores(other, ["S1"], T0)
        send_batch(storage, other, "S1", DAY, 1, ["A1"])

    assert storage.received_days(partner, DAY, NEXT_DAY) == [
        ReceivedDay("S1", DAY, 3, 4, {"UNKNOWN_PAYMENT_TYPE": 3, "PHONE_LIKE": 1}),
        ReceivedDay("店舗/新宿 #1", DAY, 1, 1, {}),
        ReceivedDay("a%2Fb?c", NEXT_DAY, 1, 3, {"TRADE_RECORD_MOVED": 1}),
    ]
    assert storage.received_days(partner, NEXT_DAY, NEXT_DAY) == [
        ReceivedDay("a%2Fb?c", NEXT_DAY, 1, 3, {"TRADE_RECORD_MOVED": 1})
    ]
    assert storage.received_days(partner, DAY_BEFORE, DAY_BEFORE) == [ReceivedDay("S1", DAY_BEFORE, 1, 1, {})]
    assert storage.received_days(partner, NEXT_DAY + dt.timedelta(days=1), NEXT_DAY + dt.timedelta(days=30)) == []
    assert storage.received_days(new_id(), DAY_BEFORE, NEXT_DAY) == []


def test_day_statuses_are_the_closes_in_the_range_with_their_state(storage, partner):
    due = T0 + dt.timedelta(minutes=15)
    checked = close_day(storage, partner, "close-1", "Ünïcødé-Straße 5", DAY, due_at=due)
    storage.save_result(partner, result_of(checked, "MISMATCHED"))
    close_day(storage, partner, "close-2", "דוכן 7", DAY, due_at=due)
    close_day(storage, partner, "close-3", "S1", NEXT_DAY, due_at=due)
    close_day(storage, partner, "close-4", "S1", DAY_BEFORE, due_at=due)  # outside the range below

    mismatched = DayStatus(
        "Ünïcødé-Straße 5", DAY, "MISMATCHED", T0, due, T0 + dt.timedelta(minutes=20), ["net_sales_amount"]
    )
    received = DayStatus("דוכן 7", DAY, "RECEIVED", T0, due, None, [])
    next_day = DayStatus("S1", NEXT_DAY, "RECEIVED", T0, due, None, [])
    assert storage.day_statuses(partner, DAY, NEXT_DAY) == sorted(
        [mismatched, received, next_day], key=lambda day: (day.business_date, day.store_id)
    )
    assert storage.day_statuses(partner, NEXT_DAY, NEXT_DAY + dt.timedelta(days=5)) == [next_day]
    assert storage.day_statuses(partner, DAY - dt.timedelta(days=9), DAY - dt.timedelta(days=2)) == []
    assert storage.day_statuses(new_id(), DAY_BEFORE, NEXT_DAY) == []


def test_store_day_batches_are_the_days_trade_record_markers_by_batch_seq(storage, partner):
    store = "店舗/新宿 #1"
    third = send_batch(storage, partner, store, DAY, 3, ["T5"], received_at=T0 + dt.timedelta(minutes=1))
    first = send_batch(storage, partner, store, DAY, 1, ["T1", "T2"], {"PHONE_LIKE": 2})
    resent = send_batch(storage, partner, store, DAY, 1, ["T3"], received_at=T0 + dt.timedelta(minutes=2))
    send_batch(storage, partner, store, NEXT_DAY, 2, ["T4"])  # another day
    send_batch(storage, partner, "S1", DAY, 2, ["T6"])  # another store
    close_day(storage, partner, "close-1", store, DAY)  # not a trade record batch

    batches = storage.store_day_batches(partner, store, DAY)
    assert batches == [first, resent, third]
    assert [batch.warnings for batch in batches] == [{"PHONE_LIKE": 2}, {}, {}]
    assert storage.store_day_batches(partner, store, DAY_BEFORE) == []
    assert storage.store_day_batches(partner, "店舗/新宿", DAY) == []  # a prefix is another store


def test_stores_are_the_partners_store_masters_by_store_id(storage, partner):
    masters = [
        StoreMaster(store_id, "USD", "US", "America/New_York", "05:00", True, T0, {"store_id": store_id})
        for store_id in ODD_STORES
    ]
    storage.save_stores(marker(partner, "stores", len(masters)), masters)
    other = new_id()
    storage.add_partner(other, "Other", T0)
    storage.save_stores(marker(other, "stores"), [replace(masters[0], document={"other": True})])
    assert storage.stores(partner) == sorted(masters, key=lambda store: store.store_id)
    assert storage.stores(other) == [replace(masters[0], document={"other": True})]
    assert storage.stores(new_id()) == []


def test_the_last_sweep_only_moves_forward(storage):
    # Cosmos DB's database is the module's: later than any other test's time, so this test alone moves it.
    at = T0 + dt.timedelta(days=3650)
    storage.record_sweep(at)
    assert storage.last_sweep() == at
    storage.record_sweep(at - dt.timedelta(minutes=5))
    assert storage.last_sweep() == at
    storage.record_sweep(at + dt.timedelta(minutes=5))
    assert storage.last_sweep() == at + dt.timedelta(minutes=5)


def test_no_sweep_yet_is_none(tmp_path):
    assert SqliteStorage(tmp_path).last_sweep() is None


def test_a_sqlite_database_made_before_warnings_opens_and_reads_its_markers(tmp_path):
    storage = SqliteStorage(tmp_path)
    storage.add_partner("acme", "Acme", T0)
    old = send_batch(storage, "acme", "S1", DAY, 1, ["T1", "T2"])
    with sqlite3.connect(tmp_path / "pos.sqlite3") as db:  # as a database of the previous release
        db.execute("DROP INDEX trade_batches_by_date")
        db.execute("DROP INDEX closed_days_by_date")
        db.execute("DROP TABLE sweeps")
        db.execute("ALTER TABLE batches DROP COLUMN warnings")
    reopened = SqliteStorage(tmp_path)
    assert reopened.find_batch("acme", old.batch_id) == old
    assert reopened.find_batch("acme", old.batch_id).warnings == {}
    new = send_batch(reopened, "acme", "S1", DAY, 2, ["T3"], {"PHONE_LIKE": 1})
    assert reopened.store_day_batches("acme", "S1", DAY) == [old, new]
    assert reopened.received_days("acme", DAY, DAY) == [ReceivedDay("S1", DAY, 2, 3, {"PHONE_LIKE": 1})]
    assert reopened.last_sweep() is None


def test_sqlite_reads_a_range_from_its_indexes(tmp_path):
    """Bounded by partner and range, not by the partner's history: the plans search the dashboard's
    indexes (a scan of the partner's rows would say SCAN or name the primary key)."""
    from backends.sqlite.overview import RECEIVED_BY_DAY, WARNINGS_BY_DAY

    storage = SqliteStorage(tmp_path)
    span = ("acme", DAY.isoformat(), NEXT_DAY.isoformat())
    with storage.db.read() as db:
        for query, index in [
            (RECEIVED_BY_DAY, "USING COVERING INDEX trade_batches_by_date (partner_id=? AND business_date>? AND"),
            (WARNINGS_BY_DAY, "USING COVERING INDEX trade_batches_by_date (partner_id=? AND business_date>? AND"),
            (
                "SELECT store_id, status FROM closed_days WHERE partner_id = ? AND business_date BETWEEN ? AND ?",
                "USING INDEX closed_days_by_date (partner_id=? AND business_date>? AND",
            ),
        ]:
            plan = " / ".join(row[3] for row in db.execute("EXPLAIN QUERY PLAN " + query, span))
            assert index in plan, plan


def test_a_batch_that_moved_records_counts_them_in_its_warnings(storage, partner):
    send_batch(storage, partner, "S1", DAY, 1, ["M1", "M2", "M3"])
    later = [record("M1", 2, store_id="דוכן 7", business_date=NEXT_DAY)]
    later.append(record("M2", 2, store_id="דוכן 7", business_date=NEXT_DAY))
    moving = replace(
        marker(partner, "trade-records", 2, store_id="דוכן 7", business_date=NEXT_DAY, seq=1),
        warnings={"PHONE_LIKE": 1},
    )
    assert len(storage.save_trade_records(moving, later).changes.moves) == 2

    expected = {"PHONE_LIKE": 1, "TRADE_RECORD_MOVED": 2}  # as the answer said (moved_warnings: one per move)
    assert storage.find_batch(partner, moving.batch_id).warnings == expected
    assert [batch.warnings for batch in storage.store_day_batches(partner, "דוכן 7", NEXT_DAY)] == [expected]
    assert storage.received_days(partner, NEXT_DAY, NEXT_DAY) == [ReceivedDay("דוכן 7", NEXT_DAY, 1, 2, expected)]


def test_cosmos_batch_entries_and_markers_written_before_the_dashboard_still_read(cosmos_storage):
    """Entries without the marker's fields: a store-day's batches read their markers (skipping one whose
    marker is gone), the range query does not find them; markers without warnings read with none."""
    from backends.cosmos.keys import marker_id, marker_key
    from backends.cosmos.trade_records import batch_entry

    storage = cosmos_storage
    partner_id = new_id()
    storage.add_partner(partner_id, "Partner", T0)
    storage.register_stores(partner_id, ["S1"], T0)
    old = send_batch(storage, partner_id, "S1", DAY, 1, ["T1"], {"PHONE_LIKE": 1})
    gone = send_batch(storage, partner_id, "S1", DAY, 2, ["T2"])
    trades, batches = storage._containers.trade_records, storage._containers.batches
    for sent in (old, gone):  # as the release before wrote them
        entry = batch_entry(sent)
        trades.upsert_item({name: entry[name] for name in ("id", "pk", "type", "batch_id", "batch_seq")})
    stored = batches.read_item(marker_id(old.batch_id), partition_key=marker_key(partner_id, old.batch_id))
    batches.upsert_item({name: value for name, value in stored.items() if name != "warnings"})
    batches.delete_item(marker_id(gone.batch_id), partition_key=marker_key(partner_id, gone.batch_id))
    new = send_batch(storage, partner_id, "S1", DAY, 3, ["T3"], {"PHONE_LIKE": 2})

    assert storage.find_batch(partner_id, old.batch_id).warnings == {}
    batches_read = storage.store_day_batches(partner_id, "S1", DAY)
    assert batches_read == [old, new]
    assert [batch.warnings for batch in batches_read] == [{}, {"PHONE_LIKE": 2}]
    assert storage.received_days(partner_id, DAY, DAY) == [ReceivedDay("S1", DAY, 1, 1, {"PHONE_LIKE": 2})]
