"""Reconciliation functions: the status read, the queue-triggered worker and the overdue sweep."""

import time

import azure.functions as func

from api import telemetry
from api.http import handle
from backends.factory import current_backend
from backends.queues import RECONCILE_QUEUE
from reconcile import messages, service
from reconcile.status import daily_close_status

bp = func.Blueprint()


@bp.route(route="daily-close/{store_id}/{business_date}", methods=["GET"])
def get_daily_close(req: func.HttpRequest, context: func.Context) -> func.HttpResponse:
    return handle(req, lambda call: (200, daily_close_status(
        call.storage, call.partner, call.route("store_id"), call.route("business_date"))), context)


@bp.queue_trigger(arg_name="msg", queue_name=RECONCILE_QUEUE, connection="AzureWebJobsStorage")
def reconcile_store_day(msg: func.QueueMessage, context: func.Context) -> None:
    # An exception makes the host retry the message, then move it to the poison queue.
    started = time.perf_counter()
    request = messages.decode(msg.get_body())
    result = service.reconcile(current_backend().storage, request)
    telemetry.record_reconciliation(result, invocation_id=context.invocation_id, partner_id=request.partner_id,
                                    duration_ms=(time.perf_counter() - started) * 1000)


@bp.timer_trigger(arg_name="timer", schedule="%RECONCILE_SWEEP_SCHEDULE%", run_on_startup=False)
def sweep_overdue_closes(timer: func.TimerRequest) -> None:
    backend = current_backend()
    service.sweep(backend.storage, backend.queue, backend.settings.reconcile_sweep_grace_seconds)
