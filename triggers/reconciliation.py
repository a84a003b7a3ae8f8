"""Reconciliation functions: the status read, the queue-triggered worker and the overdue sweep."""

import logging
import time

import azure.functions as func

from backends.queues import RECONCILE_QUEUE
from core import reconcile_messages
from core.settings import host_settings, max_dequeue_count
from ingest.daily_close_status import daily_close_status
from reconcile import service
from triggers import telemetry, webhooks
from triggers.composition import current_backend
from triggers.http import handle

bp = func.Blueprint()
log = logging.getLogger("pos.reconcile")


@bp.route(route="daily-close/{store_id}/{business_date}", methods=["GET"])
def get_daily_close(req: func.HttpRequest, context: func.Context) -> func.HttpResponse:
    return handle(
        req,
        lambda call: (
            200,
            daily_close_status(call.storage, call.partner, call.route("store_id"), call.route("business_date")),
        ),
        context,
    )


@bp.queue_trigger(arg_name="msg", queue_name=RECONCILE_QUEUE, connection="AzureWebJobsStorage")
def reconcile_store_day(msg: func.QueueMessage, context: func.Context) -> None:
    # An exception makes the host retry the message, then move it to the poison queue.
    started = time.perf_counter()
    try:
        request = reconcile_messages.decode(msg.get_body())
    except ValueError:
        # No retry can decode it: straight to the poison queue, and the host deletes it when we return.
        # Its body is not logged (it is not ours, and could hold anything).
        current_backend().queue.send_to_poison(msg.get_body())
        log.error("queue message %s is not a reconciliation request; moved to the poison queue", msg.id)
        return
    max_attempts = max_dequeue_count(host_settings())  # as the host reads it, app-setting overrides included
    try:
        result = service.reconcile(current_backend().storage, request, keep_current_result=True)
    except service.CloseNotCommitted:
        attempt = msg.dequeue_count or 1
        if attempt < max_attempts:
            log.info(
                "reconciliation postponed: close %s of %s/%s is not committed yet (attempt %d of %d)",
                request.close_batch_id,
                request.store_id,
                request.business_date,
                attempt,
                max_attempts,
            )
            raise  # delivered again after the visibility timeout, when the close has committed
        # Its request failed for good (the partner got no 2xx): nothing to reconcile, and nothing for
        # the poison queue. Should the close commit after all, the sweep reconciles it.
        log.warning(
            "reconciliation dropped after %d attempts: close %s of %s/%s was never committed",
            max_attempts,
            request.close_batch_id,
            request.store_id,
            request.business_date,
        )
        return
    webhooks.publish_reconciled(request, result)  # queued for delivery; never sent from here
    telemetry.record_reconciliation(
        result,
        invocation_id=context.invocation_id,
        partner_id=request.partner_id,
        duration_ms=(time.perf_counter() - started) * 1000,
    )


@bp.timer_trigger(arg_name="timer", schedule="%RECONCILE_SWEEP_SCHEDULE%", run_on_startup=False)
def sweep_overdue_closes(timer: func.TimerRequest) -> None:
    backend = current_backend()
    try:
        webhooks.publish_overdue(backend.settings.reconcile_sweep_grace_seconds)
    except Exception as error:  # events never stop the sweep; a close still overdue next time is published then
        telemetry.log_exception(log, "daily_close.overdue events not published", error)
    service.sweep(backend.storage, backend.queue, backend.settings.reconcile_sweep_grace_seconds)
