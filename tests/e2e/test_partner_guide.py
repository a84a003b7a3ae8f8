"""The partner guide's worked example (docs/partner-guide.md, "How HQ counts a store-day") sent over real
HTTP: the totals it computes by hand are MATCHED, and the close that counts the voided sale is MISMATCHED
with the raw difference it names (decision 0009)."""

from __future__ import annotations

import re
import shlex

import requests

from tests.conftest import ROOT
from tests.e2e.test_business_day import DAY, close_and_wait, push
from tests.payloads import error_paths, mapping_batch, store, stores_batch
from tests.trade_payloads import Line, Pay, trade_batch, trade_record

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


def _guide_section(title: str) -> str:
    text = GUIDE.read_text(encoding="utf-8")
    start = text.index(title)
    return text[start : text.index("\n#", start)]


def test_a_key_for_local_testing_as_the_guide_gets_it_and_openapi_needs_none(host):
    section = _guide_section("**A key for local testing.**")
    lines = [line.split("$(", 1)[-1].split("|")[0] for line in section.splitlines() if "bin/hq " in line]
    commands = [shlex.split(line) for line in lines]
    assert [command[1:3] for command in commands] == [["partner", "add"], ["store", "register"], ["key", "issue"]]
    for command in commands[:-1]:
        assert host.hq_in_process(*command[1:]).returncode == 0
    key = host.hq_in_process(*commands[-1][1:]).stdout.strip().splitlines()[-1]  # `| tail -n 1`
    assert requests.get(host.url("mappings/transaction-types"), headers={"x-functions-key": key}, timeout=30).ok
    for path in ("openapi.json", "health"):  # no key
        assert requests.get(host.url(path), timeout=30).status_code == 200, path


def test_what_a_real_export_hits_first_as_the_guide_says(partner):
    section = _guide_section("### What a real export hits first")
    for words in ("`items: []`", "`P-NO-SALE`", "`NO_SALE`", "`payments: []`", "`rounding_amount`", "tax_lines"):
        assert words in section, words
    assert partner.put("stores", stores_batch(store("S1", currency="CHF", country_code="CH"))).status_code == 202
    mapping = mapping_batch(("01", "SALE"), ("NS", "NO_SALE"))
    assert partner.put("mappings/transaction-types", mapping).status_code == 202

    # A drawer-open without lines is refused at its items; sent as the guide says, it is accepted and counted.
    drawer = trade_record("S1", DAY, [Line("P-NO-SALE", 1, 0)], [], currency="CHF", source_type="NS")
    refused = partner.post("trade-records", trade_batch("S1", DAY, [{**drawer, "items": []}]))
    assert error_paths(refused) == ["trade_records[0].items"]
    # A ticket of two tax rates with their tax_lines, and the total's cash rounding to 0.05 CHF in
    # rounding_amount: 4.50 + 3.22 = 7.72, tax 0.36 + 0.08 added on top = 8.16, paid 8.15.
    ticket = trade_record(
        "S1", DAY, [Line("P-TEA", 1, 450), Line("P-BREAD", 1, 322)], currency="CHF", tax=44, rounding=-1
    )
    ticket["tax_lines"] = [
        {"tax_code": code, "tax_rate": rate, "taxable_amount": base, "tax_amount": tax, "is_inclusive": False}
        for code, rate, base, tax in (("CH-STD", "0.081", "4.50", "0.36"), ("CH-RED", "0.026", "3.22", "0.08"))
    ]
    assert (ticket["subtotal_amount"], ticket["total_amount"]) == ("7.72", "8.15")
    assert push(partner, "S1", [drawer, ticket])["warnings"] == []
    totals = {
        "trade_record_count": 2,
        "item_row_count": 3,
        "payment_row_count": 1,
        "net_sales_amount": "7.71",  # the drawer-open is not revenue
        "tax_amount": "0.44",
        "tip_amount": "0.00",
        "payment_total_amount": "8.15",
    }
    result = close_and_wait(partner, "S1", totals, currency="CHF")
    assert (result["status"], result["actual"]) == ("MATCHED", totals), result
