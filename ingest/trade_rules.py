"""The recording rules of trade records (spec 4.7) that warn without rejecting.

A record that breaks one of these rules is still stored; the 202 response lists one warning per broken
rule, located at the record (path `trade_records[3]`, as the specification shows it) with the field
concerned relative to the record (field `items[1].line_amount`). Every rule is a small pure
function over the parsed record; `record_warnings` runs them all in a fixed order (the order of the
rules below, then the order of lines and payments), so the same record always gets the same list.

Money is compared in integer minor units: the caller reads every amount once, checking its places, and
hands the rules a `RecordAmounts`. Quantities are free decimal strings, so a line's quantity x unit_price
is computed exactly with integers scaled by the quantity's own places. Messages are built only for a
rule that fails.

Messages name the expected and the actual amounts but never echo member_id or free text.

Decisions the specification leaves open:

- Voided lines (`is_voided`, deleted before checkout) take no part in the money rules (line amount,
  signs, exchange sides): POS systems record their amounts differently and they carry no revenue. They
  are still checked as combo children, which is about the structure of the record.
- Zero carries no direction: a sign rule never flags a zero quantity or amount (a combo child of a
  returned combo, a free or fully discounted item, a zero tip).
- In RETURN and REFUND transactions every transaction amount except rounding_amount (which may go
  either way) is expected negative or zero, as spec 4.7 says ("subtotal_amount, discount_amount,
  tax_amount, total_amount and the rest").
- A record that refers to an earlier transaction (original_trade_record_id set, or a RETURN or REFUND)
  may keep the business date of that transaction (spec 4.7, refunds rule 1), so its business date is
  not derived from opened_at.
- closed_at is null while a transaction is OPEN (spec 2): a warning, not an error, as the validation
  table of spec 4.7 does not list it. The converse (a closed status without closed_at) is not warned
  about: the field is optional, HQ derives nothing from it, and a POS that records no closing time
  could not act on a warning repeated on every record.
"""

from __future__ import annotations

import datetime as dt
import functools
import zoneinfo
from collections.abc import Iterator
from decimal import Decimal
from typing import NamedTuple

from core.money import format_minor_units, places_of, to_minor_units
from ingest.wire.requests import TradeItem, TradeRecord
from ingest.wire.responses import BatchWarning

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
    record (`ingest.trade_records.read_amounts`). Field names are the wire's."""

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


def record_warnings(
    path: str,
    record: TradeRecord,
    amounts: RecordAmounts,
    standard_type: str | None,
    known_payment_types: set[str],
    store_time_zone: str | None,
    workday_start: str | None,
) -> list[BatchWarning]:
    """Every recording-rule warning of one record, in a stable order.

    path: where the record sits in the request ("trade_records[17]"); amounts: the record's amounts
    in minor units; standard_type: the HQ type the partner's mapping gives the record's
    source_transaction_type (None when unmapped: no sign rules); known_payment_types: payment types
    whose direction HQ knows; store_time_zone, workday_start: from the store master (None when the
    store is unknown: no business date rule).
    """
    return [
        *amount_identity(path, record, amounts),
        *combo_children(path, record, amounts),
        *line_amounts(path, record, amounts),
        *transaction_signs(path, record, amounts, standard_type),
        *payment_amounts(path, record, amounts),
        *payment_types_without_direction(path, record, known_payment_types),
        *business_date(path, record, standard_type, store_time_zone, workday_start),
        *closed_while_open(path, record),
    ]


# --- amounts --------------------------------------------------------------------------------------


def amount_identity(path: str, record: TradeRecord, amounts: RecordAmounts) -> list[BatchWarning]:
    """AMOUNT_MISMATCH: total = subtotal - discount (+ tax when added on top) + service + tip + rounding."""
    subtotal, discount, tax = amounts.subtotal_amount, amounts.discount_amount, amounts.tax_amount
    service, tip, rounding = amounts.service_charge_amount, amounts.tip_amount, amounts.rounding_amount
    tax_added = 0 if record.prices_include_tax else tax
    expected = subtotal - discount + tax_added + service + tip + rounding
    if amounts.total_amount == expected:
        return []

    def text(value: int) -> str:
        return format_minor_units(value, amounts.exponent)

    if record.prices_include_tax:
        formula = (
            f"subtotal_amount {text(subtotal)} - discount_amount {text(discount)} "
            f"+ service_charge_amount {text(service)} + tip_amount {text(tip)} "
            f"+ rounding_amount {text(rounding)}"
        )
        basis = "prices include tax (prices_include_tax is true), so tax_amount is not added"
    else:
        formula = (
            f"subtotal_amount {text(subtotal)} - discount_amount {text(discount)} "
            f"+ tax_amount {text(tax)} + service_charge_amount {text(service)} "
            f"+ tip_amount {text(tip)} + rounding_amount {text(rounding)}"
        )
        basis = "tax is added on top (prices_include_tax is false)"
    return [
        BatchWarning(
            AMOUNT_MISMATCH,
            path,
            f"total_amount is {text(amounts.total_amount)} but {formula} = {text(expected)}; {basis}",
            field="total_amount",
        )
    ]


def line_amounts(path: str, record: TradeRecord, amounts: RecordAmounts) -> list[BatchWarning]:
    """LINE_AMOUNT_MISMATCH: line_amount = quantity x unit_price - discount_amount, for each line.

    The product is computed exactly. When it has more places than the currency (quantity 0.333 x
    unit_price 1.00 = 0.333), line_amount may be either neighbouring amount (0.33 or 0.34): the
    specification names no rounding mode and POS systems round half-up, half-even or down, so any
    line_amount less than one minor unit away from the exact value is accepted; a larger difference is
    a mismatch. When the exact value fits the currency's places, line_amount must equal it.

    A combo child line has a zero price, so its line_amount is 0 - discount_amount whatever its
    unit_price says (a non-zero unit_price is COMBO_CHILD_INVALID, not reported twice). Voided lines
    are not checked.
    """
    warnings = []
    for index, (item, money) in enumerate(zip(record.items, amounts.items, strict=True)):
        if item.is_voided:
            continue
        message = _line_amount_problem(item, money, amounts.exponent)
        if message is not None:
            warnings.append(BatchWarning(LINE_AMOUNT_MISMATCH, path, message, field=f"items[{index}].line_amount"))
    return warnings


def _line_amount_problem(item: TradeItem, money: LineAmounts, exponent: int) -> str | None:
    line, discount = money.line_amount, money.discount_amount
    if _is_combo_child(item):
        expected = -discount
        if line == expected:
            return None
        return (
            f"line_amount is {_money(line, exponent)} but a combo child line has a zero price, so "
            f"line_amount = 0 - discount_amount {_money(discount, exponent)} = "
            f"{_money(expected, exponent)}; the combo's price belongs on the combo line"
        )
    # Everything in units of 10^-(exponent + quantity places), so that the arithmetic is exact.
    quantity_places = places_of(item.quantity)
    scale = 10**quantity_places
    quantity = to_minor_units(item.quantity, quantity_places)
    exact = quantity * money.unit_price - discount * scale
    if abs(line * scale - exact) < scale:
        return None
    expected_text = _scaled_decimal_text(exact, exponent + quantity_places, exponent)
    message = (
        f"line_amount is {item.line_amount} but quantity {item.quantity} x unit_price {item.unit_price} "
        f"- discount_amount {item.discount_amount} = {expected_text}"
    )
    if exact % scale:
        low = exact // scale
        places = f"{exponent} decimal places" if exponent else "whole units"
        message += (
            f", so line_amount is {_money(low, exponent)} or {_money(low + 1, exponent)} (the exact value "
            f"rounded to {places} either way)"
        )
    return message


# --- combos ---------------------------------------------------------------------------------------


def combo_children(path: str, record: TradeRecord, amounts: RecordAmounts) -> list[BatchWarning]:
    """COMBO_CHILD_INVALID: a child line points at a COMBO line of the record and has a zero unit_price."""
    children = [index for index, item in enumerate(record.items) if _is_combo_child(item)]
    if not children:
        return []
    lines: dict[int, TradeItem] = {}
    for item in record.items:
        lines.setdefault(item.line_no, item)
    warnings = []
    for index in children:
        item = record.items[index]
        parent_field = f"items[{index}].parent_line_no"
        parent = None if item.parent_line_no is None else lines.get(item.parent_line_no)
        if item.parent_line_no == item.line_no:
            warnings.append(
                BatchWarning(
                    COMBO_CHILD_INVALID,
                    path,
                    f"parent_line_no {item.parent_line_no} is this line's own line_no; a combo "
                    "child line points at its combo line",
                    field=parent_field,
                )
            )
        elif parent is None:
            warnings.append(
                BatchWarning(
                    COMBO_CHILD_INVALID,
                    path,
                    f"parent_line_no {item.parent_line_no} matches no line_no of this record; a "
                    "combo child line points at its combo line",
                    field=parent_field,
                )
            )
        elif parent.product_type != "COMBO":
            warnings.append(
                BatchWarning(
                    COMBO_CHILD_INVALID,
                    path,
                    f"parent_line_no {item.parent_line_no} points at a line whose product_type is "
                    f"{parent.product_type}, not COMBO",
                    field=parent_field,
                )
            )
        if amounts.items[index].unit_price != 0:
            warnings.append(
                BatchWarning(
                    COMBO_CHILD_INVALID,
                    path,
                    f"a combo child line has a zero unit_price (the revenue sits on the combo "
                    f"line); this one has {item.unit_price}",
                    field=f"items[{index}].unit_price",
                )
            )
    return warnings


def _is_combo_child(item: TradeItem) -> bool:
    return item.parent_line_no is not None


# --- signs ----------------------------------------------------------------------------------------


def transaction_signs(
    path: str, record: TradeRecord, amounts: RecordAmounts, standard_type: str | None
) -> list[BatchWarning]:
    """The signs the standard type asks for; nothing for an unmapped type (its meaning is unknown yet)."""
    if standard_type in NEGATIVE_TYPES:
        return negative_signs(path, record, amounts, standard_type)
    if standard_type == "SALE":
        return sale_quantities(path, record)
    if standard_type == "EXCHANGE":
        return exchange_sides(path, record)
    return []


def negative_signs(path: str, record: TradeRecord, amounts: RecordAmounts, standard_type: str) -> list[BatchWarning]:
    """SIGN_EXPECTED_NEGATIVE: RETURN and REFUND lines and amounts are negative (zero has no sign)."""
    warnings = []
    for index, item in _counted_lines(record):
        if Decimal(item.quantity) > 0:
            warnings.append(
                BatchWarning(
                    SIGN_EXPECTED_NEGATIVE,
                    path,
                    f"item quantities of a {standard_type} transaction are negative; this line "
                    f"has quantity {item.quantity}",
                    field=f"items[{index}].quantity",
                )
            )
        line = amounts.items[index].line_amount
        if line > 0:
            warnings.append(
                BatchWarning(
                    SIGN_EXPECTED_NEGATIVE,
                    path,
                    f"line amounts of a {standard_type} transaction are negative; this line has "
                    f"line_amount {_money(line, amounts.exponent)}",
                    field=f"items[{index}].line_amount",
                )
            )
    for name in NEGATIVE_AMOUNT_FIELDS:
        amount = getattr(amounts, name)
        if amount > 0:
            warnings.append(
                BatchWarning(
                    SIGN_EXPECTED_NEGATIVE,
                    path,
                    f"{name} of a {standard_type} transaction is negative or zero; it is "
                    f"{_money(amount, amounts.exponent)}",
                    field=name,
                )
            )
    return warnings


def sale_quantities(path: str, record: TradeRecord) -> list[BatchWarning]:
    """SIGN_EXPECTED_POSITIVE: a SALE sells; returned items belong in a RETURN, REFUND or EXCHANGE."""
    return [
        BatchWarning(
            SIGN_EXPECTED_POSITIVE,
            path,
            f"item quantities of a SALE transaction are positive; this line has quantity {item.quantity}. "
            "Send returned items as a RETURN, REFUND or EXCHANGE transaction",
            field=f"items[{index}].quantity",
        )
        for index, item in _counted_lines(record)
        if Decimal(item.quantity) < 0
    ]


def exchange_sides(path: str, record: TradeRecord) -> list[BatchWarning]:
    """EXCHANGE_LINES_ONE_SIDED: an exchange returns something (negative) and gives something (positive)."""
    returned = sum(1 for _, item in _counted_lines(record) if Decimal(item.quantity) < 0)
    given = sum(1 for _, item in _counted_lines(record) if Decimal(item.quantity) > 0)
    if returned and given:
        return []
    return [
        BatchWarning(
            EXCHANGE_LINES_ONE_SIDED,
            path,
            "an EXCHANGE has at least one returned line (negative quantity) and one new line (positive "
            f"quantity); this one has {returned} returned and {given} new lines. Without an exchange, "
            "send a RETURN and a SALE",
            field="items",
        )
    ]


def _counted_lines(record: TradeRecord) -> Iterator[tuple[int, TradeItem]]:
    return ((index, item) for index, item in enumerate(record.items) if not item.is_voided)


# --- payments -------------------------------------------------------------------------------------


def payment_amounts(path: str, record: TradeRecord, amounts: RecordAmounts) -> list[BatchWarning]:
    """PAYMENT_AMOUNT_NEGATIVE: amounts are positive, the direction comes from payment_type."""
    warnings = []
    for index, (payment, amount) in enumerate(zip(record.payments, amounts.payments, strict=True)):
        if amount < 0 and payment.payment_type != SIGNED_PAYMENT_TYPE:
            warnings.append(
                BatchWarning(
                    PAYMENT_AMOUNT_NEGATIVE,
                    path,
                    f"payment amounts are positive and payment_type gives the direction (REFUND "
                    f"for money given back); only ADJUSTMENT may be negative. This amount is "
                    f"{_money(amount, amounts.exponent)}",
                    field=f"payments[{index}].amount",
                )
            )
    return warnings


def payment_types_without_direction(
    path: str, record: TradeRecord, known_payment_types: set[str]
) -> list[BatchWarning]:
    """PAYMENT_TYPE_UNKNOWN_DIRECTION: HQ counts a payment only once it knows its type's direction."""
    return [
        BatchWarning(
            PAYMENT_TYPE_UNKNOWN_DIRECTION,
            path,
            "HQ does not know whether this payment_type brings money in or gives it back, so the payment is "
            "left out of payment totals until HQ records its direction; tell HQ what the value means",
            field=f"payments[{index}].payment_type",
        )
        for index, payment in enumerate(record.payments)
        if payment.payment_type not in known_payment_types
    ]


# --- business date --------------------------------------------------------------------------------


def business_date(
    path: str, record: TradeRecord, standard_type: str | None, store_time_zone: str | None, workday_start: str | None
) -> list[BatchWarning]:
    """BUSINESS_DATE_MISMATCH: business_date is the local date of opened_at, minus a day before workday_start.

    Skipped when the store master is unknown, and for records that may keep the business date of an
    earlier transaction (original_trade_record_id set, or a RETURN or REFUND).
    """
    if store_time_zone is None or workday_start is None:
        return []
    if record.original_trade_record_id is not None or standard_type in NEGATIVE_TYPES:
        return []
    local = record.opened_at.astimezone(zoneinfo.ZoneInfo(store_time_zone))
    expected = derived_business_date(local, workday_start)
    if expected == record.business_date:
        return []
    before = "before" if local.time() < _clock(workday_start) else "at or after"
    return [
        BatchWarning(
            BUSINESS_DATE_MISMATCH,
            path,
            f"opened_at is {local:%Y-%m-%d %H:%M} in the store's time zone {store_time_zone}, {before} "
            f"workday_start {workday_start}, so the business date is {expected.isoformat()}; "
            f"business_date is {record.business_date.isoformat()}",
            field="business_date",
        )
    ]


def derived_business_date(local: dt.datetime, workday_start: str) -> dt.date:
    """The business date of a store-local time: its date, or the day before when before workday_start."""
    if local.replace(tzinfo=None).time() < _clock(workday_start):
        return local.date() - dt.timedelta(days=1)
    return local.date()


@functools.cache
def _clock(hh_mm: str) -> dt.time:
    hours, minutes = hh_mm.split(":")
    return dt.time(int(hours), int(minutes))


# --- status -----------------------------------------------------------------------------------------


def closed_while_open(path: str, record: TradeRecord) -> list[BatchWarning]:
    """CLOSED_AT_WHILE_OPEN: closed_at is null while a transaction is OPEN (spec 2, TradeRecord)."""
    if record.status != "OPEN" or record.closed_at is None:
        return []
    return [
        BatchWarning(
            CLOSED_AT_WHILE_OPEN,
            path,
            "closed_at is set but status is OPEN; closed_at stays null while a transaction is OPEN. "
            "Send closed_at once the transaction closes, with the status it closed with",
            field="closed_at",
        )
    ]


# --- formatting -----------------------------------------------------------------------------------


def _money(minor: int, exponent: int) -> str:
    return format_minor_units(minor, exponent)


def _scaled_decimal_text(value: int, places: int, exponent: int) -> str:
    """An exact scaled integer as a decimal, without trailing zeros beyond the currency's places."""
    text = format_minor_units(value, places)
    if places > exponent:
        whole, _, fraction = text.partition(".")
        fraction = fraction[:exponent] + fraction[exponent:].rstrip("0")
        text = f"{whole}.{fraction}" if fraction else whole
    return text
