"""The money rules of a trade record: the amount identity, each line's amount, payment amounts and
payment types whose direction HQ does not know (ingest/trade_rules/__init__.py says how rules work)."""

from __future__ import annotations

from core.money import format_minor_units, places_of
from ingest.trade_rules.common import (
    AMOUNT_MISMATCH,
    LINE_AMOUNT_MISMATCH,
    PAYMENT_AMOUNT_NEGATIVE,
    PAYMENT_TYPE_UNKNOWN_DIRECTION,
    SIGNED_PAYMENT_TYPE,
    LineAmounts,
    RecordAmounts,
    amount_text,
    is_combo_child,
    quantity_of,
)
from ingest.wire.requests import TradeItem, TradeRecord
from ingest.wire.responses import BatchWarning

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
    lines = amounts.items
    for index, item in enumerate(record.items):  # money by index: a third cheaper than zip in enumerate
        if item.is_voided:
            continue
        money = lines[index]
        # Everything in units of 10^-(exponent + quantity places), so that the arithmetic is exact.
        if item.parent_line_no is not None:  # common.is_combo_child, written out (this runs on every line)
            exact, scale = -money.discount_amount, 1  # a zero price
        elif item.quantity == "1":  # the usual line (nine in ten), without looking its quantity up
            exact, scale = money.unit_price - money.discount_amount, 1
        else:
            quantity, scale = quantity_of(item.quantity)
            exact = quantity * money.unit_price - money.discount_amount * scale
        if abs(money.line_amount * scale - exact) >= scale:
            message = _line_amount_problem(item, money, amounts.exponent, exact, scale)
            warnings.append(BatchWarning(LINE_AMOUNT_MISMATCH, path, message, field=f"items[{index}].line_amount"))
    return warnings


def _line_amount_problem(item: TradeItem, money: LineAmounts, exponent: int, exact: int, scale: int) -> str:
    """The message of a line whose line_amount is a minor unit or more away from `exact` / `scale`."""
    line, discount = money.line_amount, money.discount_amount
    if is_combo_child(item):
        return (
            f"line_amount is {amount_text(line, exponent)} but a combo child line has a zero price, so "
            f"line_amount = 0 - discount_amount {amount_text(discount, exponent)} = "
            f"{amount_text(exact, exponent)}; the combo's price belongs on the combo line"
        )
    quantity_places = places_of(item.quantity)
    expected_text = _scaled_decimal_text(exact, exponent + quantity_places, exponent)
    message = (
        f"line_amount is {item.line_amount} but quantity {item.quantity} x unit_price {item.unit_price} "
        f"- discount_amount {item.discount_amount} = {expected_text}"
    )
    if exact % scale:
        low = exact // scale
        places = f"{exponent} decimal places" if exponent else "whole units"
        message += (
            f", so line_amount is {amount_text(low, exponent)} or {amount_text(low + 1, exponent)} (the exact value "
            f"rounded to {places} either way)"
        )
    return message


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
                    f"{amount_text(amount, amounts.exponent)}",
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


# --- formatting -----------------------------------------------------------------------------------


def _scaled_decimal_text(value: int, places: int, exponent: int) -> str:
    """An exact scaled integer as a decimal, without trailing zeros beyond the currency's places."""
    text = format_minor_units(value, places)
    if places > exponent:
        whole, _, fraction = text.partition(".")
        fraction = fraction[:exponent] + fraction[exponent:].rstrip("0")
        text = f"{whole}.{fraction}" if fraction else whole
    return text
