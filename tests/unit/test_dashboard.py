"""HQ dashboard's read model and pages (decision 0078) on the memory storage: each cell's status (overdue and
not received included), counters, filters, the store-day's totals and causes, what a page never shows,
and hostile store_ids (markup, path punctuation) escaped in the HTML and encoded in links. The pages over
HTTP on SQLite data: tests/e2e/test_dashboard_http.py."""

from __future__ import annotations

import datetime as dt
import re
from html import unescape
from urllib.parse import quote

import pytest

from backends.memory.storage import MemoryStorage
from backends.sqlite.delayed_queue import SqliteQueue
from core import reconcile_messages
from core.records import ReconcileRequest
from hq.dashboard.attention import needs_attention
from hq.dashboard.layout import when
from hq.dashboard.overview import BadRequest, DateRange, across_partners, parse_range, partner_grid
from hq.dashboard.server import Dashboard
from hq.dashboard.store_day import store_day
from ingest import onboarding
from tests.dashboard_days import D1, D2, D3, HOSTILE, NOW, RANGE, populate


@pytest.fixture
def storage() -> MemoryStorage:
    return populate(MemoryStorage())


def statuses(grid) -> dict[tuple[str, dt.date], str]:
    dates = grid.dates.dates()
    return {
        (store, date): cell.status for store, row in grid.rows for date, cell in zip(dates, row, strict=True) if cell
    }


def test_each_cell_shows_its_status_overdue_and_not_received_included(storage):
    grid = partner_grid(storage, "acme", RANGE, NOW)
    cells = statuses(grid)
    assert [cells["S1", D] for D in (D1, D2, D3)] == ["MATCHED", "MISMATCHED", "NOT_RECEIVED"]
    assert [cells["S2", D] for D in (D1, D2, D3)] == ["RECEIVED", "OVERDUE", "NOT_RECEIVED"]
    assert {cells[store, D2] for store in HOSTILE} == {"NOT_RECEIVED"}  # registered, nothing at all
    assert grid.counters == {"MATCHED": 1, "MISMATCHED": 1, "RECEIVED": 1, "OVERDUE": 1, "NOT_RECEIVED": 11}
    assert dict(grid.records_per_date) == {D1: 1, D2: 1, D3: 5}
    mismatched = dict(grid.rows)["S1"][1]
    assert mismatched.differences == ("net_sales_amount",)


def test_the_same_received_close_is_overdue_once_its_time_has_passed(storage):
    later = NOW + dt.timedelta(hours=2)
    assert statuses(partner_grid(storage, "acme", RANGE, later))["S2", D1] == "OVERDUE"


def test_a_status_filter_keeps_the_stores_with_such_a_day_and_hides_their_other_days(storage):
    grid = partner_grid(storage, "acme", RANGE, NOW, status="OVERDUE")
    assert [store for store, _ in grid.rows] == ["S2"]
    assert [None if cell is None else cell.status for cell in grid.rows[0][1]] == [None, "OVERDUE", None]
    # the counters and the chart count what the filters show (decision 0078)
    assert grid.counters == {"MATCHED": 0, "MISMATCHED": 0, "RECEIVED": 0, "OVERDUE": 1, "NOT_RECEIVED": 0}
    assert dict(grid.records_per_date) == {D1: 0, D2: 0, D3: 0}
    by_store = partner_grid(storage, "acme", RANGE, NOW, store="S1")
    assert sum(by_store.counters.values()) == 3 and dict(by_store.records_per_date) == {D1: 1, D2: 1, D3: 0}


def test_the_store_filter_is_a_case_insensitive_substring_of_the_store_id(storage):
    grid = partner_grid(storage, "acme", RANGE, NOW, store="s")
    assert [store for store, _ in grid.rows] == ["<script>alert(1)</script>", "S1", "S2"]
    assert sum(grid.counters.values()) == 9 and dict(grid.records_per_date)[D3] == 5
    assert partner_grid(storage, "acme", RANGE, NOW, store="nothing like it").rows == []


def test_across_partners_counts_each_partners_store_days(storage):
    rows = {row.partner.partner_id: row for row in across_partners(storage, RANGE, NOW)}
    assert rows["zeta"].counters["NOT_RECEIVED"] == 3 and rows["zeta"].stores == 1
    assert rows["acme"].counters["OVERDUE"] == 1 and rows["acme"].stores == 5


def test_a_range_is_read_from_the_query_or_defaults_to_the_last_30_dates():
    assert parse_range(None, None, D3) == DateRange(D3 - dt.timedelta(days=29), D3)
    assert parse_range("2026-11-01", "2026-11-02", D3) == DateRange(dt.date(2026, 11, 1), dt.date(2026, 11, 2))
    for first, last in (("2026-11-02", "2026-11-01"), ("yesterday", None), ("2020-01-01", None), ("2026-1-1", None)):
        with pytest.raises(BadRequest):
            parse_range(first, last, D3)


def test_a_mismatched_day_shows_its_stored_result_side_by_side_with_its_causes(storage):
    view = store_day(storage, "acme", "S1", D2, NOW)
    assert view.status == "MISMATCHED" and view.reconciled
    net = next(row for row in view.fields if row.field == "net_sales_amount")
    assert (net.expected, net.actual, net.difference, net.differs) == ("10.00", "9.00", "-1.00", True)
    assert [row.field for row in view.fields if row.differs] == ["net_sales_amount"]
    assert {cause.kind: cause.values for cause in view.causes} == {
        "raw_differences": ["net_sales_amount -1.00"],
        "missing_batch_seqs": ["2"],
        "unmapped_source_codes": ["01"],
        "unknown_payment_types": ["VOUCHER"],
    }
    assert view.rerun == "python -m hq reconcile run acme S1 2026-11-20"


def test_a_day_not_reconciled_yet_shows_its_totals_now(storage):
    view = store_day(storage, "acme", "S2", D2, NOW)  # the close counts 1 record, none arrived
    assert view.status == "OVERDUE" and not view.reconciled
    count = next(row for row in view.fields if row.field == "trade_record_count")
    assert (count.expected, count.actual, count.difference, count.differs) == ("1", "0", "-1", True)
    tax = next(row for row in view.fields if row.field == "tax_amount")
    assert (tax.actual, tax.difference) == ("0.00", "-0.80")
    assert {cause.kind for cause in view.causes} == {"raw_differences", "missing_batch_seqs"}


def test_a_day_without_a_close_shows_its_batches_and_no_rerun(storage):
    view = store_day(storage, "acme", "S2", D3, NOW)
    assert view.status == "NOT_RECEIVED" and view.rerun is None
    assert [(m.batch_seq, m.record_count, m.warnings) for m in view.batches] == [
        (1, 3, {"AMOUNT_MISMATCH": 2}),
        (2, 2, {}),
    ]
    assert next(row for row in view.fields if row.field == "trade_record_count").actual == "5"


def test_the_rerun_command_is_quoted_for_a_shell():
    from hq.dashboard.store_day import rerun_command

    assert rerun_command("acme", "a b'c", D1) == "python -m hq reconcile run acme 'a b'\"'\"'c' 2026-11-19"


# --- pages ---------------------------------------------------------------------------------------


def get(storage, target: str, queue=None):
    return Dashboard(storage, queue, now=lambda: NOW).get(target)


def test_hostile_store_ids_are_escaped_in_the_page_and_encoded_in_links(storage):
    page = get(storage, "/partners/acme?from=2026-11-19&to=2026-11-21").body
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "Acme &lt;POS&gt;" in page
    for store in HOSTILE:
        link = f"/partners/acme/stores/{quote(store, safe='')}/days/2026-11-20"
        assert f'href="{link.replace("&", "&amp;")}"' in page, store
        shown = get(storage, link)
        assert shown.status == 200, store
        assert 'data-status="NOT_RECEIVED"' in shown.body and f"· {store} ·" in unescape(shown.body)
    assert get(storage, "/partners/acme/stores/../x/days/2026-11-20").status == 404  # not a segment


def test_every_cell_has_its_letter_status_title_and_link(storage):
    page = get(storage, "/partners/acme?from=2026-11-19&to=2026-11-21").body
    cell = re.search(r'<td class="cell s-OVERDUE"[^>]*>.*?</td>', page).group(0)
    assert 'data-store="S2"' in cell and 'data-date="2026-11-20"' in cell and 'data-status="OVERDUE"' in cell
    assert (
        'title="S2 2026-11-20: OVERDUE' in cell and '<a href="/partners/acme/stores/S2/days/2026-11-20">O</a>' in cell
    )
    assert page.count('class="cell ') == 15 and '<span data-counter="NOT_RECEIVED">11</span>' in page
    assert '<rect class="bar" data-date="2026-11-21" data-value="5"' in page


def test_bad_requests_and_unknown_things_get_a_plain_page(storage):
    for target, status in (
        ("/partners/nobody", 404),
        ("/partners/acme/stores/NOT-A-STORE/days/2026-11-20", 404),
        ("/partners/acme/stores/S1/days/2026-13-01", 400),
        ("/partners/acme?status=LATE", 400),
        ("/partners/acme?from=junk", 400),
        ("/partners/acme/stores/%FF/days/2026-11-20", 400),
        ("/nothing/here", 404),
    ):
        response = get(storage, target)
        assert response.status == status, target
        assert "Traceback" not in response.body and "<main>" in response.body


def test_no_page_shows_a_key_or_its_hash(storage):
    key = onboarding.issue_key(storage, "acme", NOW)
    page = get(storage, "/partners/acme/profile").body
    assert key.key_id in page and key.secret not in page and key.key_hash not in page
    assert '<table id="clients">' in page and "No OAuth clients: API keys only." in page
    assert 'data-store="S1"' in page and '<figure id="warnings-chart"><svg' in page
    assert 'data-code="PAYMENT_TYPE_UNKNOWN_DIRECTION" data-value="1"' in page


def test_operations_shows_poisoned_requests_overdue_closes_and_the_last_sweep(storage, tmp_path):
    queue = SqliteQueue(tmp_path, "reconcile-requests")
    queue.send(reconcile_messages.encode(ReconcileRequest("acme", "S2", D2, "b1")), 0)
    queue.move_to_poison(queue.receive(30))
    page = get(storage, "/operations", queue).body
    poisoned = queue.poison_messages()[0]
    assert f'<tr data-message-id="{poisoned.message_id}">' in page
    assert '<tr data-partner="acme" data-store="S2" data-date="2026-11-20">' in page
    assert '<p id="last-sweep">never</p>' in page
    storage.record_sweep(NOW)
    assert '<p id="last-sweep">2026-11-21 12:00:00 UTC</p>' in get(storage, "/operations", queue).body


def test_every_page_has_main_and_the_nav_links(storage):
    for target in (
        "/",
        "/operations",
        "/partners/acme",
        "/partners/acme/profile",
        "/partners/acme/stores/S1/days/2026-11-20",
    ):
        body = get(storage, target).body
        assert '<a href="/">' in body and '<a href="/operations">' in body and "<main>" in body, target
    assert '<tr data-partner="acme">' in get(storage, "/").body


# --- the store-days that need attention now, across partners (decision 0078) --------------------------


def test_the_front_page_lists_what_needs_attention_newest_first(storage):
    items = needs_attention(storage, RANGE, NOW)
    assert [(i.business_date, i.partner_id, i.store_id, i.status) for i in items] == [
        (D2, "acme", "S1", "MISMATCHED"),
        (D2, "acme", "S2", "OVERDUE"),
    ]  # not today's days (D3), nor stores with no data yet (the HOSTILE ones, zeta's Z1)
    assert items[0].cause == "the POS's totals and HQ's differ: net_sales_amount"
    two_days_later = NOW + dt.timedelta(days=2)
    later = [(i.business_date, i.store_id, i.status, i.cause) for i in needs_attention(storage, RANGE, two_days_later)]
    assert [status for _, _, status, _ in later[:3]] == ["MISMATCHED", "OVERDUE", "OVERDUE"]  # first, however old
    assert later[3:] == [
        (D3, "S1", "NOT_RECEIVED", "nothing received: no trade records, no daily close"),
        (D3, "S2", "NOT_RECEIVED", "no daily close; 5 trade records received"),
    ]
    page = get(storage, "/").body
    assert page.index('id="attention"') < page.index('id="partners"')
    attention = page[page.index('id="attention"') : page.index('id="partners"')]
    assert attention.count(' data-status="') == 2
    assert '<span data-counter="MISMATCHED">1</span>' in attention
    assert '<span data-counter="OVERDUE">1</span>' in attention
    assert 'href="/partners/acme/stores/S2/days/2026-11-20">open</a>' in page


def test_timestamps_are_in_an_operators_words():
    assert when(dt.datetime(2026, 11, 20, 9, 30, 5, 123456, tzinfo=dt.timezone(dt.timedelta(hours=9)))) == (
        "2026-11-20 00:30:05 UTC"
    )


def test_the_partner_page_lists_its_oauth_clients_beside_its_keys(storage):
    onboarding.add_client(storage, "acme", "5f0c2a7e-9b1d-4e3f-8a6c-2d4b6f8e0a1c", NOW)
    onboarding.add_client(storage, "acme", 'acme-pos/<prod> & "eu"', NOW)  # escaped, as every value
    page = get(storage, "/partners/acme/profile").body
    assert '<tr data-client-id="5f0c2a7e-9b1d-4e3f-8a6c-2d4b6f8e0a1c">' in page
    assert "acme-pos/&lt;prod&gt; &amp; &quot;eu&quot;" in page and "<prod>" not in page
    assert page.index('<table id="keys">') < page.index('<table id="clients">') < page.index('<table id="stores">')
