"""GET /pos/v1/trade-records over real HTTP on both backends (decision 0096): a Japanese ramen shop's day
(tests/ramen_day.py) read back page by page as HQ counted it; the pages add up to the reconciliation's
totals, per record and per type; moved records, the type filter, store access and bad parameters."""

from __future__ import annotations

import uuid
from decimal import Decimal

import pytest

from ingest.wire.responses import DailyCloseStatus, TradeRecordsPage
from tests.conftest import make_partner
from tests.e2e.test_business_day import wait_for_result
from tests.payloads import mapping_batch, stores_batch
from tests.ramen_day import DAY, MAPPING, STORE, ramen_close, ramen_records, ramen_store
from tests.trade_payloads import trade_batch

TOTALS = ("trade_record_count", "item_row_count", "payment_row_count")
AMOUNTS = ("net_sales_amount", "tax_amount", "tip_amount", "payment_total_amount")


def open_ramen_shop(host):
    partner = make_partner(host, (STORE, "S2"))
    assert partner.put("stores", stores_batch(ramen_store())).status_code == 202
    entries = [(entry["source_code"], entry["standard_code"]) for entry in MAPPING]
    assert partner.put("mappings/transaction-types", mapping_batch(*entries)).status_code == 202
    return partner


def push_batches(partner, records: list[dict], size: int = 7) -> list[str]:
    batch_ids = []
    for seq, start in enumerate(range(0, len(records), size), start=1):
        body = trade_batch(STORE, DAY, records[start : start + size], seq)
        response = partner.post("trade-records", body)
        assert response.status_code == 202, response.text
        batch_ids.append(body["batch_id"])
    return batch_ids


def close(partner, records: list[dict], batches: int, **changes) -> dict:
    body = {**ramen_close(records), "batch_id": str(uuid.uuid4()), "batch_count": batches, **changes}
    assert partner.post("daily-close", body).status_code == 202
    return wait_for_result(partner, STORE, DAY)


def pages(partner, limit: int, **params) -> list[dict]:
    answers, continuation = [], None
    while True:
        query = {"store_id": STORE, "business_date": DAY, "limit": limit, **params}
        if continuation:
            query["continuation"] = continuation
        response = partner.get("trade-records", params=query)
        assert response.status_code == 200, response.text
        body = response.json()
        TradeRecordsPage.model_validate(body, strict=False)
        answers.append(body)
        continuation = body["continuation"]
        if continuation is None:
            return answers


def summed(records: list[dict]) -> dict:
    sums = {name: sum(record["counted"][name] for record in records) for name in TOTALS}
    sums.update({name: str(sum(Decimal(record["counted"][name]) for record in records)) for name in AMOUNTS})
    return sums


def test_a_ramen_shops_day_read_back_as_counted_adds_up_to_its_reconciliation(backend_host):
    partner = open_ramen_shop(backend_host)
    records = ramen_records()
    batch_ids = push_batches(partner, records)
    result = close(partner, records, len(batch_ids))
    assert result["status"] == "MATCHED", result
    DailyCloseStatus.model_validate(result, strict=False)

    answered = pages(partner, limit=4)
    listed = [record for page in answered for record in page["trade_records"]]

    assert len(answered) >= 4 and all(len(page["trade_records"]) <= 4 for page in answered)
    assert sorted(record["trade_record_id"] for record in listed) == sorted(r["trade_record_id"] for r in records)
    assert summed(listed) == {name: result["actual"][name] for name in TOTALS + AMOUNTS}
    assert answered[0]["currency"] == "JPY" and answered[0]["store_id"] == STORE
    by_id = {record["trade_record_id"]: record for record in listed}
    voided = by_id[f"{STORE}-{DAY}-0006"]
    assert (voided["status"], voided["standard_type"], voided["is_revenue"]) == ("VOIDED", "SALE", True)
    assert voided["counting_notes"] == ["VOIDED_COUNTED_BY_TYPE"]
    assert voided["counted"] == {
        "trade_record_count": 1,
        "item_row_count": 1,
        "payment_row_count": 0,
        "net_sales_amount": "891",
        "tax_amount": "89",
        "tip_amount": "0",
        "payment_total_amount": "0",
    }
    returned = by_id[f"{STORE}-{DAY}-0007"]
    assert (returned["transaction_type"], returned["standard_type"]) == ("02", "RETURN")
    assert returned["payments"] == [
        {"payment_type": "REFUND", "amount": "980", "direction": -1, "counted_amount": "-980"}
    ]
    assert returned["counted"]["net_sales_amount"] == "-891"
    split = by_id[f"{STORE}-{DAY}-0005"]
    assert split["payments"] == [{"payment_type": "SALE", "amount": "2560", "direction": 1, "counted_amount": "2560"}]
    assert split["counted"]["payment_row_count"] == 2
    tipped = by_id[f"{STORE}-{DAY}-0004"]
    assert (tipped["counted"]["tip_amount"], tipped["counted"]["net_sales_amount"]) == ("200", "891")
    assert [by_id[f"{STORE}-{DAY}-{n:04d}"]["batch_id"] for n in (1, 8, 13)] == [batch_ids[0], batch_ids[1]] + [
        batch_ids[1]
    ]

    breakdown = result["details"]["by_transaction_type"]
    assert set(breakdown) == {"01", "02"}
    for code, per_type in breakdown.items():
        of_type = [record for record in listed if record["transaction_type"] == code]
        assert per_type["standard_type"] == {"01": "SALE", "02": "RETURN"}[code]
        assert {name: per_type[name] for name in TOTALS + AMOUNTS[:3]} == {
            name: value for name, value in summed(of_type).items() if name != "payment_total_amount"
        }
    only_returns = [
        record for page in pages(partner, limit=10, transaction_type="02") for record in page["trade_records"]
    ]
    assert [record["trade_record_id"] for record in only_returns] == [f"{STORE}-{DAY}-0007"]


def test_a_record_moved_to_another_day_is_listed_with_where_it_went(backend_host):
    partner = open_ramen_shop(backend_host)
    records = ramen_records()[:3]
    push_batches(partner, records)
    assert close(partner, records, 1)["status"] == "MATCHED"
    moved = {**records[0], "version": 2, "business_date": "2026-11-21", "last_modified_at": "2026-11-21T09:00:00+09:00"}
    response = partner.post("trade-records", trade_batch(STORE, "2026-11-21", [moved]))
    assert response.status_code == 202, response.text

    first = pages(partner, limit=2)[0]

    assert first["moved_out"] == [
        {"trade_record_id": records[0]["trade_record_id"], "to_store_id": STORE, "to_business_date": "2026-11-21"}
    ]
    listed = [record["trade_record_id"] for page in pages(partner, limit=2) for record in page["trade_records"]]
    assert sorted(listed) == sorted(record["trade_record_id"] for record in records[1:])


@pytest.mark.parametrize(
    ("params", "path"),
    [
        ({"business_date": DAY}, "store_id"),
        ({"store_id": STORE}, "business_date"),
        ({"store_id": STORE, "business_date": "20261120"}, "business_date"),
        ({"store_id": STORE, "business_date": DAY, "limit": "501"}, "limit"),
        ({"store_id": STORE, "business_date": DAY, "limit": "０"}, "limit"),
        ({"store_id": STORE, "business_date": DAY, "continuation": "not-ours"}, "continuation"),
        ({"store_id": STORE, "business_date": DAY, "transaction_type": "\x07"}, "transaction_type"),
    ],
)
def test_bad_parameters_are_refused_by_name(host, params, path):
    partner = open_ramen_shop(host)
    response = partner.get("trade-records", params=params)
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "INVALID_PAYLOAD"
    assert path in [problem["path"] for problem in response.json()["errors"]]


def test_a_continuation_of_another_day_and_a_store_of_another_partner_are_refused(host):
    partner = open_ramen_shop(host)
    push_batches(partner, ramen_records())
    page = partner.get("trade-records", params={"store_id": STORE, "business_date": DAY, "limit": 2}).json()
    elsewhere = {"store_id": "S2", "business_date": DAY, "continuation": page["continuation"]}
    assert partner.get("trade-records", params=elsewhere).status_code == 400
    stranger = partner.get("trade-records", params={"store_id": "NOT-MINE", "business_date": DAY})
    assert (stranger.status_code, stranger.json()["code"]) == (403, "STORE_NOT_ALLOWED")
    assert (
        partner.get(
            "trade-records", params={"store_id": STORE, "business_date": DAY}, headers=partner.headers("posk_wrong")
        ).status_code
        == 401
    )
