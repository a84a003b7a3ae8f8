"""The pages of many store-days: every partner's counters (`/`) and a partner's overview grid.

The grid can hold tens of thousands of cells: each row is one join over f-strings, with the store's
escaped id and URL prefix computed once per row and each date's text once per page.
"""

from __future__ import annotations

import datetime as dt

from hq.dashboard.attention import ATTENTION_STATUSES, MAX_SHOWN, Attention, attention_counters
from hq.dashboard.charts import records_chart
from hq.dashboard.layout import page, partner_url, store_day_url, table, text, url
from hq.dashboard.overview import LETTERS, STATUSES, Cell, DateRange, Grid, PartnerCounters

WORDS = {
    "MATCHED": "matched",
    "MISMATCHED": "mismatched",
    "RECEIVED": "received, not reconciled yet",
    "OVERDUE": "received, reconciliation overdue",
    "NOT_RECEIVED": "not received",
}


def legend() -> str:
    return "".join(
        f'<span class="s-{status}" title="{WORDS[status]}">{LETTERS[status]} {status}</span>' for status in STATUSES
    )


def attention_list(items: list[Attention]) -> str:
    """The store-days that need attention now (attention.py's order), each linked to its page, under
    counters of the store-days the list holds."""
    rows = [
        f'<tr data-partner="{text(item.partner_id)}" data-store="{text(item.store_id)}" '
        f'data-date="{item.business_date}" data-status="{item.status}" data-days="{item.days}">'
        f"<td>{_dates_of(item)}</td>"
        f'<td><a href="{text(partner_url(item.partner_id))}">{text(item.partner_id)}</a></td>'
        f"<td>{text(item.store_id)}</td>"
        f'<td class="s-{item.status}">{item.status}</td><td>{text(item.cause)}</td>'
        f'<td><a href="{text(store_day_url(item.partner_id, item.store_id, item.business_date))}">open</a></td></tr>'
        for item in items[:MAX_SHOWN]
    ]
    more = len(items) - MAX_SHOWN
    counted = attention_counters(items)
    counters = "".join(
        f'<span class="s-{status}">{status}: <span data-counter="{status}">{counted[status]}</span></span>'
        for status in ATTENTION_STATUSES
    )
    return (
        '<section id="attention"><h2>Needs attention now</h2>'
        "<p>Mismatched days and overdue reconciliations first, newest first; then days without a daily close "
        "since the store's first data (not today's), a store's days in a row as one row.</p>"
        + f'<p class="counters" id="attention-counters">Store-days: {counters}</p>'
        + table("attention-list", ["Business date", "Partner", "Store", "Status", "Cause", ""], rows, "Nothing.")
        + (f"<p>{more} more rows not listed: narrow the dates.</p>" if more > 0 else "")
        + "</section>"
    )


def _dates_of(item: Attention) -> str:
    if item.since is None:
        return str(item.business_date)
    return f"since {item.since} ({item.days} days)"


def partners_page(rows: list[PartnerCounters], dates: DateRange, attention: list[Attention] | None = None) -> str:
    body = [
        f'<tr data-partner="{text(row.partner.partner_id)}"><td><a href="{text(partner_url(row.partner.partner_id))}">'
        f"{text(row.partner.partner_id)}</a></td><td>{text(row.partner.name)}</td>"
        f'<td>{"active" if row.partner.active else "inactive"}</td><td class="num">{row.stores}</td>'
        + "".join(f'<td class="num s-{s}" data-counter="{s}">{row.counters[s]}</td>' for s in STATUSES)
        + "</tr>"
        for row in rows
    ]
    return page(
        "All partners",
        f"<h1>All partners</h1><p>Store-days per status, business dates {dates.first} to {dates.last}.</p>"
        + attention_list(attention or [])
        + table("partners", ["Partner", "Name", "State", "Stores", *STATUSES], body, "No partners yet.")
        + f'<p class="counters">{legend()}</p>',
    )


def _more(cell: Cell) -> str:
    """What a cell's title says after its status: the differing fields, the records received. (Not the
    due time: formatting 15,000 times costs a quarter of the page; the store-day page shows it.)"""
    words = ""
    if cell.differences:
        words += "; differs: " + text(", ".join(cell.differences))
    if cell.records:
        words += f"; {cell.records} trade records received"
    return words


def _row(partner_id: str, store_id: str, row: list[Cell | None], date_texts: list[str]) -> str:
    """One store's row: the hot loop of the page (a cell is one f-string; escaping is done once a row)."""
    store = text(store_id)
    prefix = text(url("partners", partner_id, "stores", store_id, "days"))
    parts = [f'<tr data-store="{store}"><th scope="row">{store}</th>']
    for cell, date in zip(row, date_texts, strict=True):
        if cell is None:
            parts.append('<td class="none"></td>')
            continue
        status = cell.status
        more = _more(cell) if cell.records or cell.differences else ""
        parts.append(
            f'<td class="cell s-{status}" data-store="{store}" data-date="{date}" data-status="{status}" '
            f'title="{store} {date}: {status} ({WORDS[status]}){more}">'
            f'<a href="{prefix}/{date}">{LETTERS[status]}</a></td>'
        )
    parts.append("</tr>")
    return "".join(parts)


def _filters(grid: Grid) -> str:
    options = '<option value="">any</option>' + "".join(
        f'<option value="{s}"{" selected" if grid.status == s else ""}>{s}</option>' for s in STATUSES
    )
    return (
        f'<form id="filters" method="get" action="{text(partner_url(grid.partner.partner_id))}">'
        f'<label>From <input type="date" name="from" value="{grid.dates.first}"></label>'
        f'<label>To <input type="date" name="to" value="{grid.dates.last}"></label>'
        f'<label>Status <select name="status">{options}</select></label>'
        f'<label>Store <input type="search" name="store" value="{text(grid.store)}" '
        'placeholder="part of a store_id"></label>'
        '<button type="submit">Show</button></form>'
    )


def overview_page(grid: Grid) -> str:
    partner_id = grid.partner.partner_id
    dates = grid.dates.dates()
    date_texts = [date.isoformat() for date in dates]
    head = "<tr><th>store</th>" + "".join(f'<th class="date" scope="col">{d}</th>' for d in date_texts) + "</tr>"
    rows = "".join(_row(partner_id, store_id, row, date_texts) for store_id, row in grid.rows)
    if not grid.rows:
        rows = f'<tr class="empty"><td colspan="{len(dates) + 1}">No store matches these filters.</td></tr>'
    counters = "".join(
        f'<span class="s-{s}" title="{WORDS[s]}">{LETTERS[s]} {s}: '
        f'<span data-counter="{s}">{grid.counters[s]}</span></span>'
        for s in STATUSES
    )
    return page(
        f"{partner_id} overview",
        f"<h1>{text(partner_id)} · {text(grid.partner.name)}</h1>"
        f'<p><a href="{text(url("partners", partner_id, "profile"))}">Partner page</a>: keys, stores, mapping, '
        f"payment directions, warnings.</p>"
        + _filters(grid)
        + f'<p class="counters">{counters}</p>'
        + f'<table id="grid"><thead>{head}</thead><tbody>{rows}</tbody></table>'
        + f'<figure id="records-chart">{records_chart(grid.records_per_date)}'
        f"<figcaption>Trade records received per business date, {_span(dates)}</figcaption></figure>",
    )


def _span(dates: list[dt.date]) -> str:
    return f"{dates[0]} to {dates[-1]}" if dates else ""
