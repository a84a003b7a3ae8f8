"""Webhook delivery: the queue-triggered attempt, and the events the reconciliation functions publish
(after the result is saved, never inside the reconciliation; decision 0106)."""

from __future__ import annotations

import datetime as dt
import logging

import azure.functions as func

from backends.webhook_backend import WEBHOOK_QUEUE
from core.clock import utc_now
from core.records import ClosedDay, ReconcileRequest
from core.webhooks import DeliveryMessage
from ingest.webhooks import delivery, events
from triggers.composition import current_backend, current_webhooks

bp = func.Blueprint()
log = logging.getLogger("pos.webhooks")


@bp.queue_trigger(arg_name="msg", queue_name=WEBHOOK_QUEUE, connection="AzureWebJobsStorage")
def deliver_webhook(msg: func.QueueMessage, context: func.Context) -> None:
    # An exception (storage unavailable) makes the host retry the message; the endpoint's own failures
    # are not exceptions: they are recorded and retried on the schedule.
    try:
        message = DeliveryMessage.decode(msg.get_body())
    except ValueError:
        current_webhooks().queue.send_to_poison(msg.get_body())
        log.error("queue message %s is not a webhook delivery; moved to the poison queue", msg.id)
        return
    hooks = current_webhooks()
    delivery.deliver(hooks.store, hooks.queue, hooks.sender, hooks.settings, message, msg.dequeue_count or 1)


def publish_reconciled(request: ReconcileRequest, result: ClosedDay | None) -> None:
    """After a run of the queue worker: the result it saved, or, when it saved none, the close's current
    result (a run that died after saving it left its event unpublished: the message came back)."""
    hooks = current_webhooks()
    if result is None:
        result = current_backend().storage.get_closed_day(request.partner_id, request.store_id, request.business_date)
        if result is None or result.close_batch_id != request.close_batch_id:
            return
    events.publish_result(hooks.store, hooks.queue, request.partner_id, result)


def publish_overdue(grace_seconds: int, now: dt.datetime | None = None) -> None:
    """daily_close.overdue for each close the sweep is about to re-enqueue (before it moves their due time:
    published again by the next sweep if this one dies, under the same event id)."""
    now = now or utc_now()
    hooks = current_webhooks()
    for partner_id, day in current_backend().storage.days_due(now - dt.timedelta(seconds=grace_seconds)):
        events.publish_overdue(hooks.store, hooks.queue, partner_id, day, now)
