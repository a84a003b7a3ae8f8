"""The pages of one thing: a store-day, a partner, and HQ's operations (poison queue, overdue closes)."""

from __future__ import annotations

from hq.dashboard.charts import warnings_chart
from hq.dashboard.layout import cells, page, partner_url, store_day_url, table, text, url, when
from hq.dashboard.operations import OperationsView
from hq.dashboard.profile import Profile
from hq.dashboard.store_day import StoreDayView

# What the store-day's banner adds to its status, said once (decision 0098): nothing where the status says it.
BANNER_NOTES = {"RECEIVED": "not reconciled yet", "OVERDUE": "reconciliation overdue", "NOT_RECEIVED": "no daily close"}
CAUSE_WORDS = {
    "raw_differences": "actual − expected, for every field that differs at all",
    "missing_batch_seqs": "batch_seq numbers the close counts but that did not arrive",
    "unmapped_source_codes": "source codes without a mapping (counted, but not as revenue)",
    "unknown_payment_types": "payment types of unknown direction (left out of payment_total_amount)",
    "records_moved_out": "records a later version moved to another store-day (no longer counted here)",
}


def store_day_page(view: StoreDayView, transactions: str = "") -> str:
    partner, store, date = view.partner_id, view.store_id, view.business_date.isoformat()
    close = view.close
    facts = view.status + (f" ({BANNER_NOTES[view.status]})" if view.status in BANNER_NOTES else "")
    if close is not None:
        facts += f"; close received {when(close.received_at)}"
        facts += f", checked {when(close.checked_at)}" if view.reconciled else f", due {when(close.due_at)}"
    if not view.registered:
        facts += f"; store {store} is not registered for {partner}"
    source = (
        "Actual is the reconciliation's result."
        if view.reconciled
        else "Not reconciled yet: actual is the day's totals now, as reconciliation would compute them."
    )
    totals = [
        f'<tr data-field="{row.field}" class="{"differs" if row.differs else "same"}"><th scope="row">{row.field}</th>'
        f'<td class="expected num">{text(row.expected)}</td><td class="actual num">{text(row.actual)}</td>'
        f'<td class="difference num">{text(row.difference)}</td></tr>'
        for row in view.fields
    ]
    causes = "".join(
        f'<li data-cause="{text(cause.kind)}"><strong>{text(_cause_words(cause.kind))}</strong>: '
        f"{text(', '.join(cause.values))}</li>"
        for cause in view.causes
    )
    batches = [
        f'<tr data-batch-seq="{marker.batch_seq}">'
        + cells(marker.batch_seq, marker.record_count, when(marker.received_at))
        + f"<td>{text(', '.join(f'{code} {n}' for code, n in sorted(marker.warnings.items())) or '-')}</td></tr>"
        for marker in view.batches
    ]
    products = [
        f'<tr data-product="{text(p.product_id)}">{cells(p.product_id, p.item_lines, p.trade_records)}</tr>'
        for p in view.unknown_products
    ]
    rerun = (
        f'<p>Re-run its reconciliation: <code id="rerun">{text(view.rerun)}</code></p>'
        if view.rerun
        else '<p class="note">No daily close yet: nothing to reconcile.</p>'
    )
    currency = f" ({text(close.currency)})" if close else ""
    return page(
        f"{partner} {store} {date}",
        f'<h1><a href="{text(partner_url(partner))}">{text(partner)}</a> · {text(store)} · {date}</h1>'
        f'<p id="status" data-status="{view.status}" class="s-{view.status}">{text(facts)}</p>'
        f'<h2>Totals{currency}</h2><p class="note">{source} Difference is actual − expected; counts must be '
        "equal, amounts may differ by one minor unit.</p>"
        + table("totals", ["Field", "Expected", "Actual", "Difference"], totals)
        + f'<h2>Causes</h2><ul id="causes">{causes or "<li>none found</li>"}</ul>'
        + "<h2>Batches received</h2>"
        + table(
            "batches", ["batch_seq", "Records", "Received at", "Warnings by code"], batches, "No trade record batches."
        )
        + "<h2>Products not in the product master</h2>"
        + table("unknown-products", ["product_id", "Item lines", "Trade records"], products)
        + transactions
        + rerun,
    )


def _cause_words(kind: str) -> str:
    return CAUSE_WORDS.get(kind, kind.replace("_", " "))


def profile_page(profile: Profile) -> str:
    partner_id = profile.partner.partner_id
    keys = [
        f'<tr data-key-id="{text(key.key_id)}">'
        + cells(key.key_id, "REVOKED" if key.revoked_at else "ACTIVE", when(key.created_at), when(key.revoked_at))
        + f"<td>{'never' if key.last_used_at is None else key.last_used_at.strftime('%Y-%m-%dT%H:00Z')}</td></tr>"
        for key in profile.keys
    ]
    clients = [
        f'<tr data-client-id="{text(client.client_id)}">' + cells(client.client_id, when(client.added_at)) + "</tr>"
        for client in profile.clients
    ]
    stores = []
    for row in profile.stores:
        master = row.master
        facts = (
            [master.currency, master.country_code, master.time_zone, master.workday_start]
            + ["yes" if master.prices_include_tax else "no", when(master.last_modified_at)]
            if master
            else ["-", "-", "-", "-", "-", "(no master data yet)"]
        )
        stores.append(
            f'<tr data-store="{text(row.store_id)}">'
            f'<td><a href="{text(url("partners", partner_id, store=row.store_id))}">{text(row.store_id)}</a></td>'
            f"<td>{'yes' if row.registered else 'no'}</td>{cells(*facts)}</tr>"
        )
    mapping = [
        f'<tr data-source-code="{text(row.source_code)}">'
        + cells(row.source_code, row.source_name, row.standard_code)
        + "</tr>"
        for row in profile.mapping_rows
    ]
    directions = [
        f'<tr data-payment-type="{text(d.code)}">'
        + cells(
            d.code, d.direction, "-" if d.suggested is None else d.suggested, "partner's own" if d.own else "suggested"
        )
        + "</tr>"
        for d in profile.directions
    ]
    dates = profile.dates
    return page(
        f"{partner_id} partner",
        f'<h1><a href="{text(partner_url(partner_id))}">{text(partner_id)}</a> · {text(profile.partner.name)}'
        f" ({'active' if profile.partner.active else 'inactive'})</h1>"
        '<h2>Keys</h2><p class="note">Key ids only: a key is shown once, when issued, and only its hash is stored.</p>'
        + table("keys", ["key_id", "Status", "Created", "Revoked", "Last used (hour)"], keys, "No keys.")
        + '<h2>OAuth clients</h2><p class="note">Applications whose bearer tokens speak for the partner '
        "(<code>hq partner client add</code>).</p>"
        + table("clients", ["client_id", "Added"], clients, "No OAuth clients: API keys only.")
        + "<h2>Stores</h2>"
        + table(
            "stores",
            [
                "store_id",
                "Registered",
                "Currency",
                "Country",
                "Time zone",
                "Workday start",
                "Tax included",
                "Last modified",
            ],
            stores,
            "No stores.",
        )
        + f'<h2>Transaction type mapping</h2><p class="note">Uploaded {when(profile.mapping.updated_at, "never")}.</p>'
        + table("mapping", ["source_code", "source_name", "standard_code"], mapping, "No mapping uploaded.")
        + "<h2>Payment-type directions</h2>"
        + table("directions", ["payment_type", "Direction", "Suggested", "Set by"], directions)
        + '<h2>Warnings</h2><figure id="warnings-chart">'
        + warnings_chart(profile.warnings_per_date, profile.warning_codes)
        + f"<figcaption>Warnings by code per business date, {dates.first} to {dates.last}</figcaption></figure>",
    )


def operations_page(view: OperationsView) -> str:
    if view.poisoned is None:
        poisoned = f'<p class="note">The reconciliation queue cannot be read: {text(view.queue_problem)}</p>'
        poisoned += table("poisoned", ["message_id"], [], "unknown")
    else:
        rows = []
        for message in view.poisoned:
            request = message.request
            named = (
                [request.partner_id, request.store_id, request.business_date.isoformat(), request.close_batch_id]
                if request
                else ["(not a reconciliation request)", message.text, "", ""]
            )
            link = (
                f'<td><a href="{text(store_day_url(request.partner_id, request.store_id, request.business_date))}">'
                "open</a></td>"
                if request
                else "<td></td>"
            )
            columns = cells(message.message_id, when(message.inserted_at), *named)
            rows.append(f'<tr data-message-id="{text(message.message_id)}">{columns}{link}</tr>')
        poisoned = table(
            "poisoned",
            ["message_id", "Inserted", "partner_id", "store_id", "business_date", "close_batch_id", "Store-day"],
            rows,
            "No poisoned messages.",
        )
        if view.poison_total > len(view.poisoned):
            poisoned += f'<p class="note">Showing {len(view.poisoned)} of about {view.poison_total}.</p>'
    overdue = [
        f'<tr data-partner="{text(partner_id)}" data-store="{text(day.store_id)}" data-date="{day.business_date}">'
        f'<td>{text(partner_id)}</td><td><a href="{text(store_day_url(partner_id, day.store_id, day.business_date))}">'
        f"{text(day.store_id)}</a></td>{cells(day.business_date, when(day.received_at), when(day.due_at))}</tr>"
        for partner_id, day in view.overdue
    ]
    return page(
        "Operations",
        "<h1>Operations</h1><h2>Poisoned reconciliation requests</h2>"
        '<p class="note">Replay with <code>python -m hq queue poison replay MESSAGE_ID</code>.</p>'
        + poisoned
        + '<h2>Overdue closes</h2><p class="note">Received, and past the time their reconciliation was due.</p>'
        + table("overdue", ["partner_id", "store_id", "business_date", "Received", "Due"], overdue, "None overdue.")
        + f'<h2>Last sweep of overdue closes</h2><p id="last-sweep">{when(view.last_sweep, "never")}</p>',
    )
