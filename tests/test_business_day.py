"""Whole business days over real HTTP: trade records, daily close, reconciliation (spec 3, 4.7-4.9)."""

from __future__ import annotations

import time

from tests.payloads import mapping_batch, store, stores_batch
from tests.trade_payloads import Line, Pay, daily_close, totals_of, trade_batch, trade_record

DAY = "2026-11-20"
DIRECTIONS = {"SALE": 1, "REFUND": -1, "DEPOSIT": 1, "DEPOSIT_APPLIED": 0, "ADJUSTMENT": 1}


def open_store(partner, store_id="S1", **store_changes):
    assert partner.put("stores", stores_batch(store(store_id, **store_changes))).status_code == 202
    assert partner.put("mappings/transaction-types", mapping_batch(("01", "SALE"), ("02", "REFUND"))).status_code == 202


def wait_for_result(partner, store_id, business_date, timeout=20.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        body = partner.get(f"daily-close/{store_id}/{business_date}").json()
        if body["status"] in ("MATCHED", "MISMATCHED") or time.monotonic() > deadline:
            return body
        time.sleep(0.2)


def test_a_consistent_day_matches(partner):
    open_store(partner)
    records = [
        trade_record("S1", DAY, [Line("P-BURGER", 2, 550), Line("P-COLA", 1, 199)], tax=130, tip=100),
        trade_record("S1", DAY, [Line("P-FRIES", -1, 299)], source_type="02", tax=-24),
    ]
    response = partner.post("trade-records", trade_batch("S1", DAY, records))
    assert response.status_code == 202, response.text
    assert response.json()["record_count"] == 2
    expected = totals_of(records, {"01", "02"}, DIRECTIONS)
    status = partner.get(f"daily-close/S1/{DAY}").json()
    assert status["status"] == "NOT_RECEIVED" and status["expected"] is None
    close = partner.post("daily-close", daily_close("S1", DAY, expected))
    assert close.status_code == 202, close.text
    received = partner.get(f"daily-close/S1/{DAY}").json()
    assert received["status"] == "RECEIVED" and received["actual"] is None and received["checked_at"] is None
    result = wait_for_result(partner, "S1", DAY)
    assert result["status"] == "MATCHED", result
    assert result["differences"] == []
    assert result["actual"] == expected
