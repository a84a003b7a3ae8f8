"""HTTP functions of the code lists (spec 4.3, 4.4) and the health check (4.10, api/health.py)."""

import azure.functions as func

from api.health import HEALTH
from api.http import handle
from core import errors
from reference.codes import CODE_TYPES, TRANSACTION_TYPES, code_list

bp = func.Blueprint()


@bp.route(route="reference/transaction-types", methods=["GET"])
def get_transaction_types(req: func.HttpRequest, context: func.Context) -> func.HttpResponse:
    return handle(req, lambda call: (200, code_list(TRANSACTION_TYPES).public_view()), context)


def _code_list(code_type: str):
    if code_type not in CODE_TYPES:
        raise errors.not_found(f"Unknown code_type; use one of: transaction-types, {', '.join(CODE_TYPES)}.")
    return 200, code_list(code_type).public_view()


@bp.route(route="reference/{code_type}", methods=["GET"])
def get_code_list(req: func.HttpRequest, context: func.Context) -> func.HttpResponse:
    return handle(req, lambda call: _code_list(call.route("code_type")), context)


def _health(call):
    health = HEALTH.get(call.backend)
    return health.status, health.body


@bp.route(route="health", methods=["GET"])
def health(req: func.HttpRequest, context: func.Context) -> func.HttpResponse:
    return handle(req, _health, context, authenticated=False)
