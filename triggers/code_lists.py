"""HTTP functions of the standard code lists (spec 4.3, 4.4): GET /reference/{code_type}."""

import azure.functions as func

from core import errors
from reference.codes import CODE_TYPES, TRANSACTION_TYPES, code_list
from triggers.http import Result, handle

bp = func.Blueprint()


@bp.route(route="reference/transaction-types", methods=["GET"])
def get_transaction_types(req: func.HttpRequest, context: func.Context) -> func.HttpResponse:
    return handle(req, lambda call: (200, code_list(TRANSACTION_TYPES).public_view()), context)


def _code_list(code_type: str) -> Result:
    if code_type not in CODE_TYPES:
        raise errors.not_found(f"Unknown code_type; use one of: transaction-types, {', '.join(CODE_TYPES)}.")
    return 200, code_list(code_type).public_view()


@bp.route(route="reference/{code_type}", methods=["GET"])
def get_code_list(req: func.HttpRequest, context: func.Context) -> func.HttpResponse:
    return handle(req, lambda call: _code_list(call.route("code_type")), context)
