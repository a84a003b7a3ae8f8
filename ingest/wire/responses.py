"""What the service answers: the common batch response, the reads, /health and problem documents.

The use cases build their answers from these models (`answer`), so each shape is written once: which
members, in which order, which are null and which are absent. The OpenAPI document describes them, and
the tests validate real responses against them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Annotated, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field
from pydantic.dataclasses import dataclass

from core.stored_json import JsonObject
from ingest.wire.requests import MappingEntry
from ingest.wire.scalars import Money, Timestamp, WireModel


def answer(model: type[BaseModel], members: Mapping[str, object]) -> JsonObject:
    """The JSON body of a `model` response made of `members`. Stored values may come in their stored
    form (a date or a UUID as text: read as the model types them, hence not strict). A member the model
    declares absent when None is absent; so is one left out of `members`, as a member that a stored
    result predates (its default is not invented). Timestamps are answered as given: pass them in UTC."""
    return model.model_validate(members, strict=False).model_dump(mode="json", exclude_unset=True)


def _absent(value: object) -> bool:
    return value is None


# A warning of the common batch response, as the rules make it: path locates the record, as the
# specification shows it ("trade_records[17]"); field names the one field concerned, relative to the
# record ("total_amount", "items[2].line_amount"), or is None when the warning is about the whole record
# (then absent from the response). A dataclass, so that a rule writes BatchWarning(CODE, path, message);
# no docstring, which would become the schema's description in the OpenAPI document.
@dataclass(config=WireModel.model_config, frozen=True, slots=True)
class BatchWarning:
    code: Annotated[
        str,
        Field(description="Warning code, for example AMOUNT_MISMATCH (docs/partner-guide.md lists every code)."),
    ]
    path: Annotated[
        str,
        Field(
            description="Location of the record in the request, for example trade_records[17]; "
            "$ for a warning about the whole request (RESEND_BODY_IGNORED, "
            "BATCH_ID_REUSED, BATCH_SEQ_REPEATED) or about a member of the body "
            "itself."
        ),
    ]
    message: Annotated[str, Field(description="Human-readable; may change; must not be parsed.")]
    field: Annotated[
        str | None,
        Field(
            description="The field concerned, relative to the record (for example "
            "total_amount or items[2].line_amount; batch_id or batch_seq for "
            "a warning about the whole request); absent when the warning is "
            "about the whole record.",
            exclude_if=_absent,
        ),
    ] = None


class BatchResponse(WireModel):
    batch_id: str = Field(description="The request's batch_id, exactly as sent.", json_schema_extra={"format": "uuid"})
    status: Literal["ACCEPTED", "ALREADY_RECEIVED", "VALID"] = Field(
        description="ACCEPTED: stored; ALREADY_RECEIVED: this batch_id was received before (nothing stored "
        "again); VALID: a validate_only request passed every check (nothing stored)."
    )
    record_count: int
    warnings: list[BatchWarning]


class CodeEntry(WireModel):
    code: str
    name: dict[str, str]


class CodeListResponse(WireModel):
    version: str = Field(description="Date of the code list; changes whenever the list changes.")
    data: list[CodeEntry]


class TransactionType(CodeEntry):
    is_revenue: bool
    amount_sign: Literal[1, -1, 0] | None
    description: str


class TransactionTypesResponse(WireModel):
    version: str = Field(description="Date of the code list; changes whenever the list changes.")
    data: list[TransactionType]


class MappingResponse(WireModel):
    partner_id: str
    batch_id: UUID | None
    updated_at: Timestamp | None
    mappings: list[MappingEntry]


class ControlTotals(WireModel):
    trade_record_count: int
    item_row_count: int
    payment_row_count: int
    net_sales_amount: Money
    tax_amount: Money
    tip_amount: Money
    payment_total_amount: Money


class MovedOutRecord(WireModel):
    trade_record_id: str
    to_store_id: str
    to_business_date: dt.date


class ReconciliationDetails(WireModel):
    """What HQ knows beyond the specification's fields, to help find the cause of a mismatch."""

    raw_differences: dict[str, int | str] = Field(description="actual - expected of every field that differs.")
    batch_count_received: int
    batch_count_expected: int
    batch_seqs_received: list[int]
    missing_batch_seqs: list[int]
    unmapped_source_codes: list[str]
    unknown_payment_types: list[str]
    source_codes: list[str]
    mapped_source_codes: dict[str, str] = Field(
        default_factory=dict, description="The standard type each source code was counted as in this result."
    )
    records_moved_out: list[MovedOutRecord] = Field(
        default_factory=list,
        description="Trade records that a later version moved to another store or business "
        "date (trade_record_id is unique across the partner's stores and dates), "
        "the first 100; they no longer count in this day.",
    )


class DailyCloseStatus(WireModel):
    store_id: str
    business_date: dt.date
    status: Literal["NOT_RECEIVED", "RECEIVED", "MATCHED", "MISMATCHED"]
    checked_at: Timestamp | None
    expected: ControlTotals | None
    actual: ControlTotals | None
    differences: list[str]
    details: ReconciliationDetails | None = Field(default=None, exclude_if=_absent)
    reconciliation_due_at: Timestamp | None = Field(
        default=None,
        exclude_if=_absent,
        description="Only while RECEIVED: when the reconciliation is due (UTC), "
        "RECONCILE_DELAY_SECONDS after the latest daily close or the latest change to "
        "the day. Poll again after it; the result usually follows within seconds.",
    )


class HealthResponse(WireModel):
    status: Literal["ok", "unavailable"]
    checks: dict[str, Literal["ok", "unavailable"]]


class ProblemItem(WireModel):
    path: str
    message: str


class Problem(WireModel):
    """RFC 9457 problem document (application/problem+json)."""

    type: str
    title: str
    status: int
    code: str = Field(description="The specification's error code, for example INVALID_PAYLOAD.")
    detail: str
    request_id: str = Field(description="Quote it to HQ support.")
    errors: list[ProblemItem] | None = Field(default=None, description="Every problem found, with its path.")


class OpenApiDocument(BaseModel):
    """GET /openapi.json: this interface as an OpenAPI 3.1 document."""

    model_config = ConfigDict(extra="allow")
    openapi: str
