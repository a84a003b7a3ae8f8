"""One attempt at a webhook delivery, run by the delivery queue's trigger (decision 0106).

A message asks for attempt number N of one delivery. The attempt is recorded before the next message is
sent, so a crash anywhere loses nothing: a message whose attempt was made already and which comes back
(dequeue count above 1: the run that made it died before it was done) sends the follow-up again; one that
comes back for the first time is a duplicate and is dropped. Each attempt is signed afresh (the
timestamp is the attempt's); the body is the one stored when the event was published."""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging

from core.clock import utc_now
from core.queue_ports import DelayedQueue
from core.webhook_ports import SendResult, WebhookSender, WebhookStore
from core.webhook_settings import MAX_WAIT_SECONDS, WebhookSettings
from core.webhook_signatures import signed_headers
from core.webhooks import DELIVERED, FAILED, PENDING, Attempt, DeliveryMessage, WebhookDelivery, WebhookEndpoint

log = logging.getLogger("pos.webhooks")

# The log line HQ's alert reads (infra: the failing deliveries alert); its wording is part of the contract.
DISABLED_LOG = "webhook endpoint disabled"


def is_retried(result: SendResult) -> bool:
    """Timeouts and failed connections, 5xx and 429 are retried; other 4xx, 3xx and refused targets not."""
    if result.refused:
        return False
    code = result.status_code
    return code is None or code == 429 or code >= 500


def deliver(
    store: WebhookStore,
    queue: DelayedQueue,
    sender: WebhookSender,
    settings: WebhookSettings,
    message: DeliveryMessage,
    dequeue_count: int,
    now: dt.datetime | None = None,
) -> WebhookDelivery | None:
    """Make the attempt the message asks for, if it is still to be made; returns the delivery as saved."""
    delivery = store.delivery(message.partner_id, message.endpoint_id, message.event_id)
    if delivery is None or delivery.state != PENDING:
        return None
    made = len(delivery.attempts)
    if message.attempt <= made:
        if message.attempt == made and dequeue_count > 1:  # its run died before queueing the next attempt
            _queue_next(queue, delivery, utc_now())
        return None
    if message.attempt > made + 1:
        return None
    now = now or utc_now()
    endpoint = store.endpoint(message.partner_id, message.endpoint_id)
    if endpoint is None or not endpoint.active:
        outcome = "endpoint removed" if endpoint is None else "endpoint disabled"
        saved = dataclasses.replace(
            delivery, state=FAILED, next_attempt_at=None, attempts=(*delivery.attempts, Attempt(now, None, outcome))
        )
        store.save_delivery(saved)
        return saved
    result = sender.post(endpoint.url, _headers(endpoint, delivery, now), delivery.body.encode("utf-8"))
    saved = _after(delivery, result, settings, now)
    store.save_delivery(saved)
    _note_health(store, endpoint, saved.state == DELIVERED, settings, now)
    if saved.state == PENDING:
        _queue_next(queue, saved, now)
    else:
        log.log(
            logging.INFO if saved.state == DELIVERED else logging.WARNING,
            "webhook %s partner_id=%s endpoint_id=%s event_id=%s type=%s attempt=%d outcome=%s",
            saved.state.lower(),
            saved.partner_id,
            saved.endpoint_id,
            saved.event_id,
            saved.event_type,
            len(saved.attempts),
            result.outcome,
        )
    return saved


def _headers(endpoint: WebhookEndpoint, delivery: WebhookDelivery, now: dt.datetime) -> dict[str, str]:
    headers = signed_headers(endpoint.signing_secrets(now), delivery.event_id, int(now.timestamp()), delivery.body)
    return {**headers, "Content-Type": "application/json", "User-Agent": "pos-ingestion-webhooks/1"}


def _after(
    delivery: WebhookDelivery, result: SendResult, settings: WebhookSettings, now: dt.datetime
) -> WebhookDelivery:
    attempts = (*delivery.attempts, Attempt(now, result.status_code, result.outcome))
    if result.status_code is not None and 200 <= result.status_code < 300:
        return dataclasses.replace(delivery, state=DELIVERED, attempts=attempts, next_attempt_at=None)
    retries_made = len(attempts) - delivery.round_start - 1
    if not is_retried(result) or retries_made >= len(settings.retry_seconds):
        return dataclasses.replace(delivery, state=FAILED, attempts=attempts, next_attempt_at=None)
    wait = float(settings.retry_seconds[retries_made])
    if result.retry_after_seconds is not None:  # the partner said when: never sooner
        wait = max(wait, min(result.retry_after_seconds, MAX_WAIT_SECONDS))
    return dataclasses.replace(delivery, attempts=attempts, next_attempt_at=now + dt.timedelta(seconds=wait))


def _queue_next(queue: DelayedQueue, delivery: WebhookDelivery, now: dt.datetime) -> None:
    due = delivery.next_attempt_at or now
    delay = max(0, int(-(-(due - now).total_seconds() // 1)))  # whole seconds, rounded up
    queue.send(
        DeliveryMessage(
            delivery.partner_id, delivery.endpoint_id, delivery.event_id, len(delivery.attempts) + 1
        ).encode(),
        delay,
    )


def _note_health(
    store: WebhookStore, endpoint: WebhookEndpoint, delivered: bool, settings: WebhookSettings, now: dt.datetime
) -> None:
    """An endpoint that answers is healthy; one that has failed every attempt for disable_after_seconds is
    disabled, and HQ is told (the log line its alert reads; the dashboard's partner page)."""
    if delivered:
        if endpoint.failing_since is not None:
            store.set_health(endpoint.partner_id, endpoint.endpoint_id, active=True, failing_since=None)
        return
    failing_since = endpoint.failing_since or now
    if (now - failing_since).total_seconds() >= settings.disable_after_seconds:
        store.set_health(endpoint.partner_id, endpoint.endpoint_id, active=False, failing_since=failing_since)
        log.error(
            "%s: partner_id=%s endpoint_id=%s failing since %s; enable it with hq partner webhook enable",
            DISABLED_LOG,
            endpoint.partner_id,
            endpoint.endpoint_id,
            failing_since.isoformat(),
        )
    elif endpoint.failing_since is None:
        store.set_health(endpoint.partner_id, endpoint.endpoint_id, active=True, failing_since=now)
