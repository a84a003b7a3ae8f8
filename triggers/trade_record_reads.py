"""GET /trade-records: a store-day's records as HQ counted them, a page at a time (decision 0096)."""

import azure.functions as func

from ingest.trade_record_query import checked_query
from reconcile.counted_records import counted_page
from triggers.http import handle

bp = func.Blueprint()  # type: ignore[no-untyped-call,unused-ignore]  # azure-functions has no annotations here


@bp.route(route="trade-records", methods=["GET"])
def get_trade_records(req: func.HttpRequest, context: func.Context) -> func.HttpResponse:
    return handle(
        req,
        lambda call: (
            200,
            counted_page(call.storage, call.partner.partner_id, checked_query(call.storage, call.partner, req.params)),
        ),
        context,
    )
