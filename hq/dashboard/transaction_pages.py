"""The store-day page's section of transactions (day_transactions.py): a table of what HQ counted per
record, a plain GET form to filter by type and by "counted differently", and links to the next page."""

from __future__ import annotations

from hq.dashboard.day_transactions import DIFFERENTLY, DayTransactions
from hq.dashboard.layout import table, text, url

COLUMNS = [
    "trade_record_id",
    "Type",
    "Counted as",
    "Status",
    "Version",
    "Items",
    "Payments",
    "Net sales",
    "Tax",
    "Tip",
    "Payment total",
    "Counted differently",
    "Batch",
]


def transactions_section(view: DayTransactions, partner_id: str, store_id: str, business_date: str) -> str:
    here = url("partners", partner_id, "stores", store_id, "days", business_date)  # the form's action
    rows = []
    for record in view.records:
        counted = record["counted"]
        notes = ", ".join(record["counting_notes"])
        standard = record["standard_type"] or "(unmapped)"
        rows.append(
            f'<tr data-record="{text(record["trade_record_id"])}" data-type="{text(record["transaction_type"])}" '
            f'data-notes="{text(notes)}">'
            f"<td>{text(record['trade_record_id'])}</td><td>{text(record['transaction_type'])}</td>"
            f"<td>{text(standard)}{' (revenue)' if record['is_revenue'] else ''}</td>"
            f'<td>{text(record["status"] or "-")}</td><td class="num">{record["version"]}</td>'
            f'<td class="num">{counted["item_row_count"]}</td><td class="num">{counted["payment_row_count"]}</td>'
            + "".join(
                f'<td class="num" data-amount="{name}">{text(counted[name])}</td>'
                for name in ("net_sales_amount", "tax_amount", "tip_amount", "payment_total_amount")
            )
            + f"<td>{text(notes or '-')}</td><td><code>{text(record['batch_id'] or '-')}</code></td></tr>"
        )
    options = '<option value="">any</option>' + "".join(
        f'<option value="{text(code)}"{" selected" if code == view.source_type else ""}>{text(code)}</option>'
        for code in view.types
    )
    checked = " checked" if view.differently else ""
    form = (
        f'<form id="transaction-filters" method="get" action="{text(here)}">'
        f'<label>Type <select name="type">{options}</select></label>'
        f'<label><input type="checkbox" name="counted" value="{DIFFERENTLY}"{checked}> counted differently only '
        "(unmapped type, VOIDED of a revenue type, payment type without a direction)</label>"
        '<button type="submit">Show</button></form>'
    )
    links = []
    segments = ("partners", partner_id, "stores", store_id, "days", business_date)
    filters = {"type": view.source_type or None, "counted": DIFFERENTLY if view.differently else None}
    if view.after is not None:
        links.append(f'<a id="first-transactions" href="{text(url(*segments, **filters))}">first page</a>')
    if view.next_after is not None:
        next_url = url(*segments, **filters, after=view.next_after)
        links.append(f'<a id="next-transactions" href="{text(next_url)}">next page</a>')
    currency = f" ({text(view.currency)})" if view.currency else ""
    return (
        f'<section id="transactions"><h2>Transactions as HQ counted them{currency}</h2>'
        '<p class="note">Each latest record of the day and what it adds to each total, by the rules '
        "reconciliation counts with.</p>"
        + form
        + table("transactions", COLUMNS, rows, "No transactions.")
        + (f'<p class="pages">{" · ".join(links)}</p>' if links else "")
        + "</section>"
    )
