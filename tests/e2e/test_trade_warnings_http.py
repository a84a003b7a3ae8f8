"""Recording-rule warnings and data protection over real HTTP (spec 4.7; decisions 0023, 0040 and 0041).

The rules themselves are unit-tested in test_trade_rules.py and test_data_protection.py; here each
one is shown to reach the partner in the 202 response (or as a 400 that stores nothing).
"""

from __future__ import annotations

import itertools
import sqlite3

import pytest

from ingest.wire.responses import BatchResponse
from tests.e2e.test_business_day import DAY, open_store
from tests.payloads import mapping_batch
from tests.trade_payloads import Line, Pay, trade_batch, trade_record

_BATCH_SEQS = itertools.count(1)  # each batch of a store-day has its own batch_seq (else BATCH_SEQ_REPEATED)


def warnings_for(partner, record) -> list[tuple[str, str, str | None]]:
    """(code, path, field) of each warning: path locates the record, field the field within it."""
    response = partner.post("trade-records", trade_batch("S1", DAY, [record], next(_BATCH_SEQS)))
    assert response.status_code == 202, response.text
    return [(w["code"], w["path"], w.get("field")) for w in response.json()["warnings"]]


@pytest.fixture
def shop(partner):
    open_store(partner)
    assert (
        partner.put(
            "mappings/transaction-types",
            mapping_batch(("01", "SALE"), ("02", "REFUND"), ("03", "RETURN"), ("04", "EXCHANGE")),
        ).status_code
        == 202
    )
    return partner


def test_a_clean_record_has_no_warnings(shop):
    assert warnings_for(shop, trade_record("S1", DAY, [Line("P-BURGER", 2, 550)], tax=98)) == []


def test_amount_identity(shop):
    record = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], tax=49)
    record["total_amount"] = "5.98"  # the identity gives 5.50 + 0.49 = 5.99
    assert warnings_for(shop, record) == [("AMOUNT_MISMATCH", "trade_records[0]", "total_amount")]


def test_tax_included_identity_does_not_add_tax(shop):
    record = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], tax=49, prices_include_tax=True)
    assert warnings_for(shop, record) == []
    record["total_amount"] = "5.99"
    assert warnings_for(shop, record) == [("AMOUNT_MISMATCH", "trade_records[0]", "total_amount")]


def test_line_amount(shop):
    record = trade_record("S1", DAY, [Line("P-BURGER", 2, 550)])
    record["items"][0]["line_amount"] = "11.01"
    codes = warnings_for(shop, record)
    assert ("LINE_AMOUNT_MISMATCH", "trade_records[0]", "items[0].line_amount") in codes


def test_combo_child_must_point_at_a_combo_line_and_cost_zero(shop):
    lines = [
        Line("P-COMBO", 1, 899, product_type="COMBO"),
        Line("P-BURGER", 1, 0, parent_line_no=1),
        Line("P-COLA", 1, 199, product_type="DRINK", parent_line_no=1),
        Line("P-FRIES", 1, 0, parent_line_no=9),
    ]
    codes = warnings_for(shop, trade_record("S1", DAY, lines))
    assert [c for c in codes if c[0] == "COMBO_CHILD_INVALID"] == [
        ("COMBO_CHILD_INVALID", "trade_records[0]", "items[2].unit_price"),
        ("COMBO_CHILD_INVALID", "trade_records[0]", "items[3].parent_line_no"),
    ]


def test_refund_and_return_need_negative_quantities(shop):
    for source in ("02", "03"):
        codes = warnings_for(
            shop, trade_record("S1", DAY, [Line("P-FRIES", 1, 299)], source_type=source, payments=[Pay(299, "REFUND")])
        )
        assert ("SIGN_EXPECTED_NEGATIVE", "trade_records[0]", "items[0].quantity") in codes


def test_sale_needs_positive_quantities(shop):
    codes = warnings_for(shop, trade_record("S1", DAY, [Line("P-BURGER", 2, 550), Line("P-FRIES", -1, 299)]))
    assert ("SIGN_EXPECTED_POSITIVE", "trade_records[0]", "items[1].quantity") in codes


def test_exchange_needs_a_returned_and_a_new_line(shop):
    one_sided = trade_record("S1", DAY, [Line("P-RINGS", 1, 429)], source_type="04")
    assert [c for c, *_ in warnings_for(shop, one_sided)] == ["EXCHANGE_LINES_ONE_SIDED"]
    both = trade_record("S1", DAY, [Line("P-FRIES", -1, 349), Line("P-RINGS", 1, 429)], source_type="04")
    assert warnings_for(shop, both) == []


def test_negative_payment_and_unknown_payment_type(shop):
    record = trade_record(
        "S1",
        DAY,
        [Line("P-BURGER", 1, 550)],
        payments=[Pay(600, "SALE"), Pay(-50, "SALE"), Pay(0, "STORE_CREDIT_SWAP")],
    )
    codes = warnings_for(shop, record)
    assert ("PAYMENT_AMOUNT_NEGATIVE", "trade_records[0]", "payments[1].amount") in codes
    assert ("PAYMENT_TYPE_UNKNOWN_DIRECTION", "trade_records[0]", "payments[2].payment_type") in codes


def test_business_date_follows_the_store_time_zone_and_workday_start(shop):
    # The store is in New York with workday_start 04:00: 03:30 local on the 21st is still the 20th.
    late_night = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], opened_at="2026-11-21T03:30:00-05:00")
    assert warnings_for(shop, late_night) == []
    next_day = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], opened_at="2026-11-21T04:30:00-05:00")
    assert warnings_for(shop, next_day) == [("BUSINESS_DATE_MISMATCH", "trade_records[0]", "business_date")]


def test_a_warning_names_the_record_as_the_specification_shows_it(shop):
    """path is exactly the record's location, so a partner matching it finds the record; field says where."""
    records = [
        trade_record("S1", DAY, [Line("P-牛肉麵-大", 1, 18000)], trade_record_id="FT A 123"),
        trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], trade_record_id="20261120-0042"),
        trade_record("S1", DAY, [Line("P-BURGER", 1, 550), Line("P-FRIES", 1, 299)], trade_record_id="4711"),
    ]
    records[2]["items"][1]["line_amount"] = "3.00"
    records[2]["subtotal_amount"] = records[2]["total_amount"] = records[2]["payments"][0]["amount"] = "8.50"
    response = shop.post("trade-records", trade_batch("S1", DAY, records))
    assert response.status_code == 202, response.text
    (warning,) = response.json()["warnings"]
    assert warning == {
        "code": "LINE_AMOUNT_MISMATCH",
        "path": "trade_records[2]",
        "field": "items[1].line_amount",
        "message": warning["message"],
    }
    BatchResponse.model_validate_json(response.content)


def test_closed_at_is_null_while_a_transaction_is_open(shop):
    open_with_close = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], status="OPEN")
    assert warnings_for(shop, open_with_close) == [("CLOSED_AT_WHILE_OPEN", "trade_records[0]", "closed_at")]
    still_open = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], status="OPEN", closed_at=None)
    assert warnings_for(shop, still_open) == []
    # closed_at is optional: a closed transaction without it is not warned about.
    for status in ("COMPLETED", "REFUNDED", "PARTIALLY_REFUNDED"):
        no_time = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], status=status, closed_at=None)
        assert warnings_for(shop, no_time) == []


def test_how_hq_counts_a_record_is_told_where_it_may_surprise(shop):
    """Decision 0027: an unmapped source type is warned at the record; a VOIDED sale counts as a sale (HQ counts
    by standard type, not status), and says so; a VOIDED record mapped to VOID is not a sale."""
    unmapped = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], source_type="77")
    assert warnings_for(shop, unmapped) == [("SOURCE_TYPE_UNMAPPED", "trade_records[0]", "source_transaction_type")]
    voided_sale = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], status="VOIDED", closed_at=None)
    assert warnings_for(shop, voided_sale) == [("VOIDED_COUNTED_BY_TYPE", "trade_records[0]", "status")]
    assert shop.put("mappings/transaction-types", mapping_batch(("01", "SALE"), ("09", "VOID"))).status_code == 202
    voided = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], status="VOIDED", source_type="09", closed_at=None)
    assert warnings_for(shop, voided) == []


def _stored(partner) -> int:
    with sqlite3.connect(partner.host.data_dir / "pos.sqlite3") as db:
        return db.execute("SELECT count(*) FROM trade_records WHERE partner_id = ?", (partner.partner_id,)).fetchone()[
            0
        ]


@pytest.mark.parametrize("member_id", ["jane.doe@example.com", "(202) 555-0143", "+1 202-555-0143"])
def test_member_id_must_not_be_an_email_or_phone_number(shop, member_id):
    record = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], member_id=member_id)
    clean = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], member_id="M-000123")
    response = shop.post("trade-records", trade_batch("S1", DAY, [clean, record]))
    assert response.status_code == 400
    assert [e["path"] for e in response.json()["errors"]] == ["trade_records[1].member_id"]
    assert member_id not in response.text
    assert _stored(shop) == 0
    assert member_id not in shop.host.log()


def test_a_card_number_in_free_text_is_refused_and_never_echoed(shop):
    card = "4111 1111 1111 1111"
    record = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)])
    record["payments"][0]["payment_method_detail"] = f"VISA {card}"
    response = shop.post("trade-records", trade_batch("S1", DAY, [record]))
    assert response.status_code == 400
    assert [e["path"] for e in response.json()["errors"]] == ["trade_records[0].payments[0].payment_method_detail"]
    assert card not in response.text and "1111" not in response.text
    assert _stored(shop) == 0
    assert card not in shop.host.log()
