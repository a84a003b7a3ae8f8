"""Query parameters of the OpenAPI document (triggers/openapi.py): the writes' validate_only, and those of
GET /trade-records (ingest/trade_record_query.py)."""

from __future__ import annotations

import datetime as dt

from pydantic import TypeAdapter

from core.day_records import MAX_DAY_RECORDS_PAGE
from core.stored_json import JsonObject
from ingest.trade_record_query import DEFAULT_PAGE
from ingest.wire.scalars import Code, StoreId
from triggers.http import VALIDATE_ONLY

# The query parameter of every write (triggers/http.py Call.validate_only).
VALIDATE_ONLY_PARAMETER = {
    "name": VALIDATE_ONLY,
    "in": "query",
    "required": False,
    "description": "true: run every check of a real send (key, partner, stores, master data, currency, every "
    "field rule, every warning, the look-up of a batch_id already received) and answer what it would "
    "answer, with status VALID and 200 in place of ACCEPTED and 202, or the same problem; nothing is "
    "stored, the batch_id is not used up and nothing is reconciled. It counts toward the rate limit. "
    "false or absent: a real send. Any other value is a 400 INVALID_PAYLOAD.",
    "schema": {"type": "boolean", "default": False},
}


def _query_parameter(name: str, description: str, schema: JsonObject, required: bool = False) -> JsonObject:
    return {"name": name, "in": "query", "required": required, "description": description, "schema": schema}


# GET /trade-records (ingest/trade_record_query.py)
TRADE_RECORDS_QUERY = (
    _query_parameter("store_id", "Store code, registered for the partner.", TypeAdapter(StoreId).json_schema(), True),
    _query_parameter("business_date", "YYYY-MM-DD", TypeAdapter(dt.date).json_schema(), True),
    _query_parameter(
        "limit",
        f"Records per page, 1 to {MAX_DAY_RECORDS_PAGE} (default {DEFAULT_PAGE}).",
        {"type": "integer", "minimum": 1, "maximum": MAX_DAY_RECORDS_PAGE, "default": DEFAULT_PAGE},
    ),
    _query_parameter(
        "continuation", "The continuation of the previous page (of the same store-day and type).", {"type": "string"}
    ),
    _query_parameter(
        "transaction_type", "Only the records of this source_transaction_type.", TypeAdapter(Code).json_schema()
    ),
)
