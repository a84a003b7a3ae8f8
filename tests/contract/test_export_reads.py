"""The ExportReads role of the Storage port (the Parquet export), on every adapter: SQLite, Cosmos DB on the
emulator and the in-memory storage. The store-days checked in a span of time, across partners; a store-day's
latest records with their documents, page after page."""

from __future__ import annotations

import datetime as dt
from dataclasses import fields, replace

import orjson
import pytest

from backends.sqlite import exports as sqlite_exports
from core.clock import epoch_micros
from core.records import StoreDay
from tests.contract.test_storage_contract import DAY, NEXT_DAY, T0, close_day, new_id, record, result_of, save_records

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")

ODD_STORES = ["S1", "店舗/新宿 #1", "0042"]


def new_partner(storage) -> str:
    partner_id = new_id()
    storage.add_partner(partner_id, "Partner", T0)
    storage.register_stores(partner_id, ODD_STORES, T0)
    return partner_id


def checked(storage, partner_id: str, store_id: str, business_date: dt.date, at: dt.datetime) -> None:
    """A close of the store-day with a result checked at `at`."""
    day = close_day(storage, partner_id, new_id("close"), store_id, business_date)
    assert storage.save_result(partner_id, replace(result_of(day), checked_at=at))


def test_days_checked_are_those_of_every_partner_checked_in_the_span(storage):
    first, second = sorted([new_partner(storage), new_partner(storage)])
    checked(storage, first, "S1", NEXT_DAY, T0 + dt.timedelta(minutes=1))
    checked(storage, first, "店舗/新宿 #1", DAY, T0 + dt.timedelta(minutes=2))
    checked(storage, first, "0042", DAY, T0 + dt.timedelta(minutes=3))  # after the span below
    checked(storage, second, "S1", DAY, T0)  # at the start of the span: not after it
    checked(storage, second, "0042", DAY, T0 + dt.timedelta(seconds=1))
    close_day(storage, second, new_id("close"), "店舗/新宿 #1", DAY)  # RECEIVED: never checked

    span = storage.days_checked(T0, T0 + dt.timedelta(minutes=2))
    assert [entry for entry in span if entry[0] in (first, second)] == [
        (first, StoreDay("店舗/新宿 #1", DAY)),
        (first, StoreDay("S1", NEXT_DAY)),
        (second, StoreDay("0042", DAY)),
    ]
    ever = [entry for entry in storage.days_checked(None, T0 + dt.timedelta(hours=1)) if entry[0] == second]
    assert ever == [(second, StoreDay("0042", DAY)), (second, StoreDay("S1", DAY))]


def test_days_checked_stop_at_a_limit(storage):
    """The timer's bounded steps (export/checkpoint.py) ask for at most `limit` days of a span, to halve a span
    that holds more."""
    partner_id, start = new_partner(storage), T0 + dt.timedelta(days=1000)  # a span no other test uses
    days = [(partner_id, StoreDay(store_id, DAY)) for store_id in ("S1", "S2", "0042")]
    for second, (_, day) in enumerate(days, start=1):
        checked(storage, partner_id, day.store_id, day.business_date, start + dt.timedelta(seconds=second))
    end = start + dt.timedelta(seconds=3)
    every, three = storage.days_checked(start, end), storage.days_checked(start, end, 3)
    assert len(every) == len(three) == 3 and set(every) == set(three) == set(days)
    some = storage.days_checked(start, end, 2)
    assert len(some) == 2 and set(some) <= set(days)


def test_a_reopened_day_is_not_checked_until_its_next_result(storage):
    partner_id = new_partner(storage)
    checked(storage, partner_id, "S1", DAY, T0)
    storage.reopen_day(partner_id, StoreDay("S1", DAY), T0, [])
    assert [entry for entry in storage.days_checked(None, T0 + dt.timedelta(days=1)) if entry[0] == partner_id] == []


def documents_of(storage, partner_id: str, store_id: str = "S1", business_date: dt.date = DAY) -> dict:
    """The store-day's records read page by page: trade_record_id -> its fields, by DocumentsPage's names."""
    records = {}
    for page in storage.store_day_documents(partner_id, store_id, business_date):
        columns = {field.name: getattr(page, field.name) for field in fields(page)}
        assert len({len(values) for values in columns.values()}) == 1, columns  # every field of every record
        for position, trade_record_id in enumerate(page.trade_record_ids):
            assert trade_record_id not in records  # each record once
            records[trade_record_id] = {name: values[position] for name, values in columns.items()}
    return records


def test_store_day_documents_are_the_latest_version_of_each_record_with_its_document(storage):
    partner_id = new_partner(storage)
    other = new_partner(storage)
    save_records(storage, partner_id, record("T1", document_json='{"v": 1, "name": "カフェ"}'), record("T2"))
    save_records(
        storage,
        partner_id,
        record("T1", version=2, total=2500, document_json='{"v": 2, "name": "カフェ ラテ"}'),
        record("T3", store_id="S1", business_date=NEXT_DAY),
        seq=2,
    )
    save_records(storage, partner_id, record("T2", version=2, business_date=NEXT_DAY), seq=3)  # moves away
    save_records(storage, other, record("T1", version=9))

    rows = documents_of(storage, partner_id)
    assert sorted(rows) == ["T1"]
    t1 = rows["T1"]
    assert (t1["versions"], t1["source_types"], t1["total_minor"]) == (2, "01", 2500)
    assert (t1["item_rows"], t1["payment_rows"], t1["tax_minor"], t1["tip_minor"]) == (2, 1, 80, 0)
    assert t1["documents"].decode().replace(" ", "") == '{"v":2,"name":"カフェラテ"}'
    assert t1["last_modified_us"] == epoch_micros(T0)
    assert sorted(documents_of(storage, partner_id, business_date=NEXT_DAY)) == ["T2", "T3"]
    assert documents_of(storage, partner_id, "店舗/新宿 #1") == {}


def test_store_day_documents_read_a_day_of_many_pages_whole(storage, monkeypatch):
    monkeypatch.setattr(sqlite_exports, "DOCUMENTS_PER_PAGE", 7)  # SQLite's pages; Cosmos DB's are its own
    partner_id = new_partner(storage)
    rows = [
        record(f"{n:04d}", store_id="0042", source_transaction_type=code, document_json=f'{{"n": {n}}}')
        for n, code in zip(range(40), ["01", "02", "10"] * 14, strict=False)
    ]
    save_records(storage, partner_id, *rows)
    read = documents_of(storage, partner_id, "0042")
    assert sorted(read) == [f"{n:04d}" for n in range(40)]
    assert {trade_record_id: read[trade_record_id]["source_types"] for trade_record_id in read} == {
        row.trade_record_id: row.source_transaction_type for row in rows
    }
    assert {orjson.loads(read[f"{n:04d}"]["documents"])["n"] for n in range(40)} == set(range(40))
