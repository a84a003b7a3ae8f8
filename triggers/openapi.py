"""The OpenAPI 3.1 document of the partner interface, generated from the app itself.

Paths and methods come from the HTTP functions of the triggers' blueprints (triggers/blueprints.py, which
function_app.py registers); request and response
schemas from the pydantic models in ingest/wire/; warning codes from the rules; examples from the
example business day in examples/day/ (which a test pushes through the service). Nothing here is a
second copy of a route or a model: `OPERATIONS` only says, per function, which model it reads and
writes and which errors it can answer, and a test fails when a function has no entry.

`python -m triggers.openapi` prints the document; `docs/openapi.json` is that output, checked in and served
as it is by GET /openapi.json (a test fails when it drifts from the code).
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from dataclasses import dataclass, field

import azure.functions as func
from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import JsonSchemaMode, JsonSchemaValue, models_json_schema

from core.settings import PROJECT_ROOT, host_settings, route_prefix
from ingest.batches import BATCH_WARNING_CODES, MAX_UNKNOWN_MEMBER_WARNINGS, UNKNOWN_MEMBER_IGNORED
from ingest.data_protection import PROTECTION_WARNING_CODES
from ingest.payment_ids import PAYMENT_ID_WARNING_CODES
from ingest.trade_rules.common import WARNING_CODES
from ingest.wire.requests import DailyClose, MappingsBatch, ProductsBatch, StoresBatch, TradeRecordsBatch
from ingest.wire.responses import (
    BatchResponse,
    CodeListResponse,
    DailyCloseStatus,
    HealthResponse,
    MappingResponse,
    OpenApiDocument,
    Problem,
    TradeRecordsPage,
    TransactionTypesResponse,
)
from ingest.wire.scalars import StoreId
from reference.codes import CODE_TYPES
from triggers.blueprints import new_app, webhook_events
from triggers.method_not_allowed import FUNCTION_PREFIX as NOT_ALLOWED
from triggers.openapi_parameters import TRADE_RECORDS_QUERY, VALIDATE_ONLY_PARAMETER
from triggers.openapi_refinements import add_links, name_enums

EXAMPLES = PROJECT_ROOT / "examples" / "day"
ERRORS = {
    "INVALID_PAYLOAD": (
        400,
        "Invalid type, missing field, invalid enum or code, wrong decimal places, duplicates, "
        "values differing from the outer or the store's, badly formatted date; `errors` "
        "lists every problem with its path.",
    ),
    "BATCH_TOO_LARGE": (400, "More items than the batch limit (500)."),
    "UNKNOWN_STANDARD_CODE": (400, "A standard_code is not in the standard transaction type list."),
    "UNAUTHORIZED": (401, "API key missing, unknown or revoked; bearer token refused; key and token of two partners."),
    "STORE_NOT_ALLOWED": (403, "A store_id is not registered for the partner."),
    "PARTNER_INACTIVE": (403, "The partner account is not active."),
    "NOT_FOUND": (404, "No such resource (for example an unknown code_type)."),
    "PAYLOAD_TOO_LARGE": (413, "Body larger than 5 MiB (5,242,880 bytes)."),
    "RATE_LIMITED": (
        429,
        "Too many requests for this partner, or with a missing or unknown key from this "
        "address; retry after Retry-After seconds. This 429 carries an application/problem+json "
        "body with code RATE_LIMITED; a 429 without it comes from the Azure platform in front of "
        "the app (every instance busy at the most instances it may run): retry it after a "
        "pause, it is not the partner's rate limit.",
    ),
    "SERVICE_UNAVAILABLE": (503, "Storage temporarily unavailable; nothing was stored; retry the same request."),
}
# Every write body: the schemas do not forbid other members, so the document says what happens to them.
UNKNOWN_MEMBERS = (
    "Members that the schema does not name, at any depth, are ignored with their values (a later "
    "version of the interface may add members), and each is reported in the 202 answer as an "
    f"{UNKNOWN_MEMBER_IGNORED} warning at the record's path, with the member's path within the "
    f"record as its field (after {MAX_UNKNOWN_MEMBER_WARNINGS} such warnings, one more counts the "
    "rest), so that a misspelled optional member does not lose its value without a word. The keys of "
    "a localized text (language tags) are not members."
)
_AUTHENTICATED = ("UNAUTHORIZED", "PARTNER_INACTIVE", "RATE_LIMITED", "SERVICE_UNAVAILABLE")
_WRITE = _AUTHENTICATED + ("INVALID_PAYLOAD", "PAYLOAD_TOO_LARGE")


@dataclass(frozen=True)
class Operation:
    summary: str
    response: type[BaseModel]
    errors: tuple[str, ...]
    request: type[BaseModel] | None = None
    example: str | None = None  # file in examples/day/
    success: int = 200
    authenticated: bool = True
    description: str = ""
    parameters: dict[str, str] = field(default_factory=dict)
    query: tuple[JsonSchemaValue, ...] = ()  # query parameters, as OpenAPI parameter objects


OPERATIONS = {
    "put_stores": Operation(
        "Upsert stores",
        BatchResponse,
        _WRITE + ("BATCH_TOO_LARGE", "STORE_NOT_ALLOWED"),
        StoresBatch,
        "stores.json",
        202,
    ),
    "put_products": Operation(
        "Create or update products and modifier groups",
        BatchResponse,
        _WRITE + ("BATCH_TOO_LARGE", "STORE_NOT_ALLOWED"),
        ProductsBatch,
        "products.json",
        202,
    ),
    "put_transaction_type_mapping": Operation(
        "Replace the transaction type mapping",
        BatchResponse,
        _WRITE + ("UNKNOWN_STANDARD_CODE",),
        MappingsBatch,
        "mapping.json",
        202,
        description="Full replacement: entries not sent are removed.",
    ),
    "get_transaction_type_mapping": Operation("The mapping in effect", MappingResponse, _AUTHENTICATED),
    "get_transaction_types": Operation("Standard transaction types", TransactionTypesResponse, _AUTHENTICATED),
    "get_code_list": Operation(
        "A code list",
        CodeListResponse,
        _AUTHENTICATED + ("NOT_FOUND",),
        parameters={"code_type": "order-types, order-sources, payment-methods, payment-types or tax-categories"},
    ),
    "post_trade_records": Operation(
        "Push a batch of transactions of one store and business date",
        BatchResponse,
        _WRITE + ("BATCH_TOO_LARGE", "STORE_NOT_ALLOWED"),
        TradeRecordsBatch,
        "trade-records-NYC-001.json",
        202,
        description="Recording rules that HQ can check are reported as warnings; the records are still accepted.",
    ),
    "post_daily_close": Operation(
        "Send a store-day's control totals",
        BatchResponse,
        _WRITE + ("STORE_NOT_ALLOWED",),
        DailyClose,
        "daily-close-NYC-001.json",
        202,
        description="Reconciliation starts after RECONCILE_DELAY_SECONDS (15 minutes by default); the last "
        "close received for a store-day wins.",
    ),
    "get_daily_close": Operation(
        "Reconciliation status of a store-day",
        DailyCloseStatus,
        _AUTHENTICATED + ("INVALID_PAYLOAD", "STORE_NOT_ALLOWED"),
        parameters={"store_id": "Store code, registered for the partner", "business_date": "YYYY-MM-DD"},
    ),
    "get_trade_records": Operation(
        "A store-day's trade records as HQ counted them",
        TradeRecordsPage,
        _AUTHENTICATED + ("INVALID_PAYLOAD", "STORE_NOT_ALLOWED"),
        description="Each latest record HQ holds for the store-day with what it adds to each control total, by "
        "the rules reconciliation counts with; compare them with your own records to find the ones that make "
        "a day MISMATCHED. Paged: pass the answer's continuation to get the next page.",
        query=TRADE_RECORDS_QUERY,
    ),
    "health": Operation(
        "Health of the service and its storage",
        HealthResponse,
        (),
        authenticated=False,
        description="200 when storage and queue answer, 503 (same body) when not.",
    ),
    "get_openapi": Operation("This document", OpenApiDocument, (), authenticated=False),
}


def _schemas() -> JsonSchemaValue:
    models = {op.request for op in OPERATIONS.values() if op.request} | {op.response for op in OPERATIONS.values()}
    pairs: list[tuple[type[BaseModel], JsonSchemaMode]] = [
        (model, "validation") for model in sorted(models, key=lambda m: m.__name__)
    ]
    pairs.append((Problem, "validation"))
    _, document = models_json_schema(pairs, ref_template="#/components/schemas/{model}")
    schemas: JsonSchemaValue = document["$defs"]
    codes = {**WARNING_CODES, **PROTECTION_WARNING_CODES, **PAYMENT_ID_WARNING_CODES, **BATCH_WARNING_CODES}
    schemas["BatchWarning"]["properties"]["code"]["description"] = (
        "Warning code. " + "; ".join(f"{code}: {meaning}" for code, meaning in codes.items()) + "."
    )
    schemas["BatchWarning"]["properties"]["code"]["examples"] = list(codes)
    schemas["Problem"]["properties"]["code"]["examples"] = list(ERRORS)
    return schemas


def _ref(model: type[BaseModel]) -> JsonSchemaValue:
    return {"$ref": f"#/components/schemas/{model.__name__}"}


_HEADERS = {
    "x-request-id": {"description": "Id of this request; quote it to HQ support.", "schema": {"type": "string"}},
}
_CHALLENGE_TEXT = 'RFC 6750: `Bearer error="invalid_token"` for a refused token; else `Bearer` if tokens are on.'
_CHALLENGE = {"description": _CHALLENGE_TEXT, "schema": {"type": "string"}}
# Either credential opens an operation; given both, they must name the same partner.
SECURITY: list[dict[str, list[str]]] = [{"FunctionsKey": []}, {"BearerToken": []}]
_KEY_SCHEME = {"type": "apiKey", "in": "header", "name": "x-functions-key", "description": "The partner's API key."}
_BEARER_TEXT = (
    "An OAuth 2.0 access token (client credentials) of a client HQ mapped to the partner, from the identity provider "
    "HQ names (Entra ID: token URL https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token, scope "
    "api://{API application id}/.default); sent as `Authorization: Bearer <token>` instead of, or beside, the key."
)
_BEARER_SCHEME = {"type": "http", "scheme": "bearer", "bearerFormat": "JWT", "description": _BEARER_TEXT}
# The partner's rate limit (draft-ietf-httpapi-ratelimit-headers-11), on every answer once the key and
# partner are accepted; absent when the limit is off, and on the per-address 429 for bad keys.
_RATE_LIMIT_HEADERS = {
    "RateLimit-Policy": {
        "description": "The partner's quota: q requests per window of w seconds, as in "
        '`"default";q=600;w=60` (IETF draft-ietf-httpapi-ratelimit-headers-11). '
        "Present once the key and partner are accepted and the request counted; "
        "absent when the limit is off, on 403 PARTNER_INACTIVE and on the 429 "
        "for bad keys from one address.",
        "schema": {"type": "string"},
        "example": '"default";q=600;w=60',
    },
    "RateLimit": {
        "description": "What is left of the quota: r requests until the window ends in t seconds, "
        'as in `"default";r=599;t=42`; r=0 with 429 RATE_LIMITED beyond it.',
        "schema": {"type": "string"},
        "example": '"default";r=599;t=42',
    },
}


def _headers_of(op: Operation) -> JsonSchemaValue:
    return {**_HEADERS, **_RATE_LIMIT_HEADERS} if op.authenticated else dict(_HEADERS)


def _responses(op: Operation) -> JsonSchemaValue:
    responses: JsonSchemaValue = {}
    common = _headers_of(op)
    ok = {
        "description": "OK" if op.success == 200 else "Accepted",
        "headers": common,
        "content": {"application/json": {"schema": _ref(op.response)}},
    }
    responses[str(op.success)] = ok
    if op.success == 202:
        responses["200"] = {
            "description": "ALREADY_RECEIVED: this batch_id was received before; the original record_count is "
            "returned and nothing is stored again. VALID: a validate_only request passed every check; "
            "nothing was stored.",
            "headers": {
                **common,
                "Idempotent-Replayed": {
                    "description": "Always true on a replay (ALREADY_RECEIVED); absent otherwise.",
                    "schema": {"type": "string", "enum": ["true"]},
                },
            },
            "content": {"application/json": {"schema": _ref(op.response)}},
        }
    if op.response is HealthResponse:
        responses["503"] = {
            "description": "Storage or queue unreachable.",
            "headers": common,
            "content": {"application/json": {"schema": _ref(op.response)}},
        }
    by_status: dict[int, list[str]] = {}
    for code in op.errors:
        by_status.setdefault(ERRORS[code][0], []).append(code)
    for status, codes in sorted(by_status.items()):
        # A 401 comes before the partner is known and counted: no rate-limit headers (documented as optional
        # on the 403 and 429 that share a status with a partner's own problems).
        headers = {**_HEADERS, "WWW-Authenticate": _CHALLENGE} if status == 401 else dict(common)
        if status in (429, 503):
            headers["Retry-After"] = {"description": "Seconds to wait before retrying.", "schema": {"type": "integer"}}
        responses[str(status)] = {
            "description": " ".join(f"{code}: {ERRORS[code][1]}" for code in codes),
            "headers": headers,
            "content": {"application/problem+json": {"schema": _ref(Problem)}},
        }
    return responses


def _example(name: str) -> JsonSchemaValue:
    example: JsonSchemaValue | list[JsonSchemaValue] = json.loads((EXAMPLES / name).read_text(encoding="utf-8"))
    return example[0] if isinstance(example, list) else example


def _operation(name: str, op: Operation, template: str) -> JsonSchemaValue:
    operation: JsonSchemaValue = {"operationId": name, "summary": op.summary, "responses": _responses(op)}
    if op.description:
        operation["description"] = op.description
    operation["security"] = SECURITY if op.authenticated else []
    parameters = [
        {
            "name": param,
            "in": "path",
            "required": True,
            "description": op.parameters.get(param, ""),
            "schema": _parameter_schema(param),
        }
        for param in _path_parameters(template)
    ]
    parameters += op.query
    if op.request is not None:  # a write
        parameters.append(VALIDATE_ONLY_PARAMETER)
    if parameters:
        operation["parameters"] = parameters
    if op.request is not None:
        content = {"schema": _ref(op.request)}
        if op.example:
            content["example"] = _example(op.example)
        operation["requestBody"] = {
            "required": True,
            "description": UNKNOWN_MEMBERS,
            "content": {"application/json": content},
        }
    return operation


def _parameter_schema(name: str) -> JsonSchemaValue:
    """Path parameters are checked as the same fields of a body are (store_id a StoreId, with the
    description that says why its set is restricted), so the document says so; a value outside the
    schema gets the documented 400, 403 or 404."""
    if name == "store_id":
        return TypeAdapter(StoreId).json_schema()
    if name == "business_date":
        return TypeAdapter(dt.date).json_schema()
    return {"type": "string", "enum": list(CODE_TYPES)} if name == "code_type" else {"type": "string"}


def _path_parameters(template: str) -> list[str]:
    return [segment.strip("{}").split(":")[0] for segment in template.split("/") if segment.startswith("{")]


def http_functions(functions: list[func.Function]) -> list[tuple[str, str, list[str]]]:
    """(function name, route template, methods) of every HTTP function among `app.get_functions()`."""
    found = []
    for function in functions:
        trigger, name = function.get_trigger(), function.get_function_name() or ""
        if isinstance(trigger, func.decorators.http.HttpTrigger) and trigger.route and not name.startswith(NOT_ALLOWED):
            methods = [str(getattr(m, "value", m)).lower() for m in trigger.methods or ()]
            found.append((name, trigger.route, methods))
    return found


def build_document(functions: list[func.Function]) -> JsonSchemaValue:
    """The document for the functions of `app.get_functions()` (which may be called only once per
    process: it registers the function names it returns)."""
    paths: JsonSchemaValue = {}
    for name, template, methods in sorted(http_functions(functions), key=lambda f: f[1]):
        if name not in OPERATIONS:
            raise KeyError(f"HTTP function {name} has no entry in triggers.openapi.OPERATIONS")
        for method in methods:
            paths.setdefault(f"/{template}", {})[method] = _operation(name, OPERATIONS[name], template)
    document = {
        "openapi": "3.1.0",
        "info": {
            "title": "Partner POS Ingestion Service",
            "version": "1.0.0",
            "description": "Partners push stores, products, transaction type mappings, trade records and daily "
            "closes; HQ reconciles each store and business date. Every write carries a batch_id "
            "(UUID): resending it is safe and answers 200 ALREADY_RECEIVED. Errors are RFC 9457 "
            "problem documents with the specification's `code`. A write's members that its schema "
            f"does not name are ignored and reported as {UNKNOWN_MEMBER_IGNORED} warnings.",
        },
        "servers": [{"url": f"/{route_prefix(host_settings())}"}],
        "security": SECURITY,
        "paths": paths,
        "webhooks": webhook_events(),
        "components": {
            "securitySchemes": {"FunctionsKey": _KEY_SCHEME, "BearerToken": _BEARER_SCHEME},
            "schemas": _schemas(),
        },
    }
    return add_links(name_enums(document))


def render(document: JsonSchemaValue) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def app_functions() -> list[func.Function]:
    """The functions of an app that registers the triggers' blueprints as function_app.py does."""
    return new_app().get_functions()


def main() -> int:
    sys.stdout.write(render(build_document(app_functions())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
