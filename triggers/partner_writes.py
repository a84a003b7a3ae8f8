"""HTTP functions of the partner writes and the mapping read (spec 4.1, 4.2, 4.5-4.8). Thin by design:
each one names its use case; triggers/http.py does keys, limits, bodies, errors and telemetry."""

from collections.abc import Callable

import azure.functions as func

from ingest import daily_close, mappings, products, stores, trade_records
from ingest.batches import BatchOutcome
from triggers.http import PartnerCall, Result, batch_result, handle

bp = func.Blueprint()


@bp.route(route="stores", methods=["PUT"])
def put_stores(req: func.HttpRequest, context: func.Context) -> func.HttpResponse:
    return handle(
        req, lambda call: batch_result(stores.put_stores(call.storage, call.partner, call.json_body())), context
    )


@bp.route(route="products", methods=["PUT"])
def put_products(req: func.HttpRequest, context: func.Context) -> func.HttpResponse:
    return handle(
        req, lambda call: batch_result(products.put_products(call.storage, call.partner, call.json_body())), context
    )


@bp.route(route="mappings/transaction-types", methods=["PUT"])
def put_transaction_type_mapping(req: func.HttpRequest, context: func.Context) -> func.HttpResponse:
    return handle(
        req,
        lambda call: batch_result(
            mappings.put_mapping(call.storage, call.backend.queue, call.partner, call.json_body())
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


def _store_day_write(use_case: Callable[..., BatchOutcome]) -> Callable[[PartnerCall], Result]:
    """A store-day's write: its use case also sends a delayed reconciliation request."""
    return lambda call: batch_result(
        use_case(
            call.storage,
            call.backend.queue,
            call.partner,
            call.json_body(),
            call.backend.settings.reconcile_delay_seconds,
        )
    )
