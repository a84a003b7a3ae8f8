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


class TypeBreakdown(WireModel):
    standard_type: str | None = Field(description="The standard type the source code was counted as; null: unmapped.")
    is_revenue: bool
    trade_record_count: int
    item_row_count: int
    payment_row_count: int
    net_sales_amount: Money
    tax_amount: Money
    tip_amount: Money


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
    by_transaction_type: dict[str, TypeBreakdown] = Field(
        default_factory=dict,
        description="Per source_transaction_type: the records HQ counted and what they added to each total "
        "(payments are counted per payment_type); compare per type before comparing records "
        "(GET /trade-records).",
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


class CountedPayment(WireModel):
    payment_type: str
    amount: Money = Field(description="The record's payments of this payment_type, summed as sent.")
    direction: Literal[1, -1, 0] | None = Field(
        description="How HQ counts this payment_type in payment_total_amount; null: HQ has no direction for "
        "it yet, so it is not counted."
    )
    counted_amount: Money = Field(description="amount x direction: what it adds to payment_total_amount.")


class CountedRecord(WireModel):
    """One trade record as HQ counted it for the store-day (its latest version)."""

    trade_record_id: str
    version: int
    transaction_type: str = Field(description="The record's source_transaction_type.")
    standard_type: str | None = Field(description="The standard type the mapping in effect maps it to; null: unmapped.")
    is_revenue: bool = Field(
        description="Whether it counts in net_sales_amount (by its standard type, not its status)."
    )
    status: str | None = Field(description="The record's status as sent.")
    counted: ControlTotals = Field(description="What this record adds to each control total of the day.")
    payments: list[CountedPayment]
    batch_id: UUID | None = Field(
        description="The batch that brought this version; null for a record stored before it was kept."
    )
    counting_notes: list[Literal["UNMAPPED_TYPE", "VOIDED_COUNTED_BY_TYPE", "UNKNOWN_PAYMENT_DIRECTION"]] = Field(
        description="Why it may count otherwise than the partner's close: UNMAPPED_TYPE (in the counts, not in net "
        "sales, until the mapping names its type), VOIDED_COUNTED_BY_TYPE (VOIDED, but its type is revenue), "
        "UNKNOWN_PAYMENT_DIRECTION (a payment_type HQ has no direction for: not counted)."
    )


class CountedType(WireModel):
    standard_type: str
    is_revenue: bool


class CountingInEffect(WireModel):
    """HQ's counting rules for the partner now: what the records were counted by."""

    transaction_types: dict[str, CountedType] = Field(
        description="The mapping in effect: each source_transaction_type's standard type and whether it is revenue."
    )
    payment_directions: dict[str, Literal[1, -1, 0]] = Field(
        description="Each payment_type's direction in payment_total_amount; a payment_type not listed is not counted."
    )


class TradeRecordsPage(WireModel):
    """A page of a store-day's trade records as HQ counted them."""

    store_id: str
    business_date: dt.date
    currency: str | None = Field(description="The store's currency, in whose places the amounts are written.")
    trade_records: list[CountedRecord] = Field(
        description="Each latest record of the store-day once over the pages, in an order of HQ's."
    )
    moved_out: list[MovedOutRecord] = Field(
        description="On the first page only: records a later version moved to another store or business date "
        "(the first 100), which no longer count in this day."
    )
    counting: CountingInEffect | None = Field(description="On the first page only (null on later pages).")
    continuation: str | None = Field(
        description="Pass it as the continuation parameter to get the next page; null on the last page."
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
