"""Partner codes as storage keys, on both backends (decision 0014).

Codes are any printable text (ingest/wire/ `Code`): real systems write "FT A/123", "GST/HST" or
"#4411", and Cosmos DB refuses `/ \\ ? #` in an id. Every key built from a partner's code must hold it
exactly, and two codes that differ by one such character must never meet: the same contract as
tests/contract/test_storage_contract.py, with codes chosen to break naive escaping (`%` sequences, the
escape character `~`, the separator `|`), spaces around and inside, non-Latin scripts, emoji, and
200-character codes whose escaped keys outgrow Cosmos DB's 1,023-byte id limit.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import replace

import pytest

from backends.memory.storage import MemoryStorage
from backends.sqlite.storage import SqliteStorage
from core.records import ClosedDay, Mapping, ModifierGroupMaster, ProductMaster, SourceTypeTotals, StoreMaster
from ingest.wire.scalars import MAX_CODE_LENGTH, MAX_STORE_ID_LENGTH
from tests.contract.test_storage_contract import DAY, NEXT_DAY, T0, day_rows, marker, new_id, record, save_records

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")

# Codes as real POS systems write them, and codes made to collide under a careless escaping.
REAL_CODES = [
    "FT A/123",
    "FV/2024/01/001",
    "GST/HST",
    "ABC/12-XL",
    "#4411",
    "R/2024/77",
    "NF-e 35/2411\\001",
    "?",
    "#",
    "/",
    "\\",
    "發票 AB-12345678",
    "فاتورة ١٢٣",
    "ใบเสร็จ/001",
    "Чек №5",
    "🍔/🍟",
    "👨‍👩‍👧 #1",
]
TRICKY_CODES = [
    "a/b",
    "a%2Fb",
    "a%2fb",
    "a~2Fb",
    "a~7E2Fb",
    "a_b",
    "a b",
    "a  b",
    " a/b",
    "a/b ",
    " a/b ",
    "a|b",
    "a~7Cb",
    "a%7Cb",
    "a||b",
    "|",
    "~",
    "%",
    "100%",
    "a.b",
    "a-b",
    "a+b",
    "a\\b",
    "a?b",
    "a#b",
]
LONG_CODES = [
    "x" * MAX_CODE_LENGTH,
    "x" * (MAX_CODE_LENGTH - 1) + "/",
    "x" * (MAX_CODE_LENGTH - 1) + "?",
    "店" * MAX_CODE_LENGTH,
    "店" * (MAX_CODE_LENGTH - 1) + "#",
    "😀" * MAX_CODE_LENGTH,
    "/" * MAX_CODE_LENGTH,
    "\\" * MAX_CODE_LENGTH,
]
CODES = REAL_CODES + TRICKY_CODES + LONG_CODES
# Store ids keep a restricted set (no / \ ? #: they travel in a URL path), but everything else.
STORE_IDS = [
    "S1",
    "店 1",
    " S 1 ",
    "a%2Fb",
    "a~2Fb",
    "a|b",
    "Ф-1",
    "😀" * MAX_STORE_ID_LENGTH,
    "店" * MAX_STORE_ID_LENGTH,
    "x" * MAX_STORE_ID_LENGTH,
]


def test_the_codes_under_test_are_distinct_and_valid():
    from pydantic import TypeAdapter

    from ingest.wire.scalars import Code, StoreId

    assert len(set(CODES)) == len(CODES) and len(set(STORE_IDS)) == len(STORE_IDS)
    for code in CODES:
        TypeAdapter(Code).validate_python(code)
    for store_id in STORE_IDS:
        TypeAdapter(StoreId).validate_python(store_id)


@pytest.fixture
def partner(storage) -> str:
    partner_id = new_id()
    storage.add_partner(partner_id, "Partner", T0)
    storage.register_stores(partner_id, STORE_IDS, T0)
    return partner_id


# -- trade records --------------------------------------------------------------------------------


def test_records_keyed_by_any_code_are_stored_apart(storage, partner):
    rows = [record(code, total=index) for index, code in enumerate(CODES)]
    assert save_records(storage, partner, *rows) is None
    assert day_rows(storage, partner) == {row.trade_record_id: row for row in rows}


def test_the_highest_version_of_such_a_record_wins_and_moves_between_store_days(storage, partner):
    save_records(storage, partner, *[record(code) for code in CODES])
    moved, stayed = CODES[::2], CODES[1::2]
    # half of them move to another store-day (an odd store id); the rest get a higher version in place
    save_records(
        storage, partner, *[record(code, 2, store_id="店 1", business_date=NEXT_DAY, total=2) for code in moved]
    )
    save_records(storage, partner, *[record(code, 3, total=3) for code in stayed])
    # older versions sent later change nothing
    save_records(storage, partner, *[record(code, 1, T0 + dt.timedelta(days=1), total=9) for code in CODES])
    assert day_rows(storage, partner) == {code: record(code, 3, total=3) for code in stayed}
    assert day_rows(storage, partner, "店 1", NEXT_DAY) == {
        code: record(code, 2, store_id="店 1", business_date=NEXT_DAY, total=2) for code in moved
    }
    # and back again, with a higher version
    save_records(storage, partner, *[record(code, 4, total=4) for code in moved])
    assert day_rows(storage, partner, "店 1", NEXT_DAY) == {}
    assert set(day_rows(storage, partner)) == set(CODES)


def test_a_resent_batch_of_such_records_changes_nothing(storage, partner):
    rows = [record(code, total=1) for code in CODES]
    first = marker(partner, "trade-records", len(rows), store_id="S1", business_date=DAY, seq=1)
    assert storage.save_trade_records(first, rows).existing is None
    resend = replace(first, body_digest="other body")
    changed = [record(code, 5, total=5) for code in CODES]
    assert storage.save_trade_records(resend, changed).existing == first  # ALREADY_RECEIVED, with the first marker
    assert day_rows(storage, partner) == {row.trade_record_id: row for row in rows}
    assert storage.find_batch(partner, first.batch_id) == first


def test_records_of_the_same_code_are_per_partner(storage, partner):
    other = new_id("a|b")
    storage.add_partner(other, "Other", T0)
    save_records(storage, partner, *[record(code, 7) for code in REAL_CODES])
    save_records(storage, other, *[record(code, 1) for code in REAL_CODES])
    assert {row.version for row in day_rows(storage, partner).values()} == {7}
    assert {row.version for row in day_rows(storage, other).values()} == {1}


@pytest.mark.parametrize("store_id", STORE_IDS)
def test_store_days_of_any_store_id_hold_their_records_totals_batches_and_close(storage, partner, store_id):
    rows = [record(code, store_id=store_id, source_transaction_type=code, total=100) for code in REAL_CODES]
    save_records(storage, partner, *rows, seq=3)
    assert day_rows(storage, partner, store_id) == {row.trade_record_id: row for row in rows}
    assert storage.batch_seqs(partner, store_id, DAY) == [3]
    totals = storage.store_day_totals(partner, store_id, DAY)
    assert totals.by_source_type == {code: SourceTypeTotals(1, 2, 1, 100, 80, 0) for code in REAL_CODES}
    for other in STORE_IDS:
        if other != store_id:
            assert storage.store_day_rows(partner, other, DAY) == []

    close = ClosedDay(store_id, DAY, str(uuid.uuid4()), "USD", {"trade_record_count": len(rows)}, T0, T0, "RECEIVED")
    assert (
        storage.save_daily_close(
            marker(partner, "daily-close", batch_id=close.close_batch_id, store_id=store_id, business_date=DAY), close
        )
        is None
    )
    assert storage.get_closed_day(partner, store_id, DAY) == close
    checked = replace(
        close,
        status="MATCHED",
        checked_at=T0,
        actual={"trade_record_count": len(rows)},
        details={"source_codes": sorted(REAL_CODES), "unmapped_source_codes": sorted(REAL_CODES)},
    )
    assert storage.save_result(partner, checked) is True
    assert storage.get_closed_day(partner, store_id, DAY) == checked
    assert [day.store_id for day in storage.closed_days(partner)] == [store_id]


# -- master data and the mapping ------------------------------------------------------------------


def test_products_keyed_by_any_code_and_store_scope_are_kept_apart(storage, partner):
    scopes = [None, "S1", "店 1", "a%2Fb", "a|b", " S 1 "]
    products = [
        ProductMaster(code, scope, 1, T0, {"product_id": code, "store_id": scope}) for code in CODES for scope in scopes
    ]
    assert storage.save_products(marker(partner, "products", len(products)), products, []) is None
    for product in products:
        assert storage.get_product(partner, product.product_id, product.store_id) == product
    assert storage.get_product(partner, "a/b", "S2") is None
    assert storage.get_product(partner, "a/b|S1", None) is None  # the separator is escaped, not shared
    # the version rule holds for such codes too
    newer = [replace(product, version=2, document={"v": 2}) for product in products if product.store_id is None]
    older = [
        replace(product, version=1, last_modified_at=T0 - dt.timedelta(days=1), document={"v": 0}) for product in newer
    ]
    storage.save_products(marker(partner, "products", len(newer)), newer, [])
    storage.save_products(marker(partner, "products", len(older)), older, [])
    for product in newer:
        assert storage.get_product(partner, product.product_id, None) == product
    assert storage.get_product(partner, "FT A/123", "S1").version == 1


def _stored_groups(storage, partner_id: str) -> dict[str, dict]:
    """Modifier groups as stored: the port writes them (products refer to them) but has no read."""
    if isinstance(storage, MemoryStorage):
        return {
            group_id: group.document for (partner, group_id), group in storage._groups.items() if partner == partner_id
        }
    if isinstance(storage, SqliteStorage):
        import orjson

        with storage.db.read() as db:
            rows = db.execute("SELECT group_id, document FROM modifier_groups WHERE partner_id = ?", (partner_id,))
            return {group_id: orjson.loads(document) for group_id, document in rows}
    from backends.cosmos.keys import compound_key

    items = storage._containers.partners.query_items(
        "SELECT c.group_id, c.document FROM c WHERE c.pk = @pk AND c.type = 'modifier-group'",
        parameters=[{"name": "@pk", "value": compound_key(partner_id)}],
        partition_key=compound_key(partner_id),
    )
    return {item["group_id"]: item["document"] for item in items}


def test_modifier_groups_keyed_by_any_code_are_kept_apart(storage, partner):
    groups = [ModifierGroupMaster(code, {"group_id": code, "options": [{"option_id": code + "/1"}]}) for code in CODES]
    assert storage.save_products(marker(partner, "products"), [], groups) is None
    assert _stored_groups(storage, partner) == {group.group_id: group.document for group in groups}


def test_a_mapping_of_any_source_codes_is_kept_as_sent(storage, partner):
    entries = [{"source_code": code, "source_name": f"name {code}", "standard_code": "SALE"} for code in CODES]
    first = marker(partner, "mappings", len(entries))
    assert storage.replace_mapping(first, entries) is None
    assert storage.get_mapping(partner) == Mapping(first.batch_id, T0, entries)
    assert storage.get_mapping(partner).standard_code_of() == {code: "SALE" for code in CODES}


def test_payment_directions_of_any_payment_type_are_kept_apart(storage, partner):
    types = ["Gift/Card #1", "Gift~2FCard #1", "a.b", "a|b", "$ref", " SALE ", "積分/ポイント"]
    for direction, payment_type in enumerate(types):
        storage.set_payment_direction(partner, payment_type, direction % 3 - 1)
    assert storage.payment_directions(partner) == {code: index % 3 - 1 for index, code in enumerate(types)}
    assert storage.delete_payment_direction(partner, "Gift/Card #1") is True
    assert "Gift~2FCard #1" in storage.payment_directions(partner)


def test_stores_with_any_allowed_store_id_are_kept_apart(storage, partner):
    stores = [
        StoreMaster(store_id, "JPY", "JP", "Asia/Tokyo", "04:00", True, T0, {"store_id": store_id})
        for store_id in STORE_IDS
    ]
    assert storage.save_stores(marker(partner, "stores", len(stores)), stores) is None
    for store in stores:
        assert storage.get_store(partner, store.store_id) == store
    assert storage.registered_stores(partner) == sorted(STORE_IDS)
    assert storage.unregistered(partner, set(STORE_IDS) | {"a/b"}) == {"a/b"}


def test_cosmos_keys_of_any_code_are_distinct_plain_and_within_the_id_limit():
    import string

    from backends.cosmos.keys import compound_key, day_key

    safe = set(string.ascii_letters + string.digits + "-._~|")
    keys = {compound_key("product", code, scope) for code in CODES for scope in ("", *STORE_IDS)}
    keys |= {day_key("p-1", store_id, DAY.isoformat()) for store_id in STORE_IDS}
    assert len(keys) == len(CODES) * (1 + len(STORE_IDS)) + len(STORE_IDS)
    for key in keys:
        assert set(key) <= safe and len(key.encode()) <= 1023
    assert compound_key("r", "店" * MAX_CODE_LENGTH).startswith("sha256|")  # escaped, it would be 1,800 bytes
