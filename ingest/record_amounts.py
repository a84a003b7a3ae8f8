"""A trade record's amounts in integer minor units (`read_amounts`), read once per record for the
recording rules and the stored row, and checked (places, range) where pydantic-core has not done it.

A batch in its store's currency had the places and the range of every amount checked by the narrowed
validator (`ingest.one_parse.validated_once`): its amounts are then only converted, each one's
digits without the decimal point, without `MoneyReader.read` and through a cache (an accept converts
about 10,000 amounts, of which about a tenth are distinct).
"""

from __future__ import annotations

import functools
import operator

from core.money import RECORD_AMOUNTS
from ingest.amounts import MoneyReader
from ingest.trade_rules.common import LineAmounts, RecordAmounts
from ingest.wire.requests import TradeRecord
from ingest.wire.scalars import MAX_SAFE_INT

_record_totals = operator.attrgetter(*RECORD_AMOUNTS)


def read_amounts(path: str, record: TradeRecord, reader: MoneyReader) -> RecordAmounts:
    """Every amount of a record, each checked (places, range) and turned into minor units once; the
    problems go to reader, in the order of the record's fields. The sum of each payment_type is stored
    as an integer too, so it is bounded like an amount."""
    if reader.checked:
        return _converted_amounts(path, record, reader)
    read = reader.read
    record_totals = [read(getattr(record, name), path, name) for name in RECORD_AMOUNTS]
    items = []
    for i, item in enumerate(record.items):
        at = f"{path}.items[{i}]"
        items.append(
            LineAmounts(
                read(item.unit_price, at, "unit_price"),
                read(item.discount_amount, at, "discount_amount"),
                read(item.line_amount, at, "line_amount"),
            )
        )
        for k, modifier in enumerate(item.modifiers):  # read only to be checked
            read(modifier.price_delta, f"{at}.modifiers[{k}]", "price_delta")
    payments = []
    for i, payment in enumerate(record.payments):
        at = f"{path}.payments[{i}]"
        payments.append(read(payment.amount, at, "amount"))
        read(payment.tip_amount, at, "tip_amount")
    for i, line in enumerate(record.tax_lines):
        at = f"{path}.tax_lines[{i}]"
        read(line.taxable_amount, at, "taxable_amount")
        read(line.tax_amount, at, "tax_amount")
    return _record_amounts(path, record, reader, record_totals, items, payments)


def _converted_amounts(path: str, record: TradeRecord, reader: MoneyReader) -> RecordAmounts:
    """read_amounts of a record whose amounts pydantic-core checked (`reader.checked`): every amount has
    exactly the currency's places (none: no point) and at most 15 digits, so its minor units are its
    digits (`MoneyReader.read` converts them so); the amounts read only to be checked are skipped."""
    record_totals = list(map(_minor_units, _record_totals(record)))
    items = [_line_amounts(item.unit_price, item.discount_amount, item.line_amount) for item in record.items]
    payments = [_minor_units(payment.amount) for payment in record.payments]
    return _record_amounts(path, record, reader, record_totals, items, payments)


# Amounts repeat (a menu's prices, zeros): the benchmark's batch of 500 records has 926 distinct amounts
# in 10,168, and 158 distinct item lines in 2,027. A cache hit costs a third of a conversion, and a line's
# is one hit for its three amounts and their LineAmounts (immutable, so shared). Bounded: they are the
# partner's text.


@functools.lru_cache(maxsize=4096)
def _minor_units(amount: str) -> int:
    """An amount pydantic-core checked, in minor units."""
    return int(amount.replace(".", ""))


@functools.lru_cache(maxsize=4096)
def _line_amounts(unit_price: str, discount_amount: str, line_amount: str) -> LineAmounts:
    """An item line's amounts pydantic-core checked, in minor units."""
    return LineAmounts(_minor_units(unit_price), _minor_units(discount_amount), _minor_units(line_amount))


def _record_amounts(
    path: str,
    record: TradeRecord,
    reader: MoneyReader,
    record_totals: list[int],
    items: list[LineAmounts],
    payments: list[int],
) -> RecordAmounts:
    """The amounts with the sum of each payment_type, whose range is checked (15-digit amounts can add up
    beyond an exact integer)."""
    if len(payments) == 1:  # most records: the sum of its type is the amount, read within the range
        by_type = {record.payments[0].payment_type: payments[0]}
    else:
        by_type = {}
        for payment, amount in zip(record.payments, payments, strict=True):
            by_type[payment.payment_type] = by_type.get(payment.payment_type, 0) + amount
        if len(by_type) < len(payments):  # only a type paid more than once can add up beyond the range
            _check_sums(path, record, reader, by_type)
    # RecordAmounts lists the record totals in the order of RECORD_AMOUNTS
    return RecordAmounts._make([reader.exponent or 0, *record_totals, items, payments, by_type])


def _check_sums(path: str, record: TradeRecord, reader: MoneyReader, by_type: dict[str, int]) -> None:
    for payment_type, total in by_type.items():
        if abs(total) > MAX_SAFE_INT:  # reported at the last payment of the type
            last = max(i for i, payment in enumerate(record.payments) if payment.payment_type == payment_type)
            reader.problem(
                f"{path}.payments[{last}]",
                "amount",
                "with the other payments of its payment_type in "
                f"this record, this amount adds up to more than {reader.largest()} in absolute value",
            )
