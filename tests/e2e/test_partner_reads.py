"""Decisions 0025 and 0026 over real HTTP on both backends: payment_id is unique within the partner (a warning,
never a refusal), and HQ sees which product_ids of a store-day are not (yet) in the product master
(`python -m hq products missing`), then sees them matched once the products arrive (spec 4.6).

The storage reads themselves run on both adapters in tests/contract/test_storage_contract.py.
"""

from __future__ import annotations

import datetime as dt
import sqlite3

import orjson
import pytest

from backends.sqlite.storage import SqliteStorage
from core.records import UnknownProduct
from tests.backend_storage import storage_of
from tests.conftest import make_partner
from tests.e2e.test_business_day import DAY, DIRECTIONS, close_and_wait, open_store
from tests.e2e.test_cli import ok, refused
from tests.e2e.test_hq_operations import table
from tests.payloads import product, products_batch, store, stores_batch
from tests.trade_payloads import Line, Pay, totals_of, trade_batch, trade_record

NEXT_DAY = "2026-11-21"
REUSED = "PAYMENT_ID_REUSED"


@pytest.fixture
def shop(backend_host):
    partner = make_partner(backend_host, ("S1", "S2"))
    open_store(partner, "S1")
    assert partner.put("stores", stores_batch(store("S2"))).status_code == 202
    return partner


def sale(
    trade_record_id: str,
    *payment_ids: str,
    store_id: str = "S1",
    business_date: str = DAY,
    lines: list[Line] | None = None,
    **changes,
) -> dict:
    """A consistent sale whose payments carry the given payment_ids (one 5.50 payment each)."""
    lines = lines or [Line("P-BURGER", len(payment_ids) or 1, 550)]
    pays = [Pay(550) for _ in payment_ids]
    record = trade_record(
        store_id,
        business_date,
        lines,
        pays,
        trade_record_id=trade_record_id,
        opened_at=f"{business_date}T12:00:00-05:00",
        **changes,
    )
    for payment, payment_id in zip(record["payments"], payment_ids, strict=True):
        payment["payment_id"] = payment_id
    return record


def send(partner, records: list[dict], store_id: str = "S1", business_date: str = DAY) -> dict:
    response = partner.post("trade-records", trade_batch(store_id, business_date, records))
    assert response.status_code == 202, response.text
    assert response.json()["status"] == "ACCEPTED"
    return response.json()


def reused(answer: dict) -> list[tuple[str, str]]:
    return [(w["path"], w["field"]) for w in answer["warnings"] if w["code"] == REUSED]


# --- payment_id is unique within the partner -------------------------------------------------------


def test_a_payment_id_of_another_trade_record_is_reported_across_stores_and_dates(shop):
    assert reused(send(shop, [sale("FT A-123", "000123", "VISA 4411-01")])) == []
    # Another store and business date of the same partner: still the partner's payment_id.
    elsewhere = {"store_id": "S2", "business_date": NEXT_DAY}
    later = send(
        shop,
        [sale("收据-0007", "支付-0007", **elsewhere), sale("FT A-124", "PAY 9", "VISA 4411-01", **elsewhere)],
        **elsewhere,
    )
    assert reused(later) == [("trade_records[1]", "payments[1].payment_id")]
    warning = next(w for w in later["warnings"] if w["code"] == REUSED)
    assert '"FT A-123"' in warning["message"]  # the other record, so the partner can find the clash
    assert "4411" not in warning["message"]  # the payment_id itself is located by field, not repeated

    # Both records are stored: a warning, never a refusal.
    rows = storage_of(shop.host).store_day_rows(shop.partner_id, "S2", dt.date.fromisoformat(NEXT_DAY))
    assert {row.trade_record_id for row in rows} == {"收据-0007", "FT A-124"}


def test_a_new_version_of_the_same_record_keeps_its_payment_ids_without_a_warning(shop):
    send(shop, [sale("T-100", "000100")])
    corrected = sale("T-100", "000100", version=2, last_modified_at="2026-11-20T21:00:00Z")
    assert reused(send(shop, [corrected])) == []
    # Resent as its own batch again (a new batch_id, same record): still its own.
    assert reused(send(shop, [corrected])) == []


def test_two_records_of_one_batch_sharing_a_payment_id_are_reported(shop):
    answer = send(shop, [sale("T-1", "1001"), sale("T-2", "1002", "1001"), sale("T-3", "1001")])
    assert reused(answer) == [
        ("trade_records[1]", "payments[1].payment_id"),
        ("trade_records[2]", "payments[0].payment_id"),
    ]
    messages = [w["message"] for w in answer["warnings"] if w["code"] == REUSED]
    assert all("trade_records[0] of this batch" in message for message in messages)


def test_payment_ids_are_per_partner(shop, backend_host):
    send(shop, [sale("T-1", "1")])
    other = make_partner(backend_host)
    open_store(other)
    assert reused(send(other, [sale("T-1", "1"), sale("T-2", "2")])) == []


def test_a_payment_id_freed_by_a_new_version_is_no_longer_reported(shop):
    send(shop, [sale("T-1", "PAY-7")])
    send(shop, [sale("T-1", "PAY-8", version=2, last_modified_at="2026-11-20T21:00:00Z")])
    assert reused(send(shop, [sale("T-2", "PAY-7")])) == []
    assert reused(send(shop, [sale("T-3", "PAY-8")])) == [("trade_records[0]", "payments[0].payment_id")]


# --- products not (yet) in the master: hq products missing ---------------------------------------


def missing(partner, store_id: str = "S1", business_date: str = DAY) -> dict[str, tuple[str, str]]:
    shown = ok(partner.host.hq_in_process("products", "missing", partner.partner_id, store_id, business_date))
    if shown.startswith("Every product_id"):
        return {}
    return {row["PRODUCT_ID"]: (row["ITEM_LINES"], row["TRADE_RECORDS"]) for row in table(shown)}


def test_hq_sees_the_products_a_day_waits_for_and_sees_them_matched_once_they_arrive(shop):
    assert missing(shop) == {}
    combo_lines = [
        Line("P-COMBO", 1, 899, product_type="COMBO"),
        Line("P-BURGER", 1, 0, product_type="SINGLE", parent_line_no=1),
        Line("牛肉麵-大", 1, 0, product_type="SINGLE", parent_line_no=1),
    ]
    records = [
        sale("T-1", "P1", lines=combo_lines, tax=72),
        sale("T-2", "P2", lines=[Line("牛肉麵-大", 2, 450), Line("SKU 000123", 1, 100)]),
        sale("T-3", "P3", lines=[Line("P-BURGER", 1, 550)]),
    ]
    send(shop, records)
    send(shop, [sale("T-9", "P9", store_id="S2", lines=[Line("ONLY-IN-S2", 1, 100)])], store_id="S2")
    assert shop.put("products", products_batch([product("P-BURGER", modifier_group_ids=[])])).status_code == 202
    assert missing(shop) == {"P-COMBO": ("1", "1"), "SKU 000123": ("1", "1"), "牛肉麵-大": ("2", "2")}
    assert missing(shop, "S2") == {"ONLY-IN-S2": ("1", "1")}

    # The products arrive: one for all stores, one for this store only, one for another store.
    arrived = [
        product("牛肉麵-大", modifier_group_ids=[]),
        product("SKU 000123", store_id="S1", modifier_group_ids=[]),
        product("P-COMBO", store_id="S2", modifier_group_ids=[]),
    ]
    assert shop.put("products", products_batch(arrived)).status_code == 202
    assert missing(shop) == {"P-COMBO": ("1", "1")}
    assert shop.put("products", products_batch([product("P-COMBO", modifier_group_ids=[])])).status_code == 202
    assert missing(shop) == {}
    # The day was accepted and reconciles all along: products never held a transaction back.
    assert close_and_wait(shop, "S1", totals_of(records, {"01"}, DIRECTIONS))["status"] == "MATCHED"


def test_hq_products_missing_as_a_separate_process(shop):
    send(shop, [sale("T-1", "P1", lines=[Line("P-NEW", 1, 550)])])
    shown = ok(shop.host.hq("products", "missing", shop.partner_id, "S1", DAY))
    assert shown.splitlines()[0].split() == ["PRODUCT_ID", "ITEM_LINES", "TRADE_RECORDS"]
    assert table(shown) == [{"PRODUCT_ID": "P-NEW", "ITEM_LINES": "1", "TRADE_RECORDS": "1"}]
    assert "not (yet) in the product master" in shown and "PUT /products" in shown
    refused(shop.host.hq("products", "missing", "no-such-partner", "S1", DAY), "unknown partner no-such-partner")
    refused(shop.host.hq("products", "missing", shop.partner_id, "S1", "20-11-2026"), "20-11-2026")
    assert "Every product_id" in ok(shop.host.hq("products", "missing", shop.partner_id, "S1", NEXT_DAY))


# --- a database of the previous version -----------------------------------------------------------

# trade_records as the previous version created it, without payment_ids and product_lines.
PREVIOUS_TRADE_RECORDS = """
CREATE TABLE trade_records (
    partner_id TEXT NOT NULL, trade_record_id TEXT NOT NULL, version INTEGER NOT NULL,
    last_modified_us INTEGER NOT NULL, store_id TEXT NOT NULL, business_date TEXT NOT NULL,
    source_type TEXT NOT NULL, item_rows INTEGER NOT NULL, payment_rows INTEGER NOT NULL,
    total_minor INTEGER NOT NULL, tax_minor INTEGER NOT NULL, tip_minor INTEGER NOT NULL,
    payments TEXT NOT NULL, document TEXT NOT NULL,
    PRIMARY KEY (partner_id, trade_record_id));
"""


def test_a_database_of_the_previous_version_gets_payment_ids_and_product_lines_from_its_records(tmp_path):
    (tmp_path / "pos.sqlite3").parent.mkdir(exist_ok=True)
    with sqlite3.connect(tmp_path / "pos.sqlite3") as db:
        db.executescript(PREVIOUS_TRADE_RECORDS)
        for trade_record_id, record in (
            (
                "T-1",
                sale(
                    "T-1",
                    "000123",
                    "PAY 2",
                    lines=[Line("牛肉麵-大", 1, 450), Line("P-BURGER", 1, 550), Line("牛肉麵-大", 1, 450)],
                ),
            ),
            ("T-2", sale("T-2", lines=[Line("P-BURGER", 1, 550)])),
        ):
            db.execute(
                "INSERT INTO trade_records VALUES ('p1', ?, 1, 0, 'S1', ?, '01', 1, 1, 0, 0, 0, '{}', ?)",
                (trade_record_id, DAY, orjson.dumps(record).decode()),
            )
        db.execute(
            "INSERT INTO trade_records VALUES ('p1', 'T-3', 1, 0, 'S1', ?, '01', 1, 1, 0, 0, 0, '{}', '')", (DAY,)
        )  # a record without a readable document keeps empty lists

    storage = SqliteStorage(tmp_path)
    day = dt.date.fromisoformat(DAY)
    assert storage.trade_records_by_payment_id("p1", ["000123", "PAY 2", "other"]) == {
        "000123": {"T-1"},
        "PAY 2": {"T-1"},
    }
    assert storage.unknown_products("p1", "S1", day) == [
        UnknownProduct("P-BURGER", 2, 2),
        UnknownProduct("牛肉麵-大", 2, 1),
    ]
    assert SqliteStorage(tmp_path).unknown_products("p1", "S1", day)  # opened again: nothing left to do
    with storage.db.read() as db:
        assert db.execute(
            "SELECT payment_ids, product_lines FROM trade_records WHERE trade_record_id = 'T-3'"
        ).fetchone()[:] == ("[]", "{}")


# --- the rule alone -------------------------------------------------------------------------------


def test_the_rule_names_a_few_stored_records_and_counts_the_rest():
    from ingest.payment_ids import reused_payment_ids
    from ingest.wire.requests import TradeRecordsBatch

    records = [sale("T-1", "P-1", "P-2"), sale("T-2", "P-2")]
    batch = TradeRecordsBatch.model_validate_json(orjson.dumps(trade_batch("S1", DAY, records)))
    stored = {"P-1": {"T-1"}, "P-2": {"T-1", "A", "B", "C", "D"}}
    warnings = reused_payment_ids(batch.trade_records, stored)
    assert [(w.path, w.field) for w in warnings] == [
        ("trade_records[0]", "payments[1].payment_id"),
        ("trade_records[1]", "payments[0].payment_id"),
    ]
    assert '"A", "B", "C" and 1 more' in warnings[0].message  # T-1 itself is not "another" record
    assert '"A", "B", "C" and 2 more' in warnings[1].message  # for T-2, T-1 is one of them
