"""A record's amounts in minor units (ingest/record_amounts.py): the conversion of a batch whose amounts
pydantic-core checked (`MoneyReader.checked`) gives exactly what the reader's checking path gives, amounts
and problems, in every exponent, for negative, zero and 15-digit amounts and for payment sums beyond
an exact integer."""

from __future__ import annotations

import orjson
import pytest

from core.money import format_minor_units
from ingest.amounts import MoneyReader
from ingest.one_parse import read_batch, validated_once
from ingest.record_amounts import read_amounts
from ingest.wire.requests import TradeRecordsBatch
from tests.trade_payloads import Line, Pay, trade_batch, trade_record

DAY = "2026-11-20"
LARGEST_15_DIGITS = 10**15 - 1


def checked_and_read(body: dict, currency: str, exponent: int):
    """(amounts, problems) of every record, converted after pydantic-core's check and read by the
    checking reader."""
    raw_body = orjson.dumps(body)
    read = read_batch(TradeRecordsBatch, raw_body)
    assert read is not None
    exact = validated_once(TradeRecordsBatch, raw_body, read, exponent)
    assert exact is not None
    converted, read = [], []
    for index, record in enumerate(exact.trade_records):
        path = f"trade_records[{index}]"
        checked = MoneyReader(currency, checked_exponent=exponent)
        assert checked.checked
        converted.append((read_amounts(path, record, checked), checked.problems))
        reader = MoneyReader(currency)
        assert not reader.checked
        read.append((read_amounts(path, record, reader), reader.problems))
    return converted, read


@pytest.mark.parametrize(("currency", "exponent"), [("USD", 2), ("JPY", 0), ("KWD", 3), ("CLF", 4)])
def test_converted_amounts_are_the_checking_readers(currency, exponent):
    lines = [
        Line("P-BIG", 1, LARGEST_15_DIGITS // 4),
        Line("P-FREE", 1, 0),
        Line("P-CENT", 3, 1, discount=1),
        Line("P-BACK", -1, 505),
    ]
    records = [
        trade_record("S1", DAY, lines, currency=currency, exponent=exponent, tax=130, tip=7, rounding=-3),
        trade_record(
            "S1",
            DAY,
            [Line("P-RETURN", -2, 250)],
            payments=[Pay(500, "REFUND"), Pay(-5, "ADJUSTMENT"), Pay(5, "ADJUSTMENT")],
            currency=currency,
            exponent=exponent,
            order_discount=-10,
        ),
    ]
    converted, read = checked_and_read(trade_batch("S1", DAY, records), currency, exponent)
    assert converted == read
    assert converted[0][0].items[0].unit_price == LARGEST_15_DIGITS // 4
    assert converted[1][0].payments_by_type == {"REFUND": 500, "ADJUSTMENT": 0}


@pytest.mark.parametrize(("currency", "exponent"), [("USD", 2), ("JPY", 0)])
def test_payment_sums_beyond_an_exact_integer_are_problems_on_both_paths(currency, exponent):
    # ten amounts of 15 digits each pass pydantic-core's check, their sum does not fit 2**53 - 1
    payments = [Pay(LARGEST_15_DIGITS, "CARD") for _ in range(10)] + [Pay(1, "CASH")]
    record = trade_record("S1", DAY, [Line("P", 1, 1)], payments=payments, currency=currency, exponent=exponent)
    converted, read = checked_and_read(trade_batch("S1", DAY, [record]), currency, exponent)
    assert converted == read
    [(amounts, problems)] = converted
    assert [problem.path for problem in problems] == ["trade_records[0].payments[9].amount"]
    assert amounts.payments_by_type["CARD"] == 10 * LARGEST_15_DIGITS
    assert format_minor_units(amounts.payments[0], exponent).replace(".", "") == str(LARGEST_15_DIGITS)


@pytest.mark.parametrize(("currency", "exponent"), [("USD", 2), ("JPY", 0)])
def test_types_paid_once_are_their_amounts_without_a_range_problem(currency, exponent):
    # the range of the sums is checked only for a type paid more than once: one payment is within the range
    paid_once = [Pay(LARGEST_15_DIGITS, "CARD"), Pay(LARGEST_15_DIGITS, "GIFT"), Pay(-LARGEST_15_DIGITS, "ADJUSTMENT")]
    records = [
        trade_record("S1", DAY, [Line("P", 1, 1)], payments=paid_once, currency=currency, exponent=exponent),
        trade_record("S1", DAY, [Line("P", 1, 1)], payments=[Pay(7, "CASH")], currency=currency, exponent=exponent),
        trade_record("S1", DAY, [Line("P", 1, 0)], payments=[], currency=currency, exponent=exponent),
    ]
    converted, read = checked_and_read(trade_batch("S1", DAY, records), currency, exponent)
    assert converted == read
    assert [problems for _, problems in converted] == [[], [], []]
    assert [amounts.payments_by_type for amounts, _ in converted] == [
        {"CARD": LARGEST_15_DIGITS, "GIFT": LARGEST_15_DIGITS, "ADJUSTMENT": -LARGEST_15_DIGITS},
        {"CASH": 7},
        {},
    ]
