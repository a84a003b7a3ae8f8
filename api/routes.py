"""GET /openapi.json: the interface as an OpenAPI 3.1 document.

The document is generated from the app by `make openapi` and checked in (docs/openapi.json); it is
served as it is, because the Functions app may list its functions only once per process.
"""

import functools

import azure.functions as func
import orjson

from api.http import handle
from api.openapi import DOCUMENT

bp = func.Blueprint()


@functools.cache
def _document() -> dict:
    return orjson.loads(DOCUMENT.read_bytes())


@bp.route(route="openapi.json", methods=["GET"])
def get_openapi(req: func.HttpRequest, context: func.Context) -> func.HttpResponse:
    return handle(req, lambda call: (200, _document()), context, authenticated=False)
