"""The line rules of a trade record: combo children, and the signs a transaction type expects of its
lines and amounts (ingest/trade_rules/__init__.py says how rules work)."""

from __future__ import annotations

from collections.abc import Iterator

from ingest.trade_rules.common import (
    COMBO_CHILD_INVALID,
    EXCHANGE_LINES_ONE_SIDED,
    NEGATIVE_AMOUNT_FIELDS,
    NEGATIVE_TYPES,
    SIGN_EXPECTED_NEGATIVE,
    SIGN_EXPECTED_POSITIVE,
    RecordAmounts,
    amount_text,
    quantity_of,
)
from ingest.wire.requests import TradeItem, TradeRecord
from ingest.wire.responses import BatchWarning

# --- combos ---------------------------------------------------------------------------------------


def combo_children(path: str, record: TradeRecord, amounts: RecordAmounts) -> list[BatchWarning]:
    """COMBO_CHILD_INVALID: a child line points at a COMBO line of the record and has a zero unit_price."""
    items = record.items
    lines: dict[int, TradeItem] | None = None  # line_no -> its first line, built at the record's first child
    warnings = []
    for index, item in enumerate(items):
        parent_line_no = item.parent_line_no
        if parent_line_no is None:  # common.is_combo_child, written out: a call per line was half of this rule
            continue
        if lines is None:
            lines = {}
            for line in items:
                lines.setdefault(line.line_no, line)
        parent = lines.get(parent_line_no)
        problem = None  # its message; the fields' paths are built only for a warning (most children are valid)
        if parent_line_no == item.line_no:
            problem = (
                f"parent_line_no {parent_line_no} is this line's own line_no; a combo child line points at its "
                "combo line"
            )
        elif parent is None:
            problem = (
                f"parent_line_no {parent_line_no} matches no line_no of this record; a combo child line points "
                "at its combo line"
            )
        elif parent.product_type != "COMBO":
            problem = (
                f"parent_line_no {parent_line_no} points at a line whose product_type is {parent.product_type}, "
                "not COMBO"
            )
        if problem is not None:
            warnings.append(BatchWarning(COMBO_CHILD_INVALID, path, problem, field=f"items[{index}].parent_line_no"))
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
        if quantity_of(item.quantity).units > 0:
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
                    f"line_amount {amount_text(line, amounts.exponent)}",
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
                    f"{amount_text(amount, amounts.exponent)}",
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
        # the lines of _counted_lines, without a generator: most transactions are sales. A negative quantity
        # starts with "-" (DecimalString): the usual line is told by its first character, without a look-up.
        for index, item in enumerate(record.items)
        if item.quantity[0] == "-" and quantity_of(item.quantity).units < 0 and not item.is_voided
    ]


def exchange_sides(path: str, record: TradeRecord) -> list[BatchWarning]:
    """EXCHANGE_LINES_ONE_SIDED: an exchange returns something (negative) and gives something (positive)."""
    returned = sum(1 for _, item in _counted_lines(record) if quantity_of(item.quantity).units < 0)
    given = sum(1 for _, item in _counted_lines(record) if quantity_of(item.quantity).units > 0)
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
