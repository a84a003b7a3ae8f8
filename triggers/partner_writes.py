"""HTTP functions of the partner writes and the mapping read (spec 4.1, 4.2, 4.5-4.8). Thin by design:
each one names its use case; triggers/http.py does keys, limits, bodies, errors and telemetry. Every write
takes the validate_only query parameter: the same use case, which then stores nothing."""

from collections.abc import Callable
from typing import Protocol

import azure.functions as func

from core.ports import Storage
from core.queue_ports import DelayedQueue
from core.records import Partner
from ingest import daily_close, mappings, products, stores, trade_records
from ingest.batches import BatchOutcome
from triggers.http import PartnerCall, Result, batch_result, handle

bp = func.Blueprint()  # type: ignore[no-untyped-call,unused-ignore]  # azure-functions has no annotations here

# A write's use case, given the call, the body and whether to validate only.
WriteUseCase = Callable[[PartnerCall, bytes, bool], BatchOutcome]


class StoreDayWrite(Protocol):
    """A store-day's write use case (post_trade_records, post_daily_close)."""

    def __call__(
        self,
        storage: Storage,
        queue: DelayedQueue,
        partner: Partner,
        body: bytes,
        delay_seconds: int,
        /,
        *,
        validate_only: bool = False,
    ) -> BatchOutcome: ...


@bp.route(route="stores", methods=["PUT"])
def put_stores(req: func.HttpRequest, context: func.Context) -> func.HttpResponse:
    return handle(
        req,
        _write(lambda call, body, check: stores.put_stores(call.storage, call.partner, body, validate_only=check)),
        context,
    )


@bp.route(route="products", methods=["PUT"])
def put_products(req: func.HttpRequest, context: func.Context) -> func.HttpResponse:
    return handle(
        req,
        _write(lambda call, body, check: products.put_products(call.storage, call.partner, body, validate_only=check)),
        context,
    )


@bp.route(route="mappings/transaction-types", methods=["PUT"])
def put_transaction_type_mapping(req: func.HttpRequest, context: func.Context) -> func.HttpResponse:
    return handle(
        req,
        _write(
            lambda call, body, check: mappings.put_mapping(
                call.storage, call.backend.queue, call.partner, body, validate_only=check
            )
        ),
        context,
    )


@bp.route(route="mappings/transaction-types", methods=["GET"])
def get_transaction_type_mapping(req: func.HttpRequest, context: func.Context) -> func.HttpResponse:
    return handle(req, lambda call: (200, mappings.get_mapping(call.storage, call.partner)), context)


@bp.route(route="trade-records", methods=["POST"])
def post_trade_records(req: func.HttpRequest, context: func.Context) -> func.HttpResponse:
    return handle(req, _store_day_write(trade_records.post_trade_records), context)


@bp.route(route="daily-close", methods=["POST"])
def post_daily_close(req: func.HttpRequest, context: func.Context) -> func.HttpResponse:
    return handle(req, _store_day_write(daily_close.post_daily_close), context)


def _write(use_case: WriteUseCase) -> Callable[[PartnerCall], Result]:
    """A partner's write: its validate_only query parameter is read before its body."""

    def action(call: PartnerCall) -> Result:
        validate_only = call.validate_only()
        return batch_result(use_case(call, call.json_body(), validate_only))

    return action


def _store_day_write(use_case: StoreDayWrite) -> Callable[[PartnerCall], Result]:
    """A store-day's write: its use case also sends a delayed reconciliation request."""
    return _write(
        lambda call, body, check: use_case(
            call.storage,
            call.backend.queue,
            call.partner,
            body,
            call.backend.settings.reconcile_delay_seconds,
            validate_only=check,
        )
    )
