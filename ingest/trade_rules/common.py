"""What the recording rules of trade records share: the warning codes, the record's amounts in minor
units (read once by ingest.record_amounts.read_amounts), quantities as integers, which lines are combo
children, and amounts as text for messages."""

from __future__ import annotations

import functools
from typing import NamedTuple

from core.money import format_minor_units, places_of, to_minor_units
from ingest.wire.requests import TradeItem

AMOUNT_MISMATCH = "AMOUNT_MISMATCH"
LINE_AMOUNT_MISMATCH = "LINE_AMOUNT_MISMATCH"
COMBO_CHILD_INVALID = "COMBO_CHILD_INVALID"
SIGN_EXPECTED_NEGATIVE = "SIGN_EXPECTED_NEGATIVE"
SIGN_EXPECTED_POSITIVE = "SIGN_EXPECTED_POSITIVE"
EXCHANGE_LINES_ONE_SIDED = "EXCHANGE_LINES_ONE_SIDED"
PAYMENT_AMOUNT_NEGATIVE = "PAYMENT_AMOUNT_NEGATIVE"
PAYMENT_TYPE_UNKNOWN_DIRECTION = "PAYMENT_TYPE_UNKNOWN_DIRECTION"
BUSINESS_DATE_MISMATCH = "BUSINESS_DATE_MISMATCH"
CLOSED_AT_WHILE_OPEN = "CLOSED_AT_WHILE_OPEN"
SOURCE_TYPE_UNMAPPED = "SOURCE_TYPE_UNMAPPED"
VOIDED_COUNTED_BY_TYPE = "VOIDED_COUNTED_BY_TYPE"

# What each warning code means, for documentation and for anyone reading a response.
WARNING_CODES = {
    AMOUNT_MISMATCH: "total_amount differs from the amount identity of spec 4.7",
    LINE_AMOUNT_MISMATCH: "an item's line_amount differs from quantity x unit_price - discount_amount",
    COMBO_CHILD_INVALID: "a combo child line points at no combo line, or its unit_price is not zero",
    SIGN_EXPECTED_NEGATIVE: "a quantity or amount of a RETURN or REFUND transaction is positive",
    SIGN_EXPECTED_POSITIVE: "an item quantity of a SALE transaction is negative",
    EXCHANGE_LINES_ONE_SIDED: "an EXCHANGE lacks a returned (negative) or a new (positive) line",
    PAYMENT_AMOUNT_NEGATIVE: "a payment amount is negative although its payment_type is not ADJUSTMENT",
    PAYMENT_TYPE_UNKNOWN_DIRECTION: "HQ does not know the direction of a payment_type; the payment is "
    "left out of payment totals until HQ records it",
    BUSINESS_DATE_MISMATCH: "business_date differs from the one opened_at gives in the store's time zone "
    "and workday_start",
    CLOSED_AT_WHILE_OPEN: "closed_at is set although status is OPEN (closed_at is null while a transaction is OPEN)",
    SOURCE_TYPE_UNMAPPED: "the mapping does not name the source_transaction_type: the record counts in the counts "
    "but not in net sales until it is mapped; HQ re-maps it automatically when the mapping arrives",
    VOIDED_COUNTED_BY_TYPE: "a VOIDED record's source type maps to a revenue type: HQ counts by standard type, "
    "not status, so its amounts and payments count",
}

NEGATIVE_TYPES = frozenset({"RETURN", "REFUND"})
# Transaction amounts that are negative in RETURN and REFUND transactions; rounding may go either way.
NEGATIVE_AMOUNT_FIELDS = (
    "subtotal_amount",
    "discount_amount",
    "tax_amount",
    "service_charge_amount",
    "tip_amount",
    "total_amount",
)
SIGNED_PAYMENT_TYPE = "ADJUSTMENT"


class LineAmounts(NamedTuple):
    """The amounts of one item line, in minor units."""

    unit_price: int
    discount_amount: int
    line_amount: int


class RecordAmounts(NamedTuple):
    """The amounts of one record that the rules and the stored row use, in minor units; read once per
    record (`ingest.record_amounts.read_amounts`). Field names are the wire's."""

    exponent: int  # the currency's minor-unit places, for messages
    subtotal_amount: int
    discount_amount: int
    tax_amount: int
    service_charge_amount: int
    tip_amount: int
    rounding_amount: int
    total_amount: int
    items: list[LineAmounts]  # in the order of record.items
    payments: list[int]  # amount of each payment, in the order of record.payments
    payments_by_type: dict[str, int]  # payment_type -> sum of its amounts (direction not applied)


class Quantity(NamedTuple):
    """A quantity (a decimal string) as the integer units / scale, scale = 10**places: the line rules
    compute exactly with integers, and a quantity's sign is its units'."""

    units: int
    scale: int


@functools.lru_cache(maxsize=1024)
def quantity_of(text: str) -> Quantity:
    # Quantities repeat ("1", "2", "-1", "0.5"): each is worked out once (a bounded cache, as they are
    # the partner's text).
    places = places_of(text)
    return Quantity(to_minor_units(text, places), 10**places)


def is_combo_child(item: TradeItem) -> bool:
    return item.parent_line_no is not None


def amount_text(minor: int, exponent: int) -> str:
    return format_minor_units(minor, exponent)
