"""The wire format of the partner interface (spec sections 1, 2, 4), as strict pydantic models.

Requests are parsed straight from the body bytes (`model_validate_json`). Types are strict, as the
specification's wire format is: no string-to-number or number-to-string coercion. Checks that need
a sibling field (money places need the currency) or stored data (store currency) live beside each
use case, so that every problem is reported with its path.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import re
import zoneinfo
from typing import Annotated, Literal
from uuid import UUID

import langcodes
import pycountry
from pydantic import (AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter,
                      ValidationError)
from pydantic.dataclasses import dataclass

from core.money import currency_exponent
from reference.codes import code_list

BATCH_LIMIT = 500
# Batches of trade records per store and business date (batch_seq, batch_count). The specification
# gives no limit; reconciliation lists the missing batch_seqs up to batch_count, so an unbounded count
# (2**53 - 1 fits the wire format) would have it build a list no memory holds. 100,000 batches is a
# store-day of 100,000 transactions sent one by one.
MAX_BATCHES_PER_DAY = 100_000
# Integers stay within I-JSON's exact range (RFC 7493): larger ones are not exact in many JSON
# parsers, and would overflow the 64-bit integers of storage (a 500 instead of a 400).
MAX_SAFE_INT = 2**53 - 1


# --- scalar types -------------------------------------------------------------------------------

def _check_currency(code: str) -> str:
    if currency_exponent(code) is None:
        raise ValueError("must be an ISO 4217 currency code with minor units, such as USD or JPY")
    return code


def _check_country(code: str) -> str:
    if len(code) != 2 or not code.isupper() or pycountry.countries.get(alpha_2=code) is None:
        raise ValueError("must be an ISO 3166-1 alpha-2 country code, such as US or TW")
    return code


@functools.cache
def _time_zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def _check_time_zone(name: str) -> str:
    if name not in _time_zones():
        raise ValueError("must be an IANA time zone, such as America/New_York")
    return name


_TAG_SYNTAX = re.compile(r"^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$")


def _check_language_tag(tag: str) -> str:
    if not _TAG_SYNTAX.match(tag) or not langcodes.tag_is_valid(tag):
        raise ValueError("must be a BCP 47 language tag, such as en-US or zh-TW")
    return tag


# Integers are JSON integers: 2, not 2.0 or 2e0 (strict, like every type here), within I-JSON's exact
# range. JSON Schema cannot say "written without a fraction", so the document's descriptions do.
_INTEGER = "An integer written without a fraction or an exponent (2, not 2.0)."
Count = Annotated[int, Field(ge=0, le=MAX_SAFE_INT, description=_INTEGER)]
PositiveInteger = Annotated[int, Field(ge=1, le=MAX_SAFE_INT, description=_INTEGER)]


# [0-9], not \d: the pattern engine's \d also matches other scripts' digits (such as "٥"), which
# int() would then read as a number.
DecimalString = Annotated[
    str,
    StringConstraints(pattern=r"^-?[0-9]{1,15}(\.[0-9]{1,8})?$"),
    Field(description="Decimal number as a JSON string, for example \"2\" or \"0.5\"."),
]
Money = Annotated[
    str,
    StringConstraints(pattern=r"^-?[0-9]{1,15}(\.[0-9]{1,8})?$"),
    Field(description="Amount as a decimal string with exactly the currency's minor-unit places "
                      "(USD \"12.50\", JPY \"1200\")."),
]
# Codes and ids (product_id, payment_id, fiscal_document_no, tax_code, ...). The specification types
# them as plain strings with no length, and real systems write them with any character: "FT A/123",
# "FV/2024/01/001", "GST/HST", "#4411", "ABC/12-XL", non-Latin scripts. So a code is any printable text,
# kept exactly as sent (spaces around it too: they are part of the partner's key), only without control
# characters (C0, DEL, C1) and line or paragraph separators, which are never part of a code and would
# break HQ's tables and logs. Storage escapes what its keys cannot hold (backends/cosmos/keys.py).
# 200 characters is a generous maximum where the specification sets none (docs/decisions.md).
MAX_CODE_LENGTH = 200
_CODE_PATTERN = r"^[^\x00-\x1f\x7f-\x9f\u2028\u2029]+$"
Code = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_CODE_LENGTH, pattern=_CODE_PATTERN),
    Field(description=f"Code of 1 to {MAX_CODE_LENGTH} characters: any printable text, kept exactly as sent "
                      "(spaces included); no control characters or line separators."),
]
# store_id alone travels in a URL path (GET /daily-close/{store_id}/{business_date}), where "/" splits
# the path, "?" and "#" end it, and some clients and proxies read a backslash as "/": it keeps a
# restricted set.
MAX_STORE_ID_LENGTH = 100
_STORE_ID_PATTERN = r"^[^/\\?#\x00-\x1f\x7f-\x9f\u2028\u2029]+$"
StoreId = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_STORE_ID_LENGTH, pattern=_STORE_ID_PATTERN),
    Field(description=f"Store code of 1 to {MAX_STORE_ID_LENGTH} characters, without / \\ ? # or control "
                      "characters: it travels in the path of GET /daily-close/{store_id}/{business_date}."),
]
# Names and free strings: any text but control characters (tab and line breaks aside). A NUL or an
# escape sequence is never POS data, and would reach HQ's reports and terminals as it is.
_PRINTABLE = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]+$"
Text = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=_PRINTABLE)]
FreeString50 = Annotated[str, StringConstraints(min_length=1, max_length=50, pattern=_PRINTABLE)]
CurrencyCode = Annotated[str, AfterValidator(_check_currency), Field(description="ISO 4217 code.", examples=["USD"])]
CountryCode = Annotated[str, AfterValidator(_check_country), Field(description="ISO 3166-1 alpha-2 code.")]
TimeZone = Annotated[str, AfterValidator(_check_time_zone), Field(description="IANA time zone.")]
# The document gives the syntax of a tag (as the pattern of the object's keys); the validator also
# checks its subtags against the registry.
LanguageTag = Annotated[
    str,
    AfterValidator(_check_language_tag),
    Field(description="BCP 47 language tag.", json_schema_extra={"pattern": _TAG_SYNTAX.pattern}),
]
LocalizedText = Annotated[
    dict[LanguageTag, Text],
    Field(min_length=1, description="Text by BCP 47 language tag; at least one language.",
          json_schema_extra={"additionalProperties": False}),
]
# Timestamps are turned into UTC, store local time and epoch microseconds: a year of headroom at both
# ends of the datetime range keeps every conversion in range (otherwise a 500, not a 400). The bounds
# are compared in pydantic-core, offsets included, with no Python call per timestamp.
Timestamp = Annotated[AwareDatetime,
                      Field(ge=dt.datetime(2, 1, 1, tzinfo=dt.timezone.utc),
                            lt=dt.datetime(9999, 1, 1, tzinfo=dt.timezone.utc),
                            description="Date-time with a UTC offset (RFC 3339).")]
ClockTime = Annotated[str, StringConstraints(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$"), Field(description="HH:mm")]
# A batch_id is kept as the partner wrote it, to be echoed exactly (spec 1: "Echo of the request
# batch_id"); markers compare its canonical form (`WriteBatch.batch_key`). pydantic-core's UUID parser
# decides what is a UUID, so the forms accepted stay those accepted before the echo: 8-4-4-4-12 hex
# digits, also 32 without hyphens, in braces or after "urn:uuid:", in any case. One call per batch.
_UUID = TypeAdapter(UUID)
UUID_EXAMPLE = "3f0c6d3e-2a59-4f4b-9a0e-0d6d2c1b7a01"


def _check_uuid(text: str) -> str:
    try:
        _UUID.validate_python(text)
    except ValidationError:
        raise ValueError(f'must be a UUID string such as "{UUID_EXAMPLE}"') from None
    return text


BatchId = Annotated[str, AfterValidator(_check_uuid),
                    Field(description=f"Idempotency key of the batch: a UUID (RFC 9562), for example {UUID_EXAMPLE}; "
                                      "also accepted without hyphens, in braces or after urn:uuid:. The response "
                                      "echoes it exactly as sent. Two batch_ids are the same batch when they are "
                                      "the same UUID, in any case or form.",
                          json_schema_extra={"format": "uuid"})]
MasterStatus = Literal["ACTIVE", "INACTIVE"]
ProductType = Literal["SINGLE", "COMBO", "SIDE", "DRINK", "MODIFIER"]
TaxCategory = Literal[code_list("tax-categories").codes]  # type: ignore[valid-type]
OrderType = Literal[code_list("order-types").codes]  # type: ignore[valid-type]
PaymentMethod = Literal[code_list("payment-methods").codes]  # type: ignore[valid-type]
TradeStatus = Literal["OPEN", "COMPLETED", "VOIDED", "REFUNDED", "PARTIALLY_REFUNDED"]


class WireModel(BaseModel):
    # Unknown fields are ignored so that partners can send fields added by later minor versions.
    model_config = ConfigDict(strict=True, extra="ignore")


class WriteBatch(WireModel):
    batch_id: BatchId

    @property
    def batch_key(self) -> str:
        """The batch_id as batch markers store and compare it: its UUID in canonical form (lower case,
        hyphenated), so that the same UUID written in another case or form is the same batch."""
        return str(UUID(self.batch_id))


# --- stores (PUT /stores) -----------------------------------------------------------------------

class Store(WireModel):
    store_id: StoreId
    store_name: Text
    country_code: CountryCode
    currency: CurrencyCode
    time_zone: TimeZone
    locale: LanguageTag
    workday_start: ClockTime
    prices_include_tax: bool
    status: MasterStatus
    last_modified_at: Timestamp


class StoresBatch(WriteBatch):
    stores: list[Store] = Field(min_length=1, max_length=BATCH_LIMIT)


# --- products and modifier groups (PUT /products) -----------------------------------------------

class ComboComponent(WireModel):
    product_id: Code
    quantity: DecimalString
    is_substitutable: bool
    substitute_group_id: Code | None = None


class Product(WireModel):
    product_id: Code
    store_id: StoreId | None = None
    sku: Code | None = None
    name: LocalizedText
    category_id: Code | None = None
    category_name: LocalizedText | None = None
    unit_price: Money
    currency: CurrencyCode
    tax_category: TaxCategory | None = None
    status: MasterStatus
    effective_from: Timestamp | None = None
    version: Count
    last_modified_at: Timestamp
    product_type: ProductType
    modifier_group_ids: list[Code] = Field(default_factory=list)
    combo_components: list[ComboComponent] = Field(default_factory=list)


class ModifierOption(WireModel):
    option_id: Code
    name: LocalizedText
    price_delta: DecimalString
    is_default: bool = False


class ModifierGroup(WireModel):
    group_id: Code
    name: LocalizedText
    min_select: Count
    max_select: Count
    options: list[ModifierOption] = Field(min_length=1)


class ProductsBatch(WriteBatch):
    products: list[Product] = Field(max_length=BATCH_LIMIT)
    modifier_groups: list[ModifierGroup] = Field(default_factory=list)


# --- transaction type mapping (PUT/GET /mappings/transaction-types) -----------------------------

class MappingEntry(WireModel):
    source_code: Code
    source_name: Text | None = None
    standard_code: Code


class MappingsBatch(WriteBatch):
    mappings: list[MappingEntry] = Field(min_length=1)


# --- trade records (POST /trade-records) --------------------------------------------------------
# A batch holds thousands of these objects: as pydantic dataclasses with slots (same fields, same
# validation) they are validated from JSON about a third faster than BaseModels, carry no __dict__ each,
# and orjson writes them natively (the stored document). Their fields take no `= Field(...)` (pydantic
# would move such a field to the front of the schema and of the error list): constraints go in
# Annotated, list defaults in dataclasses.field.
record_part = dataclass(config=WireModel.model_config, slots=True, kw_only=True)


@record_part
class TradeModifier:
    group_id: Code
    option_id: Code
    option_name: Text | None = None
    quantity: DecimalString
    price_delta: Money


@record_part
class TradeItem:
    line_no: PositiveInteger
    parent_line_no: PositiveInteger | None = None
    product_id: Code
    product_name: Text
    product_type: ProductType
    quantity: DecimalString
    unit_price: Money
    discount_amount: Money
    line_amount: Money
    tax_category: TaxCategory | None = None
    modifiers: list[TradeModifier]
    is_voided: bool


@record_part
class Payment:
    payment_id: Code
    payment_type: FreeString50
    payment_method: PaymentMethod
    payment_method_detail: FreeString50 | None = None
    card_last4: Annotated[str, StringConstraints(pattern=r"^[0-9]{4}$")] | None = None
    amount: Money
    tip_amount: Money | None = None
    paid_at: Timestamp
    original_payment_id: Code | None = None


@record_part
class TaxLine:
    tax_code: Code
    tax_rate: DecimalString
    taxable_amount: Money
    tax_amount: Money
    is_inclusive: bool


@record_part
class TradeRecord:
    trade_record_id: Code
    version: PositiveInteger
    store_id: StoreId
    business_date: dt.date
    source_transaction_type: Code
    order_type: OrderType
    order_source: FreeString50 | None = None
    order_source_detail: FreeString50 | None = None
    status: TradeStatus
    opened_at: Timestamp
    closed_at: Timestamp | None = None
    currency: CurrencyCode
    prices_include_tax: bool
    subtotal_amount: Money
    discount_amount: Money
    tax_amount: Money
    service_charge_amount: Money
    tip_amount: Money
    rounding_amount: Money
    total_amount: Money
    original_trade_record_id: Code | None = None
    fiscal_document_no: Code | None = None
    employee_id: Code | None = None
    guest_count: Count | None = None
    member_id: FreeString50 | None = None
    last_modified_at: Timestamp
    items: Annotated[list[TradeItem], Field(min_length=1)]
    payments: list[Payment]
    tax_lines: list[TaxLine] = dataclasses.field(default_factory=list)


class TradeRecordsBatch(WriteBatch):
    store_id: StoreId
    business_date: dt.date
    batch_seq: Annotated[int, Field(ge=1, le=MAX_BATCHES_PER_DAY, description=_INTEGER)]
    trade_records: list[TradeRecord] = Field(min_length=1, max_length=BATCH_LIMIT)


# --- daily close (POST /daily-close) ------------------------------------------------------------

class DailyClose(WriteBatch):
    store_id: StoreId
    business_date: dt.date
    batch_count: Annotated[int, Field(ge=0, le=MAX_BATCHES_PER_DAY, description=_INTEGER)]
    trade_record_count: Count
    item_row_count: Count
    payment_row_count: Count
    net_sales_amount: Money
    tax_amount: Money
    tip_amount: Money
    payment_total_amount: Money
    currency: CurrencyCode
    closed_at: Timestamp


# --- what a resend is answered from --------------------------------------------------------------
# A known batch_id is answered from its marker before the body is validated (docs/decisions.md). These
# read only the batch_id and the store codes, which a resend still has checked; everything else of the
# body is skipped by the parser, so the look-up costs a fraction of a validation.

class ResendKey(WriteBatch):
    def store_ids(self) -> set[str]:
        return set()


class StoreDayKey(ResendKey):
    """POST /trade-records and POST /daily-close."""

    store_id: StoreId

    def store_ids(self) -> set[str]:
        return {self.store_id}


class _StoreCode(WireModel):
    store_id: StoreId | None = None


class StoresKey(ResendKey):
    stores: list[_StoreCode]

    def store_ids(self) -> set[str]:
        return {store.store_id for store in self.stores if store.store_id is not None}


class ProductsKey(ResendKey):
    products: list[_StoreCode]

    def store_ids(self) -> set[str]:
        return {product.store_id for product in self.products if product.store_id is not None}


# --- responses ----------------------------------------------------------------------------------
# What the service answers. The use cases build plain dicts of this shape; these models describe
# them for the OpenAPI document, and the tests validate real responses against them.

class BatchWarning(WireModel):
    code: str = Field(description="Warning code, for example AMOUNT_MISMATCH (see the README's list).")
    path: str = Field(description="Location of the record in the request, for example trade_records[17]; $ for "
                                  "a warning about the whole request (RESEND_BODY_IGNORED, BATCH_ID_REUSED, "
                                  "BATCH_SEQ_REPEATED) or about a member of the body itself.")
    message: str = Field(description="Human-readable; may change; must not be parsed.")
    field: str | None = Field(default=None, description="The field concerned, relative to the record (for "
                              "example total_amount or items[2].line_amount; batch_id or batch_seq for a warning "
                              "about the whole request); absent when the warning is about the whole record.")


class BatchResponse(WireModel):
    batch_id: str = Field(description="The request's batch_id, exactly as sent.", json_schema_extra={"format": "uuid"})
    status: Literal["ACCEPTED", "ALREADY_RECEIVED"]
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
        default_factory=dict, description="The standard type each source code was counted as in this result.")
    records_moved_out: list[MovedOutRecord] = Field(
        default_factory=list, description="Trade records that a later version moved to another store or business "
                                          "date (trade_record_id is unique across the partner's stores and dates), "
                                          "the first 100; they no longer count in this day.")


class DailyCloseStatus(WireModel):
    store_id: str
    business_date: dt.date
    status: Literal["NOT_RECEIVED", "RECEIVED", "MATCHED", "MISMATCHED"]
    checked_at: Timestamp | None
    expected: ControlTotals | None
    actual: ControlTotals | None
    differences: list[str]
    details: ReconciliationDetails | None = None
    reconciliation_due_at: Timestamp | None = Field(
        default=None, description="Only while RECEIVED: when the reconciliation is due (UTC), "
                                  "RECONCILE_DELAY_SECONDS after the latest daily close or the latest change to "
                                  "the day. Poll again after it; the result usually follows within seconds.")


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
