"""Events published to a partner's webhook endpoints: a store-day's result, an overdue close, a ping.

Publishing writes one delivery per active endpoint (its body fixed once) and queues its first attempt;
it never sends anything itself, so a reconciliation never waits on a partner (decision 0106). An event's
id is derived from what it reports: published again after a crash, it is the same event, and the
stored delivery is not duplicated."""

from __future__ import annotations

import datetime as dt
import logging

from core.clock import to_utc_text, utc_now
from core.queue_ports import DelayedQueue
from core.records import ClosedDay
from core.webhook_ports import WebhookStore
from core.webhooks import (
    OVERDUE,
    PENDING,
    PING,
    RECONCILED,
    DeliveryMessage,
    WebhookDelivery,
    WebhookEndpoint,
    event_body,
    event_id,
    random_event_id,
)
from ingest.daily_close_status import status_answer

log = logging.getLogger("pos.webhooks")


def publish_result(store: WebhookStore, queue: DelayedQueue, partner_id: str, day: ClosedDay) -> int:
    """daily_close.reconciled for a result just saved (or found saved: the same event); its data is the
    store-day as GET /daily-close answers it. Returns how many endpoints it was queued for."""
    if day.status == "RECEIVED" or day.checked_at is None:
        return 0
    identity = event_id(
        RECONCILED,
        partner_id,
        day.store_id,
        day.business_date.isoformat(),
        day.close_batch_id,
        to_utc_text(day.checked_at),
    )
    data = dict(status_answer(day.store_id, day.business_date, day))
    return _publish(store, queue, store.endpoints(partner_id), RECONCILED, identity, day.checked_at, data)


def publish_overdue(store: WebhookStore, queue: DelayedQueue, partner_id: str, day: ClosedDay, now: dt.datetime) -> int:
    """daily_close.overdue for a close still without a result past its due time (found by the sweep)."""
    identity = event_id(
        OVERDUE, partner_id, day.store_id, day.business_date.isoformat(), day.close_batch_id, to_utc_text(day.due_at)
    )
    data = dict(status_answer(day.store_id, day.business_date, day))
    return _publish(store, queue, store.endpoints(partner_id), OVERDUE, identity, now, data)


def publish_ping(
    store: WebhookStore, queue: DelayedQueue, endpoint: WebhookEndpoint, now: dt.datetime | None = None
) -> str:
    """webhook.ping to one endpoint (HQ's `webhook test`); returns its event id."""
    identity = random_event_id()
    moment = now or utc_now()
    _publish(store, queue, [endpoint], PING, identity, moment, {"endpoint_id": endpoint.endpoint_id})
    return identity


def _publish(
    store: WebhookStore,
    queue: DelayedQueue,
    endpoints: list[WebhookEndpoint],
    event_type: str,
    identity: str,
    timestamp: dt.datetime,
    data: dict[str, object],
) -> int:
    body = event_body(event_type, timestamp, data)
    now = utc_now()
    queued = 0
    for endpoint in endpoints:
        if not endpoint.active:
            continue
        stored = store.add_delivery(
            WebhookDelivery(
                endpoint.partner_id, endpoint.endpoint_id, identity, event_type, body, now, next_attempt_at=now
            )
        )
        # Not attempted yet: queue its first attempt (again, after a crash: a repeated message is dropped
        # by the attempt number it carries, ingest/webhooks/delivery.py).
        if stored.state == PENDING and len(stored.attempts) == stored.round_start:
            queue.send(first_attempt(stored).encode(), 0)
            queued += 1
    return queued


def first_attempt(delivery: WebhookDelivery) -> DeliveryMessage:
    return DeliveryMessage(delivery.partner_id, delivery.endpoint_id, delivery.event_id, len(delivery.attempts) + 1)
