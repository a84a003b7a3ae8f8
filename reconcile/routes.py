"""Reconciliation functions: the status read, the queue-triggered worker and the overdue sweep."""

import logging

import azure.functions as func

from api.http import handle
from backends.factory import current_backend
from backends.queues import RECONCILE_QUEUE
from reconcile import messages, service
from reconcile.status import daily_close_status

bp = func.Blueprint()
log = logging.getLogger("pos.reconcile")


@bp.route(route="daily-close/{store_id}/{business_date}", methods=["GET"])
def get_daily_close(req: func.HttpRequest) -> func.HttpResponse:
    return handle(req, lambda call: (200, daily_close_status(call.storage, call.partner, call.route("store_id"),
                                                             call.route("business_date"))))


@bp.queue_trigger(arg_name="msg", queue_name=RECONCILE_QUEUE, connection="AzureWebJobsStorage")
def reconcile_store_day(msg: func.QueueMessage) -> None:
    # An exception makes the host retry the message, then move it to the poison queue.
    service.reconcile(current_backend().storage, messages.decode(msg.get_body()))


@bp.timer_trigger(arg_name="timer", schedule="%RECONCILE_SWEEP_SCHEDULE%", run_on_startup=False)
def sweep_overdue_closes(timer: func.TimerRequest) -> None:
    backend = current_backend()
    service.sweep(backend.storage, backend.queue, backend.settings.reconcile_sweep_grace_seconds)
