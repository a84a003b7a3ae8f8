"""HQ's use cases for a partner's webhook endpoints: add (the secret shown once), list, remove, rotate
the secret with an overlap, enable again, test, and send a delivery again (decisions 0104, 0105)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid

from core.clock import utc_now
from core.ports import AdminError, PartnerAdmin
from core.queue_ports import DelayedQueue
from core.webhook_ports import WebhookSender, WebhookStore
from core.webhook_signatures import new_secret
from core.webhooks import PENDING, SigningSecret, WebhookDelivery, WebhookEndpoint
from ingest.webhooks.events import first_attempt, publish_ping

MAX_ENDPOINTS = 10  # per partner: each event is one delivery per endpoint
DEFAULT_OVERLAP_SECONDS = 24 * 3600


def add_endpoint(
    partners: PartnerAdmin,
    store: WebhookStore,
    sender: WebhookSender,
    partner_id: str,
    url: str,
    now: dt.datetime | None = None,
) -> tuple[WebhookEndpoint, str]:
    """Register an endpoint after checking where its URL leads now; returns it and its secret."""
    if partners.get_partner(partner_id) is None:
        raise AdminError(f"partner {partner_id} does not exist")
    sender.check_target(url)  # TargetRefused (a ValueError): hq prints why
    if len(store.endpoints(partner_id)) >= MAX_ENDPOINTS:
        raise AdminError(f"partner {partner_id} has {MAX_ENDPOINTS} webhook endpoints already: remove one first")
    secret = new_secret()
    endpoint = WebhookEndpoint(
        partner_id, "ep_" + uuid.uuid4().hex[:16], url, (SigningSecret(secret),), now or utc_now()
    )
    store.add_endpoint(endpoint)
    return endpoint, secret


def existing(store: WebhookStore, partner_id: str, endpoint_id: str) -> WebhookEndpoint:
    endpoint = store.endpoint(partner_id, endpoint_id)
    if endpoint is None:
        raise AdminError(f"partner {partner_id} has no webhook endpoint {endpoint_id}")
    return endpoint


def remove_endpoint(store: WebhookStore, partner_id: str, endpoint_id: str) -> None:
    if not store.remove_endpoint(partner_id, endpoint_id):
        raise AdminError(f"partner {partner_id} has no webhook endpoint {endpoint_id}")


def rotate_secret(
    store: WebhookStore,
    partner_id: str,
    endpoint_id: str,
    overlap_seconds: int = DEFAULT_OVERLAP_SECONDS,
    now: dt.datetime | None = None,
) -> tuple[str, dt.datetime]:
    """A new secret that signs from now on; the current one goes on signing beside it for the overlap
    (the partner switches its verification meanwhile). Secrets whose overlap ended are dropped."""
    now = now or utc_now()
    endpoint = existing(store, partner_id, endpoint_id)
    ends = now + dt.timedelta(seconds=overlap_seconds)
    old = tuple(
        SigningSecret(s.secret, ends if s.expires_at is None else min(s.expires_at, ends))
        for s in endpoint.secrets
        if s.expires_at is None or s.expires_at > now
    )
    secret = new_secret()
    store.replace_secrets(dataclasses.replace(endpoint, secrets=(*old, SigningSecret(secret))))
    return secret, ends


def enable_endpoint(store: WebhookStore, partner_id: str, endpoint_id: str) -> None:
    existing(store, partner_id, endpoint_id)
    store.set_health(partner_id, endpoint_id, active=True, failing_since=None)


def test_endpoint(store: WebhookStore, queue: DelayedQueue, partner_id: str, endpoint_id: str) -> str:
    """Queue a webhook.ping to the endpoint; returns its event id."""
    endpoint = existing(store, partner_id, endpoint_id)
    if not endpoint.active:
        raise AdminError(f"webhook endpoint {endpoint_id} is disabled: enable it first")
    return publish_ping(store, queue, endpoint)


def redeliver(store: WebhookStore, queue: DelayedQueue, partner_id: str, event_id: str) -> list[WebhookDelivery]:
    """Send an event again to every endpoint it went to, with a new round of retries, whatever became of it."""
    found = [d for d in store.deliveries(partner_id, REDELIVER_SCAN) if d.event_id == event_id]
    if not found:
        raise AdminError(f"partner {partner_id} has no recent webhook delivery of event {event_id}")
    again = []
    for delivery in found:
        restarted = dataclasses.replace(
            delivery, state=PENDING, next_attempt_at=utc_now(), round_start=len(delivery.attempts)
        )
        store.save_delivery(restarted)
        queue.send(first_attempt(restarted).encode(), 0)
        again.append(restarted)
    return again


REDELIVER_SCAN = 1000  # how far back `redeliver` looks for the event, newest first
