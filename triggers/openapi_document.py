"""GET /openapi.json: the interface as an OpenAPI 3.1 document.

The document is generated from the triggers by `make openapi` (triggers/openapi.py) and checked in
(docs/openapi.json); it is served as it is, so that the running app never lists its functions again.
"""

import functools

import azure.functions as func
import orjson

from core.settings import PROJECT_ROOT
from core.stored_json import JsonObject
from triggers.http import handle

DOCUMENT = PROJECT_ROOT / "docs" / "openapi.json"
bp = func.Blueprint()


@functools.cache
def _document() -> JsonObject:
    document: JsonObject = orjson.loads(DOCUMENT.read_bytes())
    return document


@bp.route(route="openapi.json", methods=["GET"])
def get_openapi(req: func.HttpRequest, context: func.Context) -> func.HttpResponse:
    return handle(req, lambda call: (200, _document()), context, authenticated=False)
