"""The bodies partners send (PUT /stores, PUT /products, PUT /mappings/transaction-types,
POST /trade-records, POST /daily-close), parsed straight from the request bytes (`model_validate_json`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Annotated
from uuid import UUID

from pydantic import Field
from pydantic.dataclasses import dataclass

from ingest.wire.scalars import (
    ABSENT_WHEN_EMPTY,
    BATCH_LIMIT,
    INTEGER_DESCRIPTION,
    MAX_BATCHES_PER_DAY,
    WARNED_WHEN_EMPTY,
    BatchId,
    CardLast4,
    ClockTime,
    Code,
    Count,
    CountryCode,
    CurrencyCode,
    DecimalString,
    FreeString50,
    LanguageTag,
    LocalizedText,
    MasterStatus,
    Money,
    OrderType,
    PaymentMethod,
    PositiveInteger,
    ProductType,
    StandardCode,
    StoreId,
    TaxCategory,
    Text,
    Timestamp,
    TimeZone,
    TradeStatus,
    WireModel,
)

# Optional fields, which read "" as absent (ingest/wire/scalars.py EmptyAsAbsent): free strings and codes
# without a word, values of a given form with a warning.
OptionalCode = Annotated[Code | None, ABSENT_WHEN_EMPTY]
OptionalStoreId = Annotated[StoreId | None, ABSENT_WHEN_EMPTY]
OptionalText = Annotated[Text | None, ABSENT_WHEN_EMPTY]
OptionalFreeString50 = Annotated[FreeString50 | None, ABSENT_WHEN_EMPTY]
OptionalMoney = Annotated[Money | None, WARNED_WHEN_EMPTY]
OptionalTimestamp = Annotated[Timestamp | None, WARNED_WHEN_EMPTY]
OptionalTaxCategory = Annotated[TaxCategory | None, WARNED_WHEN_EMPTY]
OptionalCardLast4 = Annotated[CardLast4 | None, WARNED_WHEN_EMPTY]


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
    substitute_group_id: OptionalCode = None


class Product(WireModel):
    product_id: Code
    store_id: OptionalStoreId = None
    sku: OptionalCode = None
    name: LocalizedText
    category_id: OptionalCode = None
    category_name: Annotated[LocalizedText | None, ABSENT_WHEN_EMPTY] = None
    unit_price: Money
    currency: CurrencyCode
    tax_category: OptionalTaxCategory = None
    status: MasterStatus
    effective_from: OptionalTimestamp = None
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
    source_name: OptionalText = None
    standard_code: StandardCode


class MappingsBatch(WriteBatch):
    mappings: list[MappingEntry] = Field(min_length=1)


# --- trade records (POST /trade-records) --------------------------------------------------------
# A batch holds thousands of these objects: as pydantic dataclasses (same fields, same validation) they
# are validated from JSON about a third faster than BaseModels, and orjson writes them natively (the
# stored document). Without slots: orjson reads a dataclass's __dict__ in one step but a slotted one field
# by field, which made the stored documents three times slower to write (decision 0021).
# Their fields take no `= Field(...)` (pydantic would move such a field to the front of the schema and of
# the error list): constraints go in Annotated, list defaults in dataclasses.field.
record_part = dataclass(config=WireModel.model_config, kw_only=True)


@record_part
class TradeModifier:
    group_id: Code
    option_id: Code
    option_name: OptionalText = None
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
    tax_category: OptionalTaxCategory = None
    modifiers: list[TradeModifier]
    is_voided: bool


@record_part
class Payment:
    payment_id: Code
    payment_type: FreeString50
    payment_method: PaymentMethod
    payment_method_detail: OptionalFreeString50 = None
    card_last4: OptionalCardLast4 = None
    amount: Money
    tip_amount: OptionalMoney = None
    paid_at: Timestamp
    original_payment_id: OptionalCode = None


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
    order_source: OptionalFreeString50 = None
    order_source_detail: OptionalFreeString50 = None
    status: TradeStatus
    opened_at: Timestamp
    closed_at: OptionalTimestamp = None
    currency: CurrencyCode
    prices_include_tax: bool
    subtotal_amount: Money
    discount_amount: Money
    tax_amount: Money
    service_charge_amount: Money
    tip_amount: Money
    rounding_amount: Money
    total_amount: Money
    original_trade_record_id: OptionalCode = None
    fiscal_document_no: OptionalCode = None
    employee_id: OptionalCode = None
    guest_count: Count | None = None
    member_id: OptionalFreeString50 = None
    last_modified_at: Timestamp
    items: Annotated[list[TradeItem], Field(min_length=1)]
    payments: list[Payment]
    tax_lines: list[TaxLine] = dataclasses.field(default_factory=list)


# A batch of trade records as the use case gets it holds, in trade_records, msgspec Structs generated field for
# field from the dataclasses above (ingest/wire/record_structs.py), whichever reader read it (ingest/one_parse.py
# `validated_once`, or `read_slow_way`, which copies the slow way's dataclasses into them): same names, order,
# defaults and values; code that reads a record reads its fields by name (decision 0020).
class TradeRecordsBatch(WriteBatch):
    store_id: StoreId
    business_date: dt.date
    batch_seq: Annotated[int, Field(ge=1, le=MAX_BATCHES_PER_DAY, description=INTEGER_DESCRIPTION)]
    trade_records: list[TradeRecord] = Field(min_length=1, max_length=BATCH_LIMIT)


# --- daily close (POST /daily-close) ------------------------------------------------------------


class DailyClose(WriteBatch):
    store_id: StoreId
    business_date: dt.date
    batch_count: Annotated[int, Field(ge=0, le=MAX_BATCHES_PER_DAY, description=INTEGER_DESCRIPTION)]
    trade_record_count: Count
    item_row_count: Count
    payment_row_count: Count
    net_sales_amount: Money
    tax_amount: Money
    tip_amount: Money
    payment_total_amount: Money
    currency: CurrencyCode
    closed_at: Timestamp
