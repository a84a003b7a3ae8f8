"""POST /trade-records and POST /daily-close validation over real HTTP (spec 4.7, 4.8, 4.9)."""

from __future__ import annotations

import json
import sqlite3

import pytest
from pydantic import TypeAdapter

from ingest.trade_records import document_json
from ingest.wire.requests import TradeRecord
from tests.e2e.test_business_day import DAY, DIRECTIONS, open_store
from tests.payloads import changed, store, stores_batch
from tests.trade_payloads import Line, daily_close, totals_of, trade_batch, trade_record


def sale(store_id="S1", business_date=DAY, **changes):
    return trade_record(store_id, business_date, [Line("P-BURGER", 1, 550)], tax=44, **changes)


def problem_paths(response) -> set[str]:
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "INVALID_PAYLOAD"
    return {error["path"] for error in response.json()["errors"]}


def stored_count(partner) -> int:
    with sqlite3.connect(partner.host.data_dir / "pos.sqlite3") as db:
        return db.execute("SELECT count(*) FROM trade_records WHERE partner_id = ?", (partner.partner_id,)).fetchone()[
            0
        ]


def test_records_must_match_the_outer_store_and_date(new_partner):
    partner = new_partner(stores=("S1", "S2"))
    open_store(partner)
    body = trade_batch("S1", DAY, [sale(), sale(store_id="S2"), sale(business_date="2026-11-19")])
    assert problem_paths(partner.post("trade-records", body)) == {
        "trade_records[1].store_id",
        "trade_records[2].business_date",
    }
    assert stored_count(partner) == 0


def test_money_places_follow_the_currency_everywhere_in_a_record(partner):
    open_store(partner)
    record = sale()
    record = changed(record, "tax_amount", "0.4")
    record = changed(record, "items.0.unit_price", "5.5")
    record = changed(record, "payments.0.amount", "5")
    record["tax_lines"] = [
        {
            "tax_code": "NY",
            "tax_rate": "0.08875",
            "taxable_amount": "5.500",
            "tax_amount": "0.49",
            "is_inclusive": False,
        }
    ]
    paths = problem_paths(partner.post("trade-records", trade_batch("S1", DAY, [record])))
    assert paths == {
        "trade_records[0].tax_amount",
        "trade_records[0].items[0].unit_price",
        "trade_records[0].payments[0].amount",
        "trade_records[0].tax_lines[0].taxable_amount",
    }


def test_record_currency_must_equal_the_store_currency(partner):
    open_store(partner)
    record = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], currency="EUR")
    assert problem_paths(partner.post("trade-records", trade_batch("S1", DAY, [record]))) == {
        "trade_records[0].currency"
    }


@pytest.mark.parametrize(
    "field,value",
    [
        ("order_type", "TAKEAWAY"),
        ("status", "DONE"),
        ("order_source", "x" * 51),
        ("member_id", "m" * 51),
        ("version", 0),
        ("version", "2"),
        ("business_date", "2026-11-31"),
        ("opened_at", "2026-11-20T12:00:00"),
        ("items", []),
        ("payments.0.card_last4", "123"),
        ("payments.0.card_last4", "12a4"),
        ("payments.0.payment_type", "P" * 51),
        ("payments.0.payment_method", "BITCOIN"),
        ("total_amount", 5.94),
        ("items.0.is_voided", "false"),
        ("items.0.modifiers", None),
    ],
)
def test_each_field_rule_is_invalid_payload(partner, field, value):
    open_store(partner)
    record = changed(sale(), field, value)
    paths = problem_paths(partner.post("trade-records", trade_batch("S1", DAY, [record])))
    assert f"trade_records[0].{field}".replace(".0.", "[0].") in paths


def test_free_strings_up_to_fifty_characters_and_unknowns_are_accepted(partner):
    open_store(partner)
    record = sale(order_source="X" * 50, order_source_detail="Y" * 50, member_id="M" * 50)
    record["items"][0]["product_id"] = "NEVER-SENT-AS-A-PRODUCT"
    record["source_transaction_type"] = "UNMAPPED-CODE"
    response = partner.post("trade-records", trade_batch("S1", DAY, [record]))
    assert response.status_code == 202, response.text


def test_batch_limits(partner):
    open_store(partner)
    too_many = partner.post("trade-records", trade_batch("S1", DAY, [sale() for _ in range(501)]))
    assert too_many.status_code == 400 and too_many.json()["code"] == "BATCH_TOO_LARGE"
    assert problem_paths(partner.post("trade-records", trade_batch("S1", DAY, []))) == {"trade_records"}
    assert partner.post("trade-records", trade_batch("S1", DAY, [sale() for _ in range(500)])).status_code == 202


def test_unregistered_store_is_forbidden(partner):
    response = partner.post("trade-records", trade_batch("ELSEWHERE", DAY, [sale("ELSEWHERE")]))
    assert response.status_code == 403 and response.json()["code"] == "STORE_NOT_ALLOWED"


def test_transactions_need_the_store_master_data_first(partner):
    response = partner.post("trade-records", trade_batch("S1", DAY, [sale()]))
    assert problem_paths(response) == {"store_id"}
    assert "PUT /stores" in response.json()["errors"][0]["message"]


def test_a_resend_with_another_body_is_already_received_with_a_warning(partner):
    open_store(partner)
    body = trade_batch("S1", DAY, [sale()])
    assert partner.post("trade-records", body).status_code == 202
    same = partner.post("trade-records", body)
    assert same.status_code == 200 and same.headers["Idempotent-Replayed"] == "true"
    assert same.json() == {
        "batch_id": body["batch_id"],
        "status": "ALREADY_RECEIVED",
        "record_count": 1,
        "warnings": [],
    }
    other = partner.post("trade-records", {**body, "trade_records": [sale(), sale()]})
    assert other.status_code == 200 and other.json()["record_count"] == 1
    assert [w["code"] for w in other.json()["warnings"]] == ["RESEND_BODY_IGNORED"]
    assert stored_count(partner) == 1


def test_daily_close_currency_places_and_store(partner):
    open_store(partner)
    totals = totals_of([], {"01"}, DIRECTIONS)
    assert problem_paths(partner.post("daily-close", daily_close("S1", DAY, totals, currency="JPY"))) >= {"currency"}
    bad_places = daily_close("S1", DAY, {**totals, "tax_amount": "0.0"})
    assert problem_paths(partner.post("daily-close", bad_places)) == {"tax_amount"}
    forbidden = partner.post("daily-close", daily_close("S9", DAY, totals))
    assert forbidden.status_code == 403 and forbidden.json()["code"] == "STORE_NOT_ALLOWED"
    assert problem_paths(partner.post("daily-close", daily_close("S1", "2026/11/20", totals))) == {"business_date"}


def test_daily_close_resend_is_already_received(partner):
    open_store(partner)
    body = daily_close("S1", DAY, totals_of([], {"01"}, DIRECTIONS))
    assert partner.post("daily-close", body).status_code == 202
    again = partner.post("daily-close", body)
    assert again.status_code == 200 and again.json()["status"] == "ALREADY_RECEIVED"
    assert again.json()["record_count"] == 1


@pytest.mark.parametrize("date", ["2026-13-01", "20261120", "2026-11-20x", "yesterday", "2026-02-30"])
def test_status_with_a_badly_formatted_date_is_invalid_payload(partner, date):
    assert problem_paths(partner.get(f"daily-close/S1/{date}")) == {"business_date"}


def test_status_of_an_unregistered_store_is_forbidden(partner):
    response = partner.get(f"daily-close/NOT-MINE/{DAY}")
    assert response.status_code == 403 and response.json()["code"] == "STORE_NOT_ALLOWED"


def test_store_currency_change_is_seen_by_later_records(partner):
    open_store(partner)
    assert (
        partner.put(
            "stores",
            stores_batch(store("S1", currency="CAD", country_code="CA", last_modified_at="2026-11-02T00:00:00Z")),
        ).status_code
        == 202
    )
    assert problem_paths(partner.post("trade-records", trade_batch("S1", DAY, [sale()]))) == {
        "trade_records[0].currency"
    }


@pytest.mark.parametrize(
    "opened_at",
    [
        "2026-11-20T12:00:00Z",
        "2026-11-20T12:00:00+00:00",
        "2026-11-20T12:00:00.250-05:30",
        "2026-11-20T12:00:00.000001+14:00",
    ],
)
def test_the_stored_document_is_the_models_own_json(opened_at):
    """document_json writes with orjson what pydantic writes, for every field of a record."""
    from tests.e2e.test_hostile_input import full_trade_record

    body = full_trade_record(
        opened_at=opened_at, closed_at=None, member_id="M-\u00e9\u6f22-\U0001f600", original_trade_record_id="T-0"
    )
    body["items"][0]["product_name"] = 'Burger "XL" \\ \t\n\u2028</script>'
    body["payments"][0]["original_payment_id"] = "PAY-0"
    assert set(body) == set(TradeRecord.__pydantic_fields__)  # every field, sent
    adapter = TypeAdapter(TradeRecord)
    record = adapter.validate_json(json.dumps(body))
    assert document_json(record) == adapter.dump_json(record).decode()
