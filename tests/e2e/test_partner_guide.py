"""The partner guide's worked example (docs/partner-guide.md, "How HQ counts a store-day") sent over real
HTTP: the totals it computes by hand are MATCHED, and the close that counts the voided sale is MISMATCHED
with the raw difference it names (decision 0009)."""

from __future__ import annotations

import re

from tests.conftest import ROOT
from tests.e2e.test_business_day import DAY, close_and_wait, push
from tests.payloads import mapping_batch, store, stores_batch
from tests.trade_payloads import Line, Pay, trade_record

GUIDE = ROOT / "docs" / "partner-guide.md"
TOTALS = {  # as the guide writes them
    "trade_record_count": 4,
    "item_row_count": 5,
    "payment_row_count": 3,
    "net_sales_amount": "7.49",
    "tax_amount": "0.67",
    "tip_amount": "2.00",
    "payment_total_amount": "10.16",
}


def the_day() -> list[dict]:
    t1 = trade_record("S1", DAY, [Line("P-BURGER", 1, 550), Line("P-BURGER", 1, 550)], tax=98, tip=200)
    t2 = trade_record("S1", DAY, [Line("P-COLA", 1, 199)], [Pay(217, method="CREDIT_CARD")], tax=18)
    t2_again = {**t2, "version": 2, "last_modified_at": "2026-11-20T21:00:00Z"}
    t3 = trade_record("S1", DAY, [Line("P-BURGER", -1, 550)], source_type="02", tax=-49)
    t4 = trade_record("S1", DAY, [Line("P-BURGER", 1, 400)], [], source_type="09", status="VOIDED")
    for amount in ("subtotal_amount", "total_amount"):
        t4[amount] = "0.00"
    t4["items"][0]["is_voided"] = True
    return [t1, t2, t3, t4, t2_again]


def test_the_worked_example_matches_as_the_guide_counts_it(partner):
    for number in ("7.49", "0.67", "2.00", "10.16", "11.49", "-4.00"):
        assert number in GUIDE.read_text(encoding="utf-8"), number
    assert partner.put("stores", stores_batch(store("S1"))).status_code == 202
    mapping = mapping_batch(("01", "SALE"), ("02", "REFUND"), ("09", "VOID"))
    assert partner.put("mappings/transaction-types", mapping).status_code == 202
    push(partner, "S1", the_day())
    result = close_and_wait(partner, "S1", TOTALS)
    assert (result["status"], result["differences"]) == ("MATCHED", []), result
    assert result["actual"] == TOTALS

    voided_as_sale = close_and_wait(partner, "S1", {**TOTALS, "net_sales_amount": "11.49"})
    assert (voided_as_sale["status"], voided_as_sale["differences"]) == ("MISMATCHED", ["net_sales_amount"])
    assert voided_as_sale["details"]["raw_differences"] == {"net_sales_amount": "-4.00"}
    assert re.search(r"7\.48.*still MATCHED", GUIDE.read_text(encoding="utf-8"), re.S)
