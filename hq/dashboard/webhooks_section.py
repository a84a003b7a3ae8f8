"""The partner page's Webhooks section: each endpoint (active, failing since, or DISABLED after failing for
days) and the latest deliveries with every attempt's status code and the next retry (decision 0106)."""

from __future__ import annotations

from core.webhook_ports import WebhookStore
from core.webhooks import WebhookDelivery
from hq.dashboard.layout import cells, table, text, when

DELIVERIES_SHOWN = 50


def _attempts(delivery: WebhookDelivery) -> str:
    return " ".join(str(a.status_code) if a.status_code is not None else a.outcome for a in delivery.attempts) or "-"


def webhooks_section(store: WebhookStore, partner_id: str) -> str:
    endpoints = [
        f'<tr data-endpoint-id="{text(e.endpoint_id)}">'
        + cells(
            e.endpoint_id,
            e.url,
            "active" if e.active else f"DISABLED {when(e.disabled_at)}",
            when(e.failing_since),
            when(e.created_at),
        )
        + "</tr>"
        for e in store.endpoints(partner_id)
    ]
    deliveries = [
        f'<tr data-event-id="{text(d.event_id)}" data-state="{text(d.state)}">'
        + cells(
            d.event_id, d.event_type, d.endpoint_id, d.state, _attempts(d), when(d.next_attempt_at), when(d.created_at)
        )
        + "</tr>"
        for d in store.deliveries(partner_id, DELIVERIES_SHOWN)
    ]
    return (
        '<h2>Webhooks</h2><p class="note">Endpoints results are pushed to (<code>hq partner webhook</code>); an '
        "endpoint failing every attempt for days is disabled (<code>hq partner webhook enable</code>).</p>"
        + table("webhook-endpoints", ["endpoint_id", "URL", "State", "Failing since", "Added"], endpoints, "None.")
        + "<h3>Latest deliveries</h3>"
        + table(
            "webhook-deliveries",
            ["event_id", "Type", "Endpoint", "State", "Attempts (status codes)", "Next retry", "Created"],
            deliveries,
            "No deliveries.",
        )
    )


def with_webhooks(page: str, store: WebhookStore | None, partner_id: str) -> str:
    """The partner page with its Webhooks section at the end of its main content."""
    if store is None:
        return page
    return page.replace("</main>", webhooks_section(store, partner_id) + "</main>", 1)
