"""The HQ dashboard (decision 0078) in a real browser: headless Debian chromium driven by Playwright, against
`python -m hq dashboard` on the data the local host stored from days pushed over HTTP.

The DOM hooks used here are the dashboard's contract (data-status, data-field, data-cause, ...); a
store-day page is reached by clicking its cell, as an operator does.
"""

from __future__ import annotations

import re
import time
from urllib.parse import unquote, urlparse

import pytest

from backends.queues import RECONCILE_QUEUE
from backends.sqlite.delayed_queue import SqliteQueue
from core import reconcile_messages
from tests.browser.chromium import segment
from tests.conftest import make_partner
from tests.payloads import mapping_batch, store, stores_batch
from tests.trade_payloads import Line, daily_close, totals_of, trade_batch, trade_record

DAY = "2026-11-20"
WEEK = ("2026-11-16", "2026-11-22")
DIRECTIONS = {"SALE": 1, "REFUND": -1}


def open_shop(host, *store_ids: str):
    """A partner with registered stores, their master data and a mapping of source code 01 (a sale)."""
    partner = make_partner(host, store_ids)
    assert partner.put("stores", stores_batch(*(store(s) for s in store_ids))).status_code == 202
    assert partner.put("mappings/transaction-types", mapping_batch(("01", "SALE"))).status_code == 202
    return partner


def push(partner, store_id, records, batch_seq=1, business_date=DAY) -> None:
    response = partner.post("trade-records", trade_batch(store_id, business_date, records, batch_seq))
    assert response.status_code == 202, response.text


def close(partner, store_id, totals, business_date=DAY, **changes) -> None:
    response = partner.post("daily-close", daily_close(store_id, business_date, totals, **changes))
    assert response.status_code == 202, response.text


def wait_for_status(partner, store_id, wanted: set[str], business_date=DAY, timeout=30.0) -> dict:
    """The day's status over the API once it is one of `wanted` (reconciliation runs after a short delay)."""
    deadline = time.monotonic() + timeout
    while True:
        body = partner.get(f"daily-close/{segment(store_id)}/{business_date}").json()
        if body["status"] in wanted or time.monotonic() > deadline:
            return body
        time.sleep(0.2)


def a_day(store_id: str, count: int = 3, **changes) -> list[dict]:
    return [trade_record(store_id, DAY, [Line("P-BURGER", 1, 550 + n)], tax=44, **changes) for n in range(count)]


def matched_day(partner, store_id: str) -> None:
    records = a_day(store_id)
    push(partner, store_id, records)
    close(partner, store_id, totals_of(records, {"01"}, DIRECTIONS))
    assert wait_for_status(partner, store_id, {"MATCHED", "MISMATCHED"})["status"] == "MATCHED"


def cell(page, store_id: str, business_date: str = DAY):
    return page.locator(f"#grid td.cell[data-store={css_string(store_id)}][data-date='{business_date}']")


def css_string(text: str) -> str:
    """`text` as a quoted CSS attribute value."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# --- what HQ sees ----------------------------------------------------------------------------------------


def test_a_day_pushed_over_http_shows_matched_in_the_overview(host, dashboard, page):
    partner = open_shop(host, "NYC-001", "NYC-002")
    matched_day(partner, "NYC-001")

    page.goto(dashboard.overview_url(partner.partner_id, *WEEK))

    matched = cell(page, "NYC-001")
    assert matched.get_attribute("data-status") == "MATCHED"
    assert matched.inner_text().strip() == "M"
    assert "MATCHED" in (matched.get_attribute("title") or "")
    assert cell(page, "NYC-002").get_attribute("data-status") == "NOT_RECEIVED"
    assert page.locator("span[data-counter='MATCHED']").inner_text().strip() == "1"
    assert page.locator(f"#records-chart rect[data-date='{DAY}']").get_attribute("data-value") == "3"


def test_a_mismatched_day_shows_its_differing_field_and_its_cause_reached_by_a_click(host, dashboard, page):
    partner = open_shop(host, "NYC-001")
    sale = a_day("NYC-001", count=1)
    unmapped = a_day("NYC-001", count=1, source_transaction_type="07")  # the partner never mapped 07
    push(partner, "NYC-001", sale + unmapped)
    # The POS counts 07 as revenue; the service cannot, so net sales differ (the counts do not).
    close(partner, "NYC-001", totals_of(sale + unmapped, {"01", "07"}, DIRECTIONS))
    result = wait_for_status(partner, "NYC-001", {"MATCHED", "MISMATCHED"})
    assert result["status"] == "MISMATCHED" and result["differences"] == ["net_sales_amount"], result

    page.goto(dashboard.overview_url(partner.partner_id, *WEEK))
    mismatched = cell(page, "NYC-001")
    assert mismatched.get_attribute("data-status") == "MISMATCHED"
    assert mismatched.inner_text().strip() == "X"
    mismatched.locator("a").click()

    page.wait_for_url(re.compile(r"/stores/NYC-001/days/2026-11-20$"))
    assert page.locator("#status").get_attribute("data-status") == "MISMATCHED"
    differing = page.locator("#totals tr.differs")
    assert [differing.nth(i).get_attribute("data-field") for i in range(differing.count())] == ["net_sales_amount"]
    net_sales = page.locator("#totals tr[data-field='net_sales_amount']")
    assert net_sales.locator("td.expected").inner_text().strip() != net_sales.locator("td.actual").inner_text().strip()
    assert page.locator("#totals tr[data-field='trade_record_count']").get_attribute("class") == "same"
    assert "07" in page.locator("#causes li[data-cause='unmapped_source_codes']").inner_text()
    assert page.locator("#batches tr[data-batch-seq='1']").count() == 1
    assert partner.partner_id in page.locator("#rerun").inner_text()


def test_the_filters_are_a_plain_get_form(host, dashboard, page):
    partner = open_shop(host, "NYC-001", "NYC-002")
    matched_day(partner, "NYC-001")
    push(partner, "NYC-002", a_day("NYC-002"))  # records, no close

    page.goto(dashboard.overview_url(partner.partner_id, *WEEK))
    page.locator("#filters select[name='status']").select_option("MATCHED")
    page.locator("#filters [type='submit']").click()

    page.wait_for_url(re.compile(r"status=MATCHED"))
    shown = page.locator("#grid td.cell")
    assert [shown.nth(i).get_attribute("data-store") for i in range(shown.count())] == ["NYC-001"]

    page.locator("#filters select[name='status']").select_option("")
    page.locator("#filters input[name='store']").fill("002")
    page.locator("#filters [type='submit']").click()

    page.wait_for_url(re.compile(r"store=002"))
    assert {page.locator("#grid td.cell").nth(i).get_attribute("data-store") for i in range(7)} == {"NYC-002"}
    assert cell(page, "NYC-002").get_attribute("data-status") == "NOT_RECEIVED"
    assert page.locator("#records-chart rect[data-date='2026-11-20']").get_attribute("data-value") == "3"


def test_a_received_close_past_its_time_shows_as_overdue(failing_host, failing_dashboard, page):
    partner = open_shop(failing_host, "LATE-1")
    records = a_day("LATE-1")
    push(partner, "LATE-1", records)
    close(partner, "LATE-1", totals_of(records, {"01"}, DIRECTIONS))
    received = partner.get(f"daily-close/LATE-1/{DAY}").json()
    assert received["status"] == "RECEIVED"
    wait_until_past(received["reconciliation_due_at"])

    page.goto(failing_dashboard.overview_url(partner.partner_id, *WEEK))
    overdue = cell(page, "LATE-1")
    assert overdue.get_attribute("data-status") == "OVERDUE"
    assert overdue.inner_text().strip() == "O"
    assert page.locator("span[data-counter='OVERDUE']").inner_text().strip() == "1"

    page.goto(failing_dashboard.url("/operations"))
    row = f"#overdue tr[data-partner='{partner.partner_id}'][data-store='LATE-1'][data-date='{DAY}']"
    assert page.locator(row).count() == 1


def test_a_poisoned_reconciliation_request_shows_on_the_operations_page(failing_host, failing_dashboard, page):
    partner = open_shop(failing_host, "POISON-1")
    records = a_day("POISON-1")
    push(partner, "POISON-1", records)
    close(partner, "POISON-1", totals_of(records, {"01"}, DIRECTIONS))
    message_id = wait_for_poisoned(failing_host, partner.partner_id)

    page.goto(failing_dashboard.url("/"))
    page.locator("nav a[href='/operations']").click()

    page.wait_for_url(re.compile(r"/operations$"))
    row = page.locator(f"#poisoned tr[data-message-id={css_string(message_id)}]")
    assert row.count() == 1
    assert partner.partner_id in row.inner_text() and "POISON-1" in row.inner_text()


def wait_until_past(timestamp: str) -> None:
    import datetime as dt

    due = dt.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    remaining = (due - dt.datetime.now(dt.UTC)).total_seconds()
    assert remaining < 10, f"due in {remaining:.0f} s: RECONCILE_DELAY_SECONDS is not the tests' short delay"
    time.sleep(max(0.0, remaining) + 0.2)


def wait_for_poisoned(host, partner_id: str, timeout: float = 30.0) -> str:
    """The id of the poisoned message that asks for a reconciliation of one of the partner's days."""
    queue = SqliteQueue(host.data_dir, RECONCILE_QUEUE)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for message in queue.poison_messages():
            if reconcile_messages.decode(message.body).partner_id == partner_id:
                return message.message_id
        time.sleep(0.2)
    raise AssertionError(f"no request of {partner_id} was poisoned in {timeout:.0f} s:\n{host.log()[-3000:]}")


# --- what HQ never sees -------------------------------------------------------------------------------------

MEMBER_ID = "M-BROWSERCHECK-0042"
CARD_LAST4 = "4821"


def test_no_page_shows_a_key_a_member_id_or_card_digits(host, dashboard, page):
    partner = open_shop(host, "PRIV-1")
    records = a_day("PRIV-1", member_id=MEMBER_ID)
    for record in records:
        record["payments"][0].update(payment_method="CREDIT_CARD", card_last4=CARD_LAST4)
    push(partner, "PRIV-1", records)
    close(partner, "PRIV-1", totals_of(records, {"01"}, DIRECTIONS))
    assert wait_for_status(partner, "PRIV-1", {"MATCHED", "MISMATCHED"})["status"] == "MATCHED"
    (key_hash,) = host.query("SELECT key_hash FROM api_keys WHERE key_id = ?", partner.key_id)[0]
    pages = [
        dashboard.url("/"),
        dashboard.overview_url(partner.partner_id, *WEEK),
        dashboard.store_day_url(partner.partner_id, "PRIV-1", DAY),
        dashboard.url(f"partners/{segment(partner.partner_id)}/profile"),
        dashboard.url("/operations"),
    ]
    card_digits = re.compile(rf"(?<![0-9a-fA-F]){CARD_LAST4}(?![0-9a-fA-F])")  # not inside a hex id
    for url in pages:
        page.goto(url)
        dom = page.content()
        assert page.locator("main").count() == 1, url
        assert partner.key not in dom and key_hash not in dom, url
        assert MEMBER_ID not in dom, url
        assert not card_digits.search(dom), url
    client_id = "5f0c2a7e-9b1d-4e3f-8a6c-" + partner.partner_id[-10:].rjust(12, "0")
    assert host.hq_in_process("partner", "client", "add", partner.partner_id, client_id).returncode == 0
    page.goto(pages[-2])  # the profile lists the key by its id only, and the OAuth clients beside it
    assert page.locator("#keys").inner_text().count(partner.key_id) == 1
    assert page.locator(f'#clients tr[data-client-id="{client_id}"]').count() == 1


# --- store_ids that need percent-encoding -----------------------------------------------------------------

# The API refuses "/", backslash, "?" and "#" in a store_id (they would end or split its path); anything else goes.
ODD_STORE_IDS = ["Zürich Bhf. (2)", "東京・渋谷店", "a%2Fb & c+d;e=f", "متجر 7", "O'Brien's \"Deli\""]


@pytest.mark.parametrize("store_id", ODD_STORE_IDS)
def test_a_store_id_with_punctuation_or_any_script_is_reached_by_a_click(host, dashboard, page, store_id):
    partner = open_shop(host, store_id, "PLAIN-1")
    matched_day(partner, store_id)

    page.goto(dashboard.overview_url(partner.partner_id, *WEEK))
    page.locator(f"#grid td.cell[data-store={css_string(store_id)}][data-date='{DAY}'] a").click()

    page.wait_for_url(re.compile(r"/days/2026-11-20$"))
    assert page.locator("#status").get_attribute("data-status") == "MATCHED"
    assert store_id in page.locator("main").inner_text()
    segments = [unquote(part) for part in urlparse(page.url).path.split("/")]
    assert segments == ["", "partners", partner.partner_id, "stores", store_id, "days", DAY]


# --- what needs attention now, across partners (decision 0078) -----------------------------------------


def test_the_front_page_lists_mismatches_first_and_a_run_of_days_without_a_close_as_one_row(host, dashboard, page):
    partner = open_shop(host, "NYC-001", "NYC-002")
    records = a_day("NYC-001", count=1)
    push(partner, "NYC-001", records)
    close(partner, "NYC-001", {**totals_of(records, {"01"}, DIRECTIONS), "trade_record_count": 2})
    assert wait_for_status(partner, "NYC-001", {"MATCHED", "MISMATCHED"})["status"] == "MISMATCHED"
    # NYC-002 went live on the 19th: records, never a close
    early = [trade_record("NYC-002", "2026-11-19", [Line("P-BURGER", 1, 550)], opened_at="2026-11-19T12:00:00-05:00")]
    push(partner, "NYC-002", early, business_date="2026-11-19")

    page.goto(dashboard.url(f"/?from={WEEK[0]}&to={WEEK[1]}"))
    rows = page.locator(f"#attention-list tr[data-partner={css_string(partner.partner_id)}]")
    listed = [
        (
            rows.nth(i).get_attribute("data-date"),
            rows.nth(i).get_attribute("data-store"),
            rows.nth(i).get_attribute("data-status"),
        )
        for i in range(rows.count())
    ]
    assert listed == [
        ("2026-11-20", "NYC-001", "MISMATCHED"),
        ("2026-11-22", "NYC-001", "NOT_RECEIVED"),
        ("2026-11-22", "NYC-002", "NOT_RECEIVED"),
    ]  # NYC-001's days before its first data (the 16th to the 19th) are not "not received"
    assert [rows.nth(i).get_attribute("data-days") for i in range(3)] == ["1", "2", "4"]
    assert "since 2026-11-19 (4 days)" in rows.nth(2).inner_text()
    mismatched = rows.nth(0)
    assert "trade_record_count" in mismatched.inner_text()
    assert "1 trade records received" in rows.nth(2).inner_text()
    every_row = page.locator("#attention-list tbody tr[data-status]")
    shown = [
        (every_row.nth(i).get_attribute("data-status"), every_row.nth(i).get_attribute("data-days"))
        for i in range(every_row.count())
    ]
    for status in ("MISMATCHED", "OVERDUE", "NOT_RECEIVED"):  # the counters count the store-days listed
        counter = page.locator(f"#attention-counters [data-counter='{status}']").inner_text()
        assert int(counter) == sum(int(days) for shown_status, days in shown if shown_status == status)
    statuses = [status for status, _ in shown]
    assert statuses == sorted(statuses, key=lambda status: status == "NOT_RECEIVED")  # mismatches first
    mismatched.locator("a", has_text="open").click()
    page.wait_for_url(re.compile(r"/stores/NYC-001/days/2026-11-20$"))
    assert page.locator("#status").get_attribute("data-status") == "MISMATCHED"
    assert not re.search(r"\d{2}:\d{2}:\d{2}\.\d", page.content())  # no microseconds in an operator's page
