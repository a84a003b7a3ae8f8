"""The DayRecordReads role (core/day_records.py: a store-day's latest records a page at a time), on every
adapter: SQLite, Cosmos DB on the emulator and the in-memory storage."""

from __future__ import annotations

import pytest

from tests.contract.test_storage_contract import DAY, NEXT_DAY, T0, marker, new_id, record
from tests.emulators import open_storage_of_kind

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")

STORE = "店舗/新宿 #1"


@pytest.fixture(params=["sqlite", "cosmos", "memory", "cosmos-429"])
def storage(request, tmp_path):
    """Every adapter, and Cosmos DB meeting injected 429s (tests/throttled_storage.py)."""
    return open_storage_of_kind(request.param, request, tmp_path)


def new_partner(storage) -> str:
    partner_id = new_id()
    storage.add_partner(partner_id, "Partner", T0)
    storage.register_stores(partner_id, [STORE, "S2"], T0)
    return partner_id


def save(storage, partner_id: str, rows, batch_id: str | None = None) -> str:
    first = rows[0]
    stamp = marker(
        partner_id, "trade-records", len(rows), store_id=first.store_id, business_date=first.business_date, seq=1
    )
    if batch_id is not None:
        stamp = marker(
            partner_id,
            "trade-records",
            len(rows),
            batch_id=batch_id,
            store_id=first.store_id,
            business_date=first.business_date,
            seq=1,
        )
    storage.save_trade_records(stamp, list(rows))
    return stamp.batch_id


def all_pages(storage, partner_id: str, limit: int, source_type: str | None = None, day=DAY) -> list:
    records, cursor, pages = [], None, 0
    while True:
        page = storage.day_records(partner_id, STORE, day, limit=limit, cursor=cursor, source_type=source_type)
        assert len(page.records) <= limit
        records += page.records
        pages += 1
        cursor = page.cursor
        if cursor is None:
            return records
        assert pages < 50


def test_a_day_is_read_page_by_page_each_record_once_with_its_batch_and_status(storage):
    partner_id = new_partner(storage)
    ramen = [
        record(f"0042-{n:04d}", store_id=STORE, total=1000 + n, source_transaction_type="01" if n % 3 else "99")
        for n in range(1, 12)
    ]
    ramen[0].document_json = '{"status": "VOIDED", "note": "取消"}'
    first_batch = save(storage, partner_id, ramen[:6])
    second_batch = save(storage, partner_id, ramen[6:])
    save(storage, partner_id, [record("other-day", store_id=STORE, business_date=NEXT_DAY)])

    records = all_pages(storage, partner_id, limit=4)

    assert sorted(one.trade_record_id for one in records) == sorted(row.trade_record_id for row in ramen)
    by_id = {one.trade_record_id: one for one in records}
    voided = by_id["0042-0001"]
    assert (voided.status, voided.source_type, voided.version, voided.total_minor) == ("VOIDED", "01", 1, 1001)
    assert (voided.item_rows, voided.payment_rows, voided.tax_minor, voided.tip_minor) == (2, 1, 80, 0)
    assert voided.payments_minor == {"SALE": 1001}
    assert by_id["0042-0002"].status is None  # a document without a status
    assert {by_id[f"0042-{n:04d}"].batch_id for n in range(1, 7)} == {first_batch}
    assert {by_id[f"0042-{n:04d}"].batch_id for n in range(7, 12)} == {second_batch}
    assert storage.day_records(partner_id, STORE, DAY, limit=500).cursor is None


def test_a_page_holds_one_type_when_asked_and_a_new_version_names_its_batch(storage):
    partner_id = new_partner(storage)
    save(storage, partner_id, [record(f"T-{n}", store_id=STORE, source_transaction_type=f"0{n % 2}") for n in range(6)])
    later = save(storage, partner_id, [record("T-1", 2, store_id=STORE, source_transaction_type="01", total=5)])

    ones = all_pages(storage, partner_id, limit=2, source_type="01")

    assert sorted(one.trade_record_id for one in ones) == ["T-1", "T-3", "T-5"]
    assert {one.source_type for one in ones} == {"01"}
    revised = next(one for one in ones if one.trade_record_id == "T-1")
    assert (revised.version, revised.total_minor, revised.batch_id) == (2, 5, later)
    assert all_pages(storage, partner_id, limit=2, source_type="no such type") == []


def test_a_record_moved_to_another_day_leaves_the_page_of_its_old_day(storage):
    partner_id = new_partner(storage)
    save(storage, partner_id, [record("M-1", store_id=STORE), record("M-2", store_id=STORE)])
    save(storage, partner_id, [record("M-1", 2, store_id=STORE, business_date=NEXT_DAY)])

    assert [one.trade_record_id for one in all_pages(storage, partner_id, limit=10)] == ["M-2"]
    assert [one.trade_record_id for one in all_pages(storage, partner_id, limit=10, day=NEXT_DAY)] == ["M-1"]


def test_an_empty_day_is_one_empty_page(storage):
    page = storage.day_records(new_partner(storage), STORE, DAY, limit=10)
    assert (page.records, page.cursor) == ([], None)


def test_a_cursor_the_adapter_did_not_give_is_a_value_error(storage):
    partner_id = new_partner(storage)
    save(storage, partner_id, [record(f"C-{n}", store_id=STORE) for n in range(3)])
    for garbage in ("not a cursor", '["only one"]', "{}"):
        with pytest.raises(ValueError):
            storage.day_records(partner_id, STORE, DAY, limit=1, cursor=garbage)
