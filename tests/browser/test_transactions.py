"""The store-day page's transactions in headless chromium (decision 0098): a ramen shop's day
(tests/ramen_day.py) and more, pushed over HTTP, listed as HQ counted them a page at a time, filtered by type
and by "counted differently"; the banner says the status once; wide characters in the tables."""

from __future__ import annotations

import re
import uuid

from tests.browser.test_dashboard import wait_for_status
from tests.conftest import make_partner
from tests.payloads import mapping_batch, stores_batch
from tests.ramen_day import DAY, MAPPING, STORE, ramen_close, ramen_records, ramen_store
from tests.trade_payloads import trade_batch

EXTRA = 45  # beyond the ramen shop's 13: a day longer than one page (50)


def ramen_day_pushed(host):
    partner = make_partner(host, (STORE,))
    assert partner.put("stores", stores_batch(ramen_store())).status_code == 202
    entries = [(entry["source_code"], entry["standard_code"]) for entry in MAPPING]
    assert partner.put("mappings/transaction-types", mapping_batch(*entries)).status_code == 202
    records = ramen_records()
    more = []  # copies of the first sale under other ids
    for number in range(EXTRA):
        sale = {**records[0], "trade_record_id": f"{STORE}-{DAY}-X{number:03d}"}
        sale["payments"] = [{**sale["payments"][0], "payment_id": f"PAY-X{number:03d}-{uuid.uuid4().hex[:6]}"}]
        more.append(sale)
    everything = records + more
    assert partner.post("trade-records", trade_batch(STORE, DAY, everything)).status_code == 202
    close = {**ramen_close(everything), "batch_id": str(uuid.uuid4()), "batch_count": 1}
    assert partner.post("daily-close", close).status_code == 202
    assert wait_for_status(partner, STORE, {"MATCHED", "MISMATCHED"})["status"] == "MATCHED"
    return partner, everything


def test_the_days_transactions_are_listed_as_counted_a_page_at_a_time(host, dashboard, page):
    partner, records = ramen_day_pushed(host)
    page.goto(dashboard.store_day_url(partner.partner_id, STORE, DAY))

    assert page.locator("#status").inner_text().count("MATCHED") == 1
    rows = page.locator("#transactions tbody tr[data-record]")
    assert rows.count() == 50
    page.locator("#next-transactions").click()
    page.wait_for_url(re.compile(r"after="))
    assert rows.count() == len(records) - 50
    assert page.locator("#next-transactions").count() == 0
    page.locator("#first-transactions").click()
    assert rows.count() == 50

    page.select_option("#transaction-filters select[name=type]", "02")
    page.locator("#transaction-filters button").click()
    page.wait_for_url(re.compile(r"type=02"))
    returned = rows.first
    assert rows.count() == 1 and returned.get_attribute("data-record") == f"{STORE}-{DAY}-0007"
    assert returned.locator("[data-amount=net_sales_amount]").inner_text() == "-891"
    assert "RETURN" in returned.inner_text()

    page.select_option("#transaction-filters select[name=type]", "")
    page.locator("#transaction-filters input[name=counted]").check()
    page.locator("#transaction-filters button").click()
    page.wait_for_url(re.compile(r"counted=differently"))
    assert rows.count() == 1
    voided = rows.first
    assert voided.get_attribute("data-record") == f"{STORE}-{DAY}-0006"
    assert voided.get_attribute("data-notes") == "VOIDED_COUNTED_BY_TYPE"
    assert "VOIDED" in voided.inner_text() and "麺屋" in page.locator("h1").inner_text()


def test_a_line_with_a_jan_barcode_and_a_japanese_store_id_is_reached_from_the_overview(host, dashboard, page):
    partner, _ = ramen_day_pushed(host)
    page.goto(dashboard.overview_url(partner.partner_id, DAY, DAY))
    page.locator(f"#grid td.cell[data-date='{DAY}'] a").first.click()
    page.wait_for_url(re.compile(r"/days/2026-11-20$"))
    assert page.locator("#transactions tbody tr[data-record]").count() == 50
