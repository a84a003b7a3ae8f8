"""Retention on Cosmos DB (decision 0086): the items a store-day holds carry the
`ttl` that makes them expire EXPIRY_GRACE_DAYS after the day is retired, read back from the emulator.

What the emulator (@vercel/cosmosdb-server) shows and what it does not: it stores `ttl` as any other
property and never expires an item (its source has no notion of ttl or defaultTtl; the last test here
pins that down). So these tests show which items carry which ttl, rewritten on every write and moved
with a record to its new day, and that retention off writes none; that Cosmos DB deletes them when the
ttl runs out, with containers of defaultTtl -1 (infra/cosmos/containers.json, checked in
tests/toolchain/test_infra.py), is Cosmos DB's documented behaviour, not shown here. The SQLite and memory
adapters delete instead (tests/contract/test_retention.py)."""

from __future__ import annotations

import datetime as dt
import time
import uuid

import orjson
import pytest

from backends.cosmos import keys
from backends.cosmos.storage import CosmosStorage
from core.clock import utc_now
from core.records import BatchMarker, ClosedDay, TradeRecordRow
from core.retention import expiry_seconds

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")

UTC = dt.UTC
RETENTION = 30
T0 = dt.datetime(2026, 11, 20, 21, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def database_name() -> str:
    return f"retention-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def storage(cosmos_emulator, database_name):
    opened = CosmosStorage(
        cosmos_emulator.endpoint,
        database_name,
        key=cosmos_emulator.key,
        create_containers=True,
        retention_days=RETENTION,
    )
    yield opened
    opened.close()


@pytest.fixture
def partner(storage) -> str:
    partner_id = str(uuid.uuid4().int)[:12]  # a numeric partner id
    storage.add_partner(partner_id, "ร้านอาหาร", T0)
    return partner_id


def days_ago(days: int) -> dt.date:
    return utc_now().date() - dt.timedelta(days=days)


def row(trade_record_id: str, business_date: dt.date, version: int = 1) -> TradeRecordRow:
    document = {"items": [{"product_name": "起司漢堡 เบอร์เกอร์"}]}
    return TradeRecordRow(
        trade_record_id, version, T0 + dt.timedelta(minutes=version), "0042", business_date, "01", 1, 1,
        1200, 109, 0, {"SALE": 1200}, orjson.dumps(document).decode(), (f"支払-{trade_record_id}",), {"4901": 1},
    )  # fmt: skip


def save(storage, partner_id: str, rows: list[TradeRecordRow]) -> BatchMarker:
    first = rows[0]
    batch = BatchMarker(
        partner_id,
        f"バッチ-{uuid.uuid4().hex[:8]}",
        "trade-records",
        len(rows),
        "d",
        T0,
        "0042",
        first.business_date,
        1,
    )
    assert storage.save_trade_records(batch, rows).existing is None
    return batch


def items_of(storage, partner_id: str, batch: BatchMarker, trade_record_id: str, business_date: dt.date) -> dict:
    """The record, its index entry, the batch entry and the batch marker, as stored."""
    trades = storage._containers.trade_records
    day = keys.day_key(partner_id, "0042", business_date.isoformat())
    return {
        "record": trades.read_item(keys.record_id(trade_record_id), partition_key=day),
        "index entry": trades.read_item(
            keys.index_entry_id(trade_record_id),
            partition_key=keys.index_key(partner_id, keys.index_bucket(trade_record_id)),
        ),
        "batch entry": trades.read_item(keys.compound_key("batch", batch.batch_id), partition_key=day),
        "marker": storage._containers.batches.read_item(
            keys.marker_id(batch.batch_id), partition_key=keys.marker_key(partner_id, batch.batch_id)
        ),
    }


def expected_ttl(business_date: dt.date, written_between: tuple[dt.datetime, dt.datetime]) -> range:
    before, after = written_between
    return range(expiry_seconds(business_date, after, RETENTION), expiry_seconds(business_date, before, RETENTION) + 1)


def test_a_store_days_items_expire_two_days_after_it_is_retired(storage, partner):
    business_date = days_ago(3)
    before = utc_now()
    batch = save(storage, partner, [row("900000001", business_date), row("900000002", business_date)])
    window = expected_ttl(business_date, (before, utc_now()))
    items = items_of(storage, partner, batch, "900000001", business_date)
    for name, item in items.items():
        assert item["ttl"] in window, name
    assert (RETENTION - 3 + 1 + 2 - 1) * 86_400 < items["record"]["ttl"] <= (RETENTION - 3 + 1 + 2) * 86_400
    assert items["record"]["document"] == {"items": [{"product_name": "起司漢堡 เบอร์เกอร์"}]}  # as sent
    assert storage.store_day_rows(partner, "0042", business_date)[0].trade_record_id == "900000001"


def test_a_record_moving_to_another_day_takes_that_days_ttl(storage, partner):
    first_day, later_day = days_ago(20), days_ago(1)
    save(storage, partner, [row("900000003", first_day)])
    before = utc_now()
    batch = save(storage, partner, [row("900000003", later_day, version=2)])
    window = expected_ttl(later_day, (before, utc_now()))
    items = items_of(storage, partner, batch, "900000003", later_day)
    assert items["index entry"]["business_date"] == later_day.isoformat()
    for name, item in items.items():
        assert item["ttl"] in window, name
    tombstone = storage._containers.trade_records.read_item(
        keys.record_id("900000003"), partition_key=keys.day_key(partner, "0042", first_day.isoformat())
    )
    assert tombstone["type"] == "tombstone" and tombstone["ttl"] == 86_400  # gone sooner than its day


def test_closes_and_other_batches_carry_no_retention_ttl(storage, partner):
    business_date = days_ago(2)
    close = BatchMarker(partner, "close-1", "daily-close", 1, "d", T0, "0042", business_date)
    day = ClosedDay("0042", business_date, "close-1", "JPY", {"trade_record_count": 1}, T0, T0, "RECEIVED")
    assert storage.save_daily_close(close, day) is None
    marker = storage._containers.batches.read_item(
        keys.marker_id("close-1"), partition_key=keys.marker_key(partner, "close-1")
    )
    assert "ttl" not in marker
    assert storage.get_closed_day(partner, "0042", business_date) == day


def test_retention_off_writes_no_ttl(cosmos_emulator, database_name, partner):
    forever = CosmosStorage(cosmos_emulator.endpoint, database_name, key=cosmos_emulator.key)
    try:
        business_date = days_ago(400)
        batch = save(forever, partner, [row("900000004", business_date)])
        for name, item in items_of(forever, partner, batch, "900000004", business_date).items():
            assert "ttl" not in item, name
    finally:
        forever.close()


def test_the_emulator_keeps_an_item_past_its_ttl(storage, partner):
    """The emulator's gap, pinned down: should it start expiring items, the tests above can wait for it."""
    trades = storage._containers.trade_records
    pk = keys.day_key(partner, "0042", days_ago(40).isoformat())
    trades.create_item({"id": "expiring", "pk": pk, "type": "probe", "ttl": 1})
    time.sleep(2.5)
    assert trades.read_item("expiring", partition_key=pk)["ttl"] == 1
