"""The front page's "needs attention" list (decision 0098) on the memory storage: MISMATCHED and OVERDUE
first, a store's run of NOT_RECEIVED days folded into one row, counters that count what the list holds, the
status said once on a store-day's banner."""

from __future__ import annotations

import datetime as dt
import re

from backends.memory.storage import MemoryStorage
from hq.dashboard.attention import attention_counters, needs_attention
from hq.dashboard.overview import DateRange
from hq.dashboard.server import Dashboard
from tests.dashboard_days import D1, D2, D3, NOW, populate

LATER = NOW + dt.timedelta(days=5)
WEEK = DateRange(D1, D3 + dt.timedelta(days=4))


def test_a_run_of_days_without_a_close_is_one_row_after_the_mismatches():
    storage = populate(MemoryStorage())
    items = [item for item in needs_attention(storage, WEEK, LATER) if item.partner_id == "acme"]
    assert [(item.status, item.store_id, item.business_date) for item in items] == [
        ("MISMATCHED", "S1", D2),
        ("OVERDUE", "S2", D2),
        ("OVERDUE", "S2", D1),
        ("NOT_RECEIVED", "S1", D3 + dt.timedelta(days=4)),
        ("NOT_RECEIVED", "S2", D3 + dt.timedelta(days=4)),
    ]
    folded = items[3]
    assert (folded.since, folded.days) == (D3, 5)
    assert folded.cause == f"no daily close for 5 days, {D3} to {D3 + dt.timedelta(days=4)}: nothing received"
    assert "5 trade records received" in items[4].cause
    assert attention_counters(items) == {"OVERDUE": 2, "MISMATCHED": 1, "NOT_RECEIVED": 10}


def test_the_counters_on_the_front_page_add_up_the_rows_it_lists():
    storage = populate(MemoryStorage())
    page = Dashboard(storage, now=lambda: LATER).get(f"/?from={WEEK.first}&to={WEEK.last}").body
    section = page[page.index('id="attention"') : page.index('id="partners"')]
    rows = re.findall(r'data-status="(\w+)" data-days="(\d+)"', section)
    for status in ("MISMATCHED", "OVERDUE", "NOT_RECEIVED"):
        listed = sum(int(days) for shown, days in rows if shown == status)
        assert f'<span data-counter="{status}">{listed}</span>' in section
    assert f"since {D3} (5 days)" in section


def test_the_status_banner_says_the_status_once():
    storage = populate(MemoryStorage())
    for target, status in (("/partners/acme/stores/S1/days/2026-11-20", "MISMATCHED"),):
        page = Dashboard(storage, now=lambda: NOW).get(target).body
        banner = re.search(r'<p id="status"[^>]*>(.*?)</p>', page).group(1)
        assert banner.count(status) == 1 and status.lower() not in banner, banner
