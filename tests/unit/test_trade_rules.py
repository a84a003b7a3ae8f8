"""The recording-rule warnings of trade records (ingest/trade_rules/), rule by rule.

Records come from a builder whose amounts are consistent by construction (computed here from
quantities, prices and parts in minor units); each test breaks one thing and derives the figure it
expects from the same inputs.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from pathlib import Path
from zoneinfo import ZoneInfo

import orjson
import pytest
from pydantic import TypeAdapter

from core.money import format_minor_units
from ingest.amounts import MoneyReader
from ingest.batches import BATCH_WARNING_CODES, BatchOutcome
from ingest.trade_records import read_amounts
from ingest.trade_rules import record_warnings
from ingest.trade_rules.common import (
    AMOUNT_MISMATCH,
    BUSINESS_DATE_MISMATCH,
    CLOSED_AT_WHILE_OPEN,
    COMBO_CHILD_INVALID,
    EXCHANGE_LINES_ONE_SIDED,
    LINE_AMOUNT_MISMATCH,
    NEGATIVE_AMOUNT_FIELDS,
    PAYMENT_AMOUNT_NEGATIVE,
    PAYMENT_TYPE_UNKNOWN_DIRECTION,
    SIGN_EXPECTED_NEGATIVE,
    SIGN_EXPECTED_POSITIVE,
    SOURCE_TYPE_UNMAPPED,
    VOIDED_COUNTED_BY_TYPE,
    WARNING_CODES,
    quantity_of,
)
from ingest.wire.requests import TradeRecord
from ingest.wire.responses import BatchWarning
from reference.codes import code_list

PATH = "trade_records[3]"
USD, JPY = 2, 0
DAY = dt.date(2026, 11, 20)
NEW_YORK, WORKDAY_START = "America/New_York", "04:00"
SUGGESTED_PAYMENT_TYPES = set(code_list("payment-types").codes)
MEMBER_ID = "M-SECRET-000123"
PRODUCT_NAME_OF = {"P-BURGER": "Cheeseburger of Ms Secret"}


# --- builder --------------------------------------------------------------------------------------


@dataclass
class Line:
    product_id: str
    quantity: str
    unit_price: int  # minor units, modifier deltas included
    discount: int = 0
    product_type: str = "SINGLE"
    parent_line_no: int | None = None
    modifiers: list[tuple[str, str, int]] = field(default_factory=list)  # (group, option, price delta)
    voided: bool = False

    @property
    def amount(self) -> int:
        exact = Decimal(self.quantity) * self.unit_price - self.discount
        assert exact == exact.to_integral_value(), "the builder only makes lines whose amount fits the currency"
        return int(exact)


@dataclass
class Pay:
    amount: int
    payment_type: str = "SALE"
    method: str = "CASH"


def local_time(day: dt.date, hours: int, minutes: int = 0, zone: str = NEW_YORK) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(hours, minutes), ZoneInfo(zone))


def record_body(
    lines: list[Line],
    payments: list[Pay] | None = None,
    *,
    exponent: int = USD,
    currency: str = "USD",
    tax: int = 0,
    service_charge: int = 0,
    tip: int = 0,
    rounding: int = 0,
    order_discount: int = 0,
    prices_include_tax: bool = False,
    business_date: dt.date = DAY,
    opened_at: dt.datetime | None = None,
    source_type: str = "01",
    **changes,
) -> dict:
    """A record whose subtotal, total and payments follow from its lines and parts."""

    def money(minor: int) -> str:
        return format_minor_units(minor, exponent)

    opened_at = opened_at or local_time(business_date, 12)
    subtotal = sum(line.amount for line in lines if line.parent_line_no is None and not line.voided)
    total = subtotal - order_discount + service_charge + tip + rounding + (0 if prices_include_tax else tax)
    if payments is None:
        payments = [Pay(abs(total), "SALE" if total >= 0 else "REFUND")] if total else []
    body = {
        "trade_record_id": "T-1001",
        "version": 1,
        "store_id": "S1",
        "business_date": business_date,
        "source_transaction_type": source_type,
        "order_type": "DINE_IN",
        "order_source": "POS",
        "status": "COMPLETED",
        "opened_at": opened_at,
        "closed_at": opened_at + dt.timedelta(minutes=20),
        "currency": currency,
        "prices_include_tax": prices_include_tax,
        "subtotal_amount": money(subtotal),
        "discount_amount": money(order_discount),
        "tax_amount": money(tax),
        "service_charge_amount": money(service_charge),
        "tip_amount": money(tip),
        "rounding_amount": money(rounding),
        "total_amount": money(total),
        "member_id": MEMBER_ID,
        "last_modified_at": opened_at + dt.timedelta(minutes=30),
        "items": [
            {
                "line_no": number,
                "parent_line_no": line.parent_line_no,
                "product_id": line.product_id,
                "product_name": PRODUCT_NAME_OF.get(line.product_id, line.product_id),
                "product_type": line.product_type,
                "quantity": line.quantity,
                "unit_price": money(line.unit_price),
                "discount_amount": money(line.discount),
                "line_amount": money(line.amount),
                "modifiers": [
                    {
                        "group_id": group,
                        "option_id": option,
                        "option_name": option,
                        "quantity": "1",
                        "price_delta": money(delta),
                    }
                    for group, option, delta in line.modifiers
                ],
                "is_voided": line.voided,
            }
            for number, line in enumerate(lines, start=1)
        ],
        "payments": [
            {
                "payment_id": f"PAY-{index}",
                "payment_type": p.payment_type,
                "payment_method": p.method,
                "amount": money(p.amount),
                "paid_at": opened_at + dt.timedelta(minutes=15),
            }
            for index, p in enumerate(payments)
        ],
    }
    body.update(changes)
    return body


def parse(body: dict) -> TradeRecord:
    """The record as the service reads it: from JSON (strict dataclasses take no dict from Python)."""
    return TypeAdapter(TradeRecord).validate_json(orjson.dumps(body))


def warnings_of(
    body: dict,
    standard_type: str | None = "SALE",
    *,
    exponent: int = USD,
    known_payment_types: set[str] = SUGGESTED_PAYMENT_TYPES,
    time_zone: str | None = NEW_YORK,
    workday_start: str | None = WORKDAY_START,
):
    record = parse(body)
    reader = MoneyReader(record.currency)
    amounts = read_amounts(PATH, record, reader)
    assert reader.exponent == exponent and reader.problems == []
    return record_warnings(PATH, record, amounts, standard_type, known_payment_types, time_zone, workday_start)


def codes_and_fields(warnings) -> list[tuple[str, str | None]]:
    """(code, field) of each warning; every one is located at the record itself, as spec 1 shows it."""
    assert [warning.path for warning in warnings] == [PATH] * len(warnings)
    return [(warning.code, warning.field) for warning in warnings]


def usd(minor: int) -> str:
    return format_minor_units(minor, USD)


BURGER, CHEDDAR, COMBO, UPGRADE, FRIES_PRICE = 550, 50, 899, 70, 299


def combo_sale_lines() -> list[Line]:
    """A burger combo with a drink upgrade (three children at a zero price) and a burger with cheese."""
    return [
        Line("P-COMBO", "1", COMBO + UPGRADE, product_type="COMBO", modifiers=[("G-DRINKS", "P-SHAKE", UPGRADE)]),
        Line("P-BURGER", "1", 0, product_type="SINGLE", parent_line_no=1),
        Line("P-FRIES", "1", 0, product_type="SIDE", parent_line_no=1),
        Line("P-SHAKE", "1", 0, product_type="DRINK", parent_line_no=1),
        Line("P-BURGER", "2", BURGER + CHEDDAR, discount=100, modifiers=[("G-CHEESE", "O-CHEDDAR", CHEDDAR)]),
    ]


def combo_sale(**changes) -> dict:
    return record_body(combo_sale_lines(), tax=163, tip=200, **changes)


def refund_lines() -> list[Line]:
    return [
        Line("P-COMBO", "-1", COMBO, product_type="COMBO"),
        Line("P-BURGER", "-1", 0, parent_line_no=1),
        Line("P-FRIES", "-1", 0, product_type="SIDE", parent_line_no=1),
        Line("P-BURGER", "-1", BURGER),
    ]


def refund(**changes) -> dict:
    return record_body(refund_lines(), tax=-115, source_type="02", original_trade_record_id="T-0999", **changes)


def exchange_lines() -> list[Line]:
    return [Line("P-FRIES", "-1", FRIES_PRICE, product_type="SIDE"), Line("P-BURGER", "1", BURGER)]


def exchange(**changes) -> dict:
    return record_body(exchange_lines(), tax=20, source_type="03", original_trade_record_id="T-0998", **changes)


def jpy_sale(**changes) -> dict:
    return record_body(
        [Line("P-RAMEN", "2", 980), Line("P-GYOZA", "1", 450, discount=50)],
        exponent=JPY,
        currency="JPY",
        tax=219,
        prices_include_tax=True,
        service_charge=100,
        opened_at=local_time(DAY, 19, zone="Asia/Tokyo"),
        **changes,
    )


def jpy_warnings(body: dict, **kwargs):
    return warnings_of(body, exponent=JPY, time_zone="Asia/Tokyo", workday_start="05:00", **kwargs)


# --- well-formed records have no warnings ---------------------------------------------------------


@pytest.mark.parametrize(
    "body, standard_type",
    [
        (combo_sale(), "SALE"),
        (refund(), "REFUND"),
        (refund(), "RETURN"),
        (exchange(), "EXCHANGE"),
        (combo_sale(), None),
    ],
    ids=["combo-sale", "refund", "return", "exchange", "unmapped"],
)
def test_a_record_that_follows_every_rule_has_no_warnings(body, standard_type):
    assert without_unmapped(warnings_of(body, standard_type)) == []


def without_unmapped(warnings: list) -> list:
    """The warnings but SOURCE_TYPE_UNMAPPED, which every record of an unmapped type gets (decision 0027)."""
    return [warning for warning in warnings if warning.code != SOURCE_TYPE_UNMAPPED]


def test_a_jpy_record_with_tax_included_has_no_warnings():
    assert jpy_warnings(jpy_sale()) == []


def test_every_code_is_documented():
    assert set(WARNING_CODES) == {
        AMOUNT_MISMATCH,
        LINE_AMOUNT_MISMATCH,
        COMBO_CHILD_INVALID,
        SIGN_EXPECTED_NEGATIVE,
        SIGN_EXPECTED_POSITIVE,
        EXCHANGE_LINES_ONE_SIDED,
        PAYMENT_AMOUNT_NEGATIVE,
        PAYMENT_TYPE_UNKNOWN_DIRECTION,
        BUSINESS_DATE_MISMATCH,
        CLOSED_AT_WHILE_OPEN,
        SOURCE_TYPE_UNMAPPED,
        VOIDED_COUNTED_BY_TYPE,
    }


def test_every_code_is_in_the_readme_table():
    readme = (Path(__file__).parents[2] / "docs" / "partner-guide.md").read_text()  # the partner guide's table
    for code in [*WARNING_CODES, *BATCH_WARNING_CODES]:
        assert f"| `{code}` |" in readme, code


# --- AMOUNT_MISMATCH ------------------------------------------------------------------------------


def test_a_total_one_minor_unit_off_is_an_amount_mismatch_naming_both_totals():
    body = combo_sale()
    subtotal = sum(line.amount for line in combo_sale_lines() if line.parent_line_no is None)
    expected = subtotal + 163 + 200
    body["total_amount"] = usd(expected + 1)
    warnings = warnings_of(body)
    assert codes_and_fields(warnings) == [(AMOUNT_MISMATCH, "total_amount")]
    message = warnings[0].message
    assert f"total_amount is {usd(expected + 1)}" in message
    assert f"= {usd(expected)}" in message
    assert f"tax_amount {usd(163)}" in message and "prices_include_tax is false" in message


@pytest.mark.parametrize(
    "part, sign",
    [
        ("subtotal_amount", 1),
        ("discount_amount", -1),
        ("tax_amount", 1),
        ("service_charge_amount", 1),
        ("tip_amount", 1),
        ("rounding_amount", 1),
    ],
)
def test_each_part_of_the_tax_added_identity_counts(part, sign):
    body = record_body(
        [Line("P-BURGER", "1", BURGER)], tax=44, order_discount=50, service_charge=30, tip=100, rounding=-1
    )
    changed = int(body[part].replace(".", "")) + 7
    body[part] = usd(changed)
    total = int(body["total_amount"].replace(".", ""))
    warnings = warnings_of(body)
    assert codes_and_fields(warnings) == [(AMOUNT_MISMATCH, "total_amount")]
    assert f"= {usd(total + sign * 7)}" in warnings[0].message


def test_with_tax_included_the_tax_is_not_added_again():
    lines = [Line("P-BURGER", "2", BURGER)]
    tax_inside = 80
    assert warnings_of(record_body(lines, tax=tax_inside, prices_include_tax=True)) == []

    added_twice = record_body(lines, tax=tax_inside, prices_include_tax=True)
    subtotal = 2 * BURGER
    added_twice["total_amount"] = usd(subtotal + tax_inside)
    warnings = warnings_of(added_twice)
    assert codes_and_fields(warnings) == [(AMOUNT_MISMATCH, "total_amount")]
    assert f"= {usd(subtotal)}" in warnings[0].message and "tax_amount is not added" in warnings[0].message


def test_a_jpy_amount_mismatch_speaks_in_whole_yen():
    body = jpy_sale()
    subtotal = 2 * 980 + (450 - 50)
    expected = subtotal + 100
    body["total_amount"] = str(expected + 219)  # tax added although prices include it
    warnings = jpy_warnings(body)
    assert codes_and_fields(warnings) == [(AMOUNT_MISMATCH, "total_amount")]
    assert f"total_amount is {expected + 219} " in warnings[0].message and f"= {expected};" in warnings[0].message


def test_refund_amounts_satisfy_the_identity_with_negative_parts():
    body = refund(order_discount=-50, tip=-100)
    assert warnings_of(body, "REFUND") == []


# --- LINE_AMOUNT_MISMATCH -------------------------------------------------------------------------


def test_a_line_amount_off_by_one_minor_unit_is_reported_on_that_line():
    body = combo_sale()
    quantity, price, discount = 2, BURGER + CHEDDAR, 100
    expected = quantity * price - discount
    body["items"][4]["line_amount"] = usd(expected - 1)
    body["subtotal_amount"] = usd(int(body["subtotal_amount"].replace(".", "")) - 1)
    body["total_amount"] = usd(int(body["total_amount"].replace(".", "")) - 1)
    body["payments"][0]["amount"] = body["total_amount"]
    warnings = warnings_of(body)
    assert codes_and_fields(warnings) == [(LINE_AMOUNT_MISMATCH, "items[4].line_amount")]
    message = warnings[0].message
    assert f"line_amount is {usd(expected - 1)}" in message
    assert f"quantity 2 x unit_price {usd(price)} - discount_amount {usd(discount)} = {usd(expected)}" in message


def test_the_line_discount_is_taken_off():
    body = record_body([Line("P-BURGER", "3", BURGER, discount=25)])
    assert warnings_of(body) == []
    body["items"][0]["line_amount"] = usd(3 * BURGER)  # the discount forgotten
    assert codes_and_fields(warnings_of(body))[0] == (LINE_AMOUNT_MISMATCH, "items[0].line_amount")


def test_a_fractional_quantity_whose_amount_fits_the_currency_must_match_exactly():
    quantity, price = Decimal("0.5"), 250
    exact = int(quantity * price)
    body = record_body([Line("P-COFFEE-BEANS", str(quantity), price)])
    assert warnings_of(body) == []
    body["items"][0]["line_amount"] = usd(exact + 1)
    body["subtotal_amount"] = body["total_amount"] = body["payments"][0]["amount"] = usd(exact + 1)
    warnings = warnings_of(body)
    assert codes_and_fields(warnings) == [(LINE_AMOUNT_MISMATCH, "items[0].line_amount")]
    assert warnings[0].message.endswith(f"= {usd(exact)}")


def _weighed(quantity: str, price: int, line_amount: int) -> dict:
    body = record_body([Line("P-CHEESE", "1", price)])
    body["items"][0].update(quantity=quantity, line_amount=usd(line_amount))
    body["subtotal_amount"] = body["total_amount"] = body["payments"][0]["amount"] = usd(line_amount)
    return body


@pytest.mark.parametrize("quantity, price", [("0.333", 100), ("1.125", 999), ("2.5", 1), ("0.00000001", 12345)])
def test_an_amount_with_more_places_than_the_currency_may_be_rounded_either_way(quantity, price):
    exact = Decimal(quantity) * price  # in minor units, with a fraction
    floor = int(exact.to_integral_value(rounding="ROUND_FLOOR"))
    for line_amount in (floor, floor + 1):
        assert warnings_of(_weighed(quantity, price, line_amount)) == []
    for line_amount in (floor - 1, floor + 2):
        warnings = [w for w in warnings_of(_weighed(quantity, price, line_amount)) if w.code == LINE_AMOUNT_MISMATCH]
        assert codes_and_fields(warnings) == [(LINE_AMOUNT_MISMATCH, "items[0].line_amount")]
        assert f"line_amount is {usd(floor)} or {usd(floor + 1)}" in warnings[0].message
        assert f"= {exact.scaleb(-USD).normalize():f}," in warnings[0].message


def test_a_jpy_line_with_a_fraction_of_a_yen_may_be_rounded_either_way():
    quantity, price = "0.5", 255
    exact = Decimal(quantity) * price
    floor = int(exact.to_integral_value(rounding="ROUND_FLOOR"))

    def body_with(line_amount: int) -> dict:
        body = record_body([Line("P-SOBA", "1", price)], exponent=JPY, currency="JPY")
        body["items"][0].update(quantity=quantity, line_amount=str(line_amount))
        return body

    for line_amount in (floor, floor + 1):
        assert [w for w in jpy_warnings(body_with(line_amount)) if w.code == LINE_AMOUNT_MISMATCH] == []
    (warning,) = [w for w in jpy_warnings(body_with(floor + 2)) if w.code == LINE_AMOUNT_MISMATCH]
    assert (
        f"= {exact}, so line_amount is {floor} or {floor + 1} (the exact value rounded to whole units"
        in warning.message
    )


def test_large_quantities_and_prices_are_computed_exactly():
    # 99999999999.99: 24 significant digits in the product, far beyond a double's; the line_amount stays
    # within the 2**53 - 1 minor units an amount may have.
    quantity, price = "123.45678901", 9999999999999
    with localcontext() as context:
        context.prec = 100
        exact = Decimal(quantity) * price
    floor = int(exact.to_integral_value(rounding="ROUND_FLOOR"))
    body = record_body([Line("P-BULK", "1", price)])
    body["items"][0]["quantity"] = quantity
    body["items"][0]["line_amount"] = usd(floor)
    findings = [w for w in warnings_of(body) if w.code == LINE_AMOUNT_MISMATCH]
    assert findings == []
    body["items"][0]["line_amount"] = usd(floor - 1)
    assert [w.field for w in warnings_of(body) if w.code == LINE_AMOUNT_MISMATCH] == ["items[0].line_amount"]


def test_a_combo_child_line_carries_no_amount_but_its_discount():
    body = combo_sale()
    assert warnings_of(body) == []
    body["items"][2]["line_amount"] = usd(FRIES_PRICE)  # revenue put on the child line
    warnings = warnings_of(body)
    assert codes_and_fields(warnings) == [(LINE_AMOUNT_MISMATCH, "items[2].line_amount")]
    assert f"0 - discount_amount {usd(0)} = {usd(0)}" in warnings[0].message

    discounted_child = combo_sale()
    discounted_child["items"][2].update(discount_amount=usd(30), line_amount=usd(-30))
    assert warnings_of(discounted_child) == []  # 0 - discount_amount


def test_a_combo_child_with_a_price_is_reported_once_as_combo_child_invalid():
    body = combo_sale()
    body["items"][1].update(unit_price=usd(BURGER), line_amount=usd(0))
    assert codes_and_fields(warnings_of(body)) == [(COMBO_CHILD_INVALID, "items[1].unit_price")]


def test_voided_lines_are_not_checked():
    body = record_body([Line("P-BURGER", "1", BURGER), Line("P-COLA", "1", 199, voided=True)])
    body["items"][1]["line_amount"] = usd(0)
    assert warnings_of(body) == []


# --- COMBO_CHILD_INVALID --------------------------------------------------------------------------


def test_a_child_pointing_at_no_line_is_invalid():
    body = combo_sale()
    missing = len(body["items"]) + 1
    body["items"][3]["parent_line_no"] = missing
    warnings = warnings_of(body)
    assert codes_and_fields(warnings) == [(COMBO_CHILD_INVALID, "items[3].parent_line_no")]
    assert f"parent_line_no {missing} matches no line_no" in warnings[0].message


def test_a_child_pointing_at_a_line_that_is_not_a_combo_is_invalid():
    body = combo_sale()
    burger_line = body["items"][4]["line_no"]
    body["items"][3]["parent_line_no"] = burger_line
    warnings = warnings_of(body)
    assert codes_and_fields(warnings) == [(COMBO_CHILD_INVALID, "items[3].parent_line_no")]
    assert "product_type is SINGLE, not COMBO" in warnings[0].message


def test_a_child_pointing_at_itself_is_invalid():
    body = combo_sale()
    body["items"][3]["parent_line_no"] = body["items"][3]["line_no"]
    assert codes_and_fields(warnings_of(body)) == [(COMBO_CHILD_INVALID, "items[3].parent_line_no")]


def test_a_child_may_come_before_its_combo_line():
    # the line numbers are looked up at the first child: the lines after it are found too
    lines = [
        Line("P-FRIES", "1", 0, product_type="SIDE", parent_line_no=2),
        Line("P-COMBO", "1", COMBO, product_type="COMBO"),
    ]
    assert warnings_of(record_body(lines)) == []
    lines[1].product_type = "SINGLE"
    assert codes_and_fields(warnings_of(record_body(lines))) == [(COMBO_CHILD_INVALID, "items[0].parent_line_no")]


def test_a_priced_child_of_a_missing_combo_gets_both_findings_in_line_order():
    body = combo_sale()
    body["items"][1].update(parent_line_no=99, unit_price=usd(1))
    assert codes_and_fields(warnings_of(body)) == [
        (COMBO_CHILD_INVALID, "items[1].parent_line_no"),
        (COMBO_CHILD_INVALID, "items[1].unit_price"),
    ]


# --- sign rules -----------------------------------------------------------------------------------


@pytest.mark.parametrize("standard_type", ["REFUND", "RETURN"])
def test_a_positive_line_in_a_refund_or_return_is_reported(standard_type):
    lines = refund_lines() + [Line("P-COLA", "1", 199)]
    body = record_body(lines, tax=-100, source_type="02", original_trade_record_id="T-0999")
    warnings = warnings_of(body, standard_type)
    assert codes_and_fields(warnings) == [
        (SIGN_EXPECTED_NEGATIVE, "items[4].quantity"),
        (SIGN_EXPECTED_NEGATIVE, "items[4].line_amount"),
    ]
    assert f"{standard_type} transaction" in warnings[0].message and "quantity 1" in warnings[0].message
    assert f"line_amount {usd(199)}" in warnings[1].message


@pytest.mark.parametrize("name", NEGATIVE_AMOUNT_FIELDS)
def test_each_positive_transaction_amount_of_a_refund_is_reported(name):
    body = refund()
    positive = 1
    body[name] = usd(positive)
    reported = [(w.code, w.path, w.field) for w in warnings_of(body, "REFUND") if w.code == SIGN_EXPECTED_NEGATIVE]
    assert reported == [(SIGN_EXPECTED_NEGATIVE, PATH, name)]


def test_a_positive_rounding_in_a_refund_is_fine():
    assert warnings_of(refund(rounding=2), "REFUND") == []


def test_zero_has_no_sign_in_a_refund():
    free_item = Line("P-TOY", "-1", 300, discount=-300)  # fully discounted: line_amount 0
    body = record_body(refund_lines() + [free_item], tax=-115, source_type="02", original_trade_record_id="T-0999")
    assert free_item.amount == 0
    assert warnings_of(body, "REFUND") == []


def test_positive_amounts_are_not_judged_when_the_type_is_unmapped_or_not_signed():
    positive_refund = record_body([Line("P-BURGER", "1", BURGER)], source_type="77")
    for standard_type in (None, "VOID", "NO_SALE"):
        assert without_unmapped(warnings_of(positive_refund, standard_type)) == []


def test_a_negative_quantity_in_a_sale_is_reported():
    body = record_body([Line("P-BURGER", "2", BURGER), Line("P-COLA", "-1", 199)])
    warnings = warnings_of(body, "SALE")
    assert codes_and_fields(warnings) == [(SIGN_EXPECTED_POSITIVE, "items[1].quantity")]
    assert "quantity -1" in warnings[0].message


@pytest.mark.parametrize("quantity", ["-0", "-0.000"])
def test_a_negative_zero_quantity_in_a_sale_has_no_sign(quantity):
    # the rule looks a quantity up only when it starts with "-": "-0" does, and is zero
    assert warnings_of(record_body([Line("P-BURGER", "1", BURGER), Line("P-COLA", quantity, 199)]), "SALE") == []


def test_a_negative_priced_line_in_a_sale_is_not_a_sign_problem():
    coupon = Line("P-COUPON", "1", -100)
    assert warnings_of(record_body([Line("P-BURGER", "1", BURGER), coupon]), "SALE") == []


def test_a_voided_negative_line_in_a_sale_is_not_reported():
    body = record_body([Line("P-BURGER", "1", BURGER), Line("P-BURGER", "-1", BURGER, voided=True)])
    assert warnings_of(body, "SALE") == []


@pytest.mark.parametrize(
    "lines, returned, given",
    [
        ([Line("P-BURGER", "1", BURGER), Line("P-COLA", "2", 199)], 0, 2),
        ([Line("P-FRIES", "-1", FRIES_PRICE, product_type="SIDE")], 1, 0),
        ([Line("P-FRIES", "-1", FRIES_PRICE, voided=True), Line("P-BURGER", "1", BURGER)], 0, 1),
    ],
    ids=["only-new", "only-returned", "returned-line-voided"],
)
def test_an_exchange_with_one_side_only_is_reported(lines, returned, given):
    warnings = warnings_of(record_body(lines, source_type="03", original_trade_record_id="T-0998"), "EXCHANGE")
    assert codes_and_fields(warnings) == [(EXCHANGE_LINES_ONE_SIDED, "items")]
    assert f"{returned} returned and {given} new lines" in warnings[0].message


def test_an_exchange_may_have_positive_and_negative_amounts():
    cheaper_new_item = record_body(
        [Line("P-BURGER", "-1", BURGER), Line("P-FRIES", "1", FRIES_PRICE)],
        source_type="03",
        original_trade_record_id="T-0998",
    )
    assert int(cheaper_new_item["total_amount"].replace(".", "")) < 0
    assert cheaper_new_item["payments"][0]["payment_type"] == "REFUND"
    assert warnings_of(cheaper_new_item, "EXCHANGE") == []


# --- payments -------------------------------------------------------------------------------------


def test_a_negative_payment_amount_is_reported():
    body = refund()
    total = int(body["total_amount"].replace(".", ""))
    body["payments"] = [{**body["payments"][0], "payment_type": "SALE", "amount": usd(total)}]
    warnings = warnings_of(body, "REFUND")
    assert codes_and_fields(warnings) == [(PAYMENT_AMOUNT_NEGATIVE, "payments[0].amount")]
    assert f"This amount is {usd(total)}" in warnings[0].message


def test_an_adjustment_may_be_negative():
    lines = [Line("P-BURGER", "1", BURGER)]
    correction = -5
    body = record_body(lines, payments=[Pay(BURGER - correction), Pay(correction, "ADJUSTMENT")])
    assert warnings_of(body) == []


def test_a_payment_type_without_a_known_direction_is_reported_without_echoing_it():
    custom = "HOUSE_ACCOUNT_CHARGE"
    body = record_body([Line("P-BURGER", "1", BURGER)], payments=[Pay(BURGER, custom)])
    warnings = warnings_of(body)
    assert codes_and_fields(warnings) == [(PAYMENT_TYPE_UNKNOWN_DIRECTION, "payments[0].payment_type")]
    assert custom not in warnings[0].message and "payment totals" in warnings[0].message


def test_a_payment_type_whose_direction_the_partner_registered_is_fine():
    custom = "HOUSE_ACCOUNT_CHARGE"
    body = record_body([Line("P-BURGER", "1", BURGER)], payments=[Pay(BURGER, custom)])
    assert warnings_of(body, known_payment_types=SUGGESTED_PAYMENT_TYPES | {custom}) == []


def test_the_payment_rules_look_at_every_payment_of_a_record():
    # record_warnings asks the payment rules only of a record with a negative amount or a type HQ does not
    # know: the one at the last of three payments is found as the rules themselves find it
    custom = "HOUSE_ACCOUNT_CHARGE"
    body = record_body(
        [Line("P-BURGER", "1", BURGER)], payments=[Pay(BURGER + 100), Pay(200, custom), Pay(-300, "SALE")]
    )
    assert codes_and_fields(warnings_of(body)) == [
        (PAYMENT_AMOUNT_NEGATIVE, "payments[2].amount"),
        (PAYMENT_TYPE_UNKNOWN_DIRECTION, "payments[1].payment_type"),
    ]
    body["payments"] = []  # none at all: nothing to look at
    assert warnings_of(body) == []


# --- BUSINESS_DATE_MISMATCH -----------------------------------------------------------------------


def test_a_transaction_before_workday_start_belongs_to_the_previous_business_date():
    next_morning = DAY + dt.timedelta(days=1)
    opened = local_time(next_morning, 3, 30)  # before 04:00
    assert warnings_of(record_body([Line("P-BURGER", "1", BURGER)], opened_at=opened, business_date=DAY)) == []

    wrong = record_body([Line("P-BURGER", "1", BURGER)], opened_at=opened, business_date=next_morning)
    warnings = warnings_of(wrong)
    assert codes_and_fields(warnings) == [(BUSINESS_DATE_MISMATCH, "business_date")]
    message = warnings[0].message
    assert f"so the business date is {(next_morning - dt.timedelta(days=1)).isoformat()}" in message
    assert f"business_date is {next_morning.isoformat()}" in message
    assert f"before workday_start {WORKDAY_START}" in message


def test_workday_start_itself_opens_the_new_business_date():
    opened = local_time(DAY, 4, 0)
    assert warnings_of(record_body([Line("P-BURGER", "1", BURGER)], opened_at=opened, business_date=DAY)) == []
    previous = record_body([Line("P-BURGER", "1", BURGER)], opened_at=opened, business_date=DAY - dt.timedelta(days=1))
    assert [w.code for w in warnings_of(previous)] == [BUSINESS_DATE_MISMATCH]


def test_opened_at_is_converted_to_the_store_time_zone():
    late_evening = local_time(DAY, 22, 30)
    in_utc = late_evening.astimezone(dt.UTC)
    assert in_utc.date() != DAY  # the UTC date is already the next day
    body = record_body([Line("P-BURGER", "1", BURGER)], opened_at=in_utc, business_date=DAY)
    assert warnings_of(body) == []
    assert [w.code for w in warnings_of(body, time_zone="Asia/Tokyo")] == [BUSINESS_DATE_MISMATCH]


def test_the_cut_off_follows_daylight_saving_time():
    dst_starts = dt.date(2026, 3, 8)  # New York: 02:00 EST becomes 03:00 EDT
    half_past_three_edt = local_time(dst_starts, 3, 30)
    assert half_past_three_edt.utcoffset() == dt.timedelta(hours=-4)
    body = record_body(
        [Line("P-BURGER", "1", BURGER)],
        opened_at=half_past_three_edt.astimezone(dt.UTC),
        business_date=dst_starts - dt.timedelta(days=1),
    )
    assert warnings_of(body) == []


def test_the_business_date_rule_needs_the_store_master():
    body = record_body(
        [Line("P-BURGER", "1", BURGER)], opened_at=local_time(DAY, 12), business_date=DAY + dt.timedelta(days=3)
    )
    assert warnings_of(body, time_zone=None, workday_start=None) == []


def test_a_refund_keeps_the_business_date_of_the_original_transaction():
    days_later = local_time(DAY + dt.timedelta(days=4), 12)
    assert warnings_of(refund(opened_at=days_later), "REFUND") == []
    unmapped_refund = refund(opened_at=days_later)
    assert (
        without_unmapped(warnings_of(unmapped_refund, None)) == []
    )  # original_trade_record_id says it refers to an earlier one


def test_a_midnight_workday_start_never_moves_the_date():
    just_after_midnight = local_time(DAY, 0, 5, zone="Asia/Taipei")
    body = record_body([Line("P-BEEF-NOODLES", "1", 18000)], opened_at=just_after_midnight, business_date=DAY)
    assert warnings_of(body, time_zone="Asia/Taipei", workday_start="00:00") == []


# --- CLOSED_AT_WHILE_OPEN -------------------------------------------------------------------------


def test_an_open_transaction_has_no_closed_at():
    opened = local_time(DAY, 12)
    assert warnings_of(record_body([Line("P-BURGER", "1", BURGER)], status="OPEN", closed_at=None)) == []
    closed = record_body([Line("P-BURGER", "1", BURGER)], status="OPEN", closed_at=opened + dt.timedelta(minutes=5))
    warnings = warnings_of(closed)
    assert codes_and_fields(warnings) == [(CLOSED_AT_WHILE_OPEN, "closed_at")]
    assert "status is OPEN" in warnings[0].message


@pytest.mark.parametrize("status", ["COMPLETED", "REFUNDED", "PARTIALLY_REFUNDED"])
def test_a_closed_transaction_may_have_or_lack_closed_at(status):
    """closed_at is optional (spec 2): a POS that records no closing time is not warned on every record."""
    with_time = record_body([Line("P-BURGER", "1", BURGER)], status=status)
    assert warnings_of(with_time) == []
    assert warnings_of({**with_time, "closed_at": None}) == []


# --- the whole list -------------------------------------------------------------------------------


def _record_breaking_every_rule() -> dict:
    lines = [
        Line("P-COMBO", "1", COMBO, product_type="COMBO"),
        Line("P-BURGER", "1", 0, parent_line_no=9),
        Line("P-COLA", "-1", 199),
    ]
    body = record_body(
        lines, payments=[Pay(-100), Pay(COMBO, "HOUSE_ACCOUNT_CHARGE")], opened_at=local_time(DAY, 2), business_date=DAY
    )
    body["items"][0]["line_amount"] = usd(COMBO - 1)
    body["total_amount"] = usd(0)
    body["status"] = "OPEN"  # closed_at is set by the builder
    return body


def test_all_warnings_of_a_record_come_in_a_stable_order():
    body = _record_breaking_every_rule()
    first = warnings_of(body, "SALE")
    assert codes_and_fields(first) == [
        (AMOUNT_MISMATCH, "total_amount"),
        (COMBO_CHILD_INVALID, "items[1].parent_line_no"),
        (LINE_AMOUNT_MISMATCH, "items[0].line_amount"),
        (SIGN_EXPECTED_POSITIVE, "items[2].quantity"),
        (PAYMENT_AMOUNT_NEGATIVE, "payments[0].amount"),
        (PAYMENT_TYPE_UNKNOWN_DIRECTION, "payments[1].payment_type"),
        (BUSINESS_DATE_MISMATCH, "business_date"),
        (CLOSED_AT_WHILE_OPEN, "closed_at"),
    ]
    assert warnings_of(body, "SALE") == first


def test_messages_never_echo_member_id_or_free_text():
    body = _record_breaking_every_rule()
    body["items"][1]["product_id"] = "P-BURGER"
    messages = [w.message for w in warnings_of(body, "SALE")] + [
        w.message for w in warnings_of(refund(items=body["items"]), "REFUND")
    ]
    assert messages
    for message in messages:
        assert MEMBER_ID not in message
        assert PRODUCT_NAME_OF["P-BURGER"] not in message


def test_warnings_serialise_as_the_batch_response_expects():
    body = combo_sale()
    body["total_amount"] = usd(0)
    (warning,) = warnings_of(body)
    whole_record = BatchWarning("SOME_CODE", PATH, "about the whole record")
    answered = BatchOutcome("3f0c6d3e-2a59-4f4b-9a0e-0d6d2c1b7a01", 1, warnings=[warning, whole_record]).as_dict()
    assert answered["warnings"][0] == {
        "code": AMOUNT_MISMATCH,
        "path": PATH,
        "message": warning.message,
        "field": "total_amount",
    }
    assert "field" not in answered["warnings"][1]


@pytest.mark.parametrize(
    "quantity",
    ["0", "-0", "0.000", "-0.00000000", "1", "-1", "0.5", "-0.5", "12.34567890", "007", "-999999999999999.99999999"],
)
def test_a_quantity_as_integers_is_the_decimal_exactly(quantity):
    # the line rules compute with quantity_of (cached) instead of Decimal per line: same value, same sign
    units, scale = quantity_of(quantity)
    assert Decimal(units) / Decimal(scale) == Decimal(quantity)
    assert (units > 0, units < 0) == (Decimal(quantity) > 0, Decimal(quantity) < 0)


# --- SOURCE_TYPE_UNMAPPED and VOIDED_COUNTED_BY_TYPE (decision 0027) ---------------------------------


def test_an_unmapped_source_type_is_warned_at_the_record():
    body = record_body([Line("P-BURGER", "1", BURGER)], source_type="77")
    warnings = warnings_of(body, None)
    assert codes_and_fields(warnings) == [(SOURCE_TYPE_UNMAPPED, "source_transaction_type")]
    assert warnings[0].path == PATH and "re-maps" in warnings[0].message
    assert warnings_of(body, "SALE") == []


@pytest.mark.parametrize(
    ("standard_type", "warned"), [("SALE", True), ("EXCHANGE", True), ("VOID", False), ("NO_SALE", False)]
)
def test_a_voided_record_of_a_revenue_type_is_counted_and_says_so(standard_type, warned):
    body = record_body([Line("P-BURGER", "1", BURGER)], status="VOIDED")
    codes = codes_and_fields(warnings_of(body, standard_type))
    assert ((VOIDED_COUNTED_BY_TYPE, "status") in codes) == warned


def test_a_voided_record_with_nothing_to_count_is_not_warned():
    body = record_body([Line("P-BURGER", "1", 0)], status="VOIDED", payments=[])
    assert warnings_of(body, "SALE") == []
