"""Partner data protection (ingest/data_protection.py): member ids and card numbers are refused.

Card numbers are made here from a prefix and a computed Luhn check digit, so that every number the
tests use is valid (or invalid) by construction. A card number is refused in free-text fields only
(Text and FreeString50), never in identifiers (codes and ids).
"""

from __future__ import annotations

import datetime as dt
import hashlib

import orjson
import pytest
from pydantic import Field, TypeAdapter

from ingest.data_protection import (
    contains_card_number,
    is_email_address,
    is_phone_number,
    luhn_valid,
    protection_problems,
    text_fields,
)
from ingest.wire import Code, FreeString50, Text, TradeRecord, record_part

PATH = "trade_records[7]"
OPENED = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone(dt.timedelta(hours=-5)))


# --- builders -------------------------------------------------------------------------------------

def luhn_check_digit(partial: str) -> str:
    """The digit that makes partial + digit pass the Luhn check."""
    total = 0
    for position, char in enumerate(reversed(partial)):
        digit = int(char)
        if position % 2 == 0:  # doubled once the check digit is appended
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return str((10 - total % 10) % 10)


def card(prefix: str, length: int) -> str:
    partial = prefix + "1234567890123456789"[: length - 1 - len(prefix)]
    return partial + luhn_check_digit(partial)


def not_luhn(number: str) -> str:
    """The same number with a wrong check digit."""
    return number[:-1] + str((int(number[-1]) + 1) % 10)


def grouped(number: str, separator: str = " ") -> str:
    return separator.join(number[i:i + 4] for i in range(0, len(number), 4))


VISA = card("4", 16)
AMEX = card("37", 15)
MASTERCARD_2_SERIES = card("2221", 16)
VISA_13 = card("4", 13)
UNIONPAY_19 = card("62", 19)
# Luhn-valid numbers that start like no card network's number: cards all the same, by the definition.
NO_NETWORK_PREFIXES = ("1", "7", "8", "9")
CARD_LENGTHS = range(13, 20)  # the definition: 13 to 19 digits


def record_body(**changes) -> dict:
    body = {
        "trade_record_id": "T-1001", "version": 1, "store_id": "S1", "business_date": OPENED.date(),
        "source_transaction_type": "01", "order_type": "DELIVERY", "order_source": "DELIVERY_PLATFORM",
        "order_source_detail": "FoodFast", "status": "COMPLETED", "opened_at": OPENED, "closed_at": OPENED,
        "currency": "USD", "prices_include_tax": False, "subtotal_amount": "5.50", "discount_amount": "0.00",
        "tax_amount": "0.44", "service_charge_amount": "0.00", "tip_amount": "0.00", "rounding_amount": "0.00",
        "total_amount": "5.94", "fiscal_document_no": "AB-12345678", "employee_id": "E-042", "guest_count": 1,
        "member_id": "M-000123", "last_modified_at": OPENED,
        "items": [{
            "line_no": 1, "product_id": "P-BURGER", "product_name": "Cheeseburger", "product_type": "SINGLE",
            "quantity": "1", "unit_price": "5.50", "discount_amount": "0.00", "line_amount": "5.50",
            "tax_category": "STANDARD", "is_voided": False,
            "modifiers": [{"group_id": "G-CHEESE", "option_id": "O-CHEDDAR", "option_name": "Cheddar",
                           "quantity": "1", "price_delta": "0.00"}],
        }],
        "payments": [{"payment_id": "PAY-1", "payment_type": "SALE", "payment_method": "CREDIT_CARD",
                      "payment_method_detail": "VISA", "card_last4": "1111", "amount": "5.94", "paid_at": OPENED}],
        "tax_lines": [{"tax_code": "NY-SALES", "tax_rate": "0.08", "taxable_amount": "5.50", "tax_amount": "0.44",
                       "is_inclusive": False}],
    }
    body.update(changes)
    return body


def with_value(path: str, value) -> dict:
    """A record with one field (path like 'items.0.modifiers.0.option_name') set to value."""
    body = record_body()
    *parents, last = path.split(".")
    target = body
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    target[last] = value
    return body


def parsed(body: dict, model: type = TradeRecord):
    """The record as the service reads it: from JSON (strict dataclasses take no dict from Python)."""
    return TypeAdapter(model).validate_json(orjson.dumps(body))


def problems(body: dict, country_code: str | None = "US"):
    return protection_problems(PATH, parsed(body), country_code)


def member_problems(member_id: str, country_code: str | None):
    return problems(record_body(member_id=member_id), country_code)


def wire_path(dotted: str) -> str:
    """'items.0.product_name' -> 'trade_records[7].items[0].product_name'."""
    path = PATH
    for part in dotted.split("."):
        path += f"[{part}]" if part.isdigit() else f".{part}"
    return path


def test_a_record_without_personal_data_has_no_problems():
    assert problems(record_body()) == []
    assert problems(record_body(member_id=None), None) == []


# --- member_id: phone numbers ---------------------------------------------------------------------

@pytest.mark.parametrize("country_code", ["US", "TW"])
@pytest.mark.parametrize("member_id", [
    "10042", "100420", "987654",  # sequence numbers of 5 and 6 digits
    "M-000123",
    "a1b2c3d4e5f6",
    hashlib.sha256(b"salt:10042").hexdigest()[:40],
])
def test_sequence_numbers_and_salted_hashes_pass(member_id, country_code):
    assert member_problems(member_id, country_code) == []


@pytest.mark.parametrize("member_id, country_code", [
    ("+1 202-555-0143", "US"),
    ("(202) 555-0143", "US"),
    ("202.555.0143", "US"),
    ("0912345678", "TW"),
    ("0912-345-678", "TW"),
    ("+886 912 345 678", "TW"),
    ("+886 912 345 678", "US"),  # the + form is read as international whatever the store's country
])
def test_phone_numbers_are_refused(member_id, country_code):
    found = member_problems(member_id, country_code)
    assert [problem.path for problem in found] == [f"{PATH}.member_id"]
    assert "phone number" in found[0].message
    assert member_id not in found[0].message
    assert not any(char.isdigit() for char in found[0].message)


def test_a_phone_number_is_read_in_the_store_country():
    taiwan_mobile = "0912345678"
    assert member_problems(taiwan_mobile, "US") == []
    assert member_problems(taiwan_mobile, "TW") != []


def test_without_a_store_country_only_the_international_form_is_a_phone_number():
    assert member_problems("(202) 555-0143", None) == []
    assert member_problems("+1 202-555-0143", None) != []


def test_full_width_digits_are_still_a_phone_number():
    full_width = "".join(chr(ord(char) + 0xFEE0) for char in "0912345678")
    assert is_phone_number(full_width, "TW")


def test_letters_are_never_read_as_a_phone_keypad():
    vanity = "1-800-FLOWERS"
    assert not is_phone_number(vanity, "US")


# --- member_id: e-mail addresses ------------------------------------------------------------------

@pytest.mark.parametrize("member_id", ["jane.doe@example.com", "j+loyalty@mail.example.co.uk", " ab@cd.tw "])
def test_email_addresses_are_refused(member_id):
    found = member_problems(member_id, "US")
    assert [problem.path for problem in found] == [f"{PATH}.member_id"]
    assert "e-mail" in found[0].message and member_id.strip() not in found[0].message


@pytest.mark.parametrize("value", ["M-000123", "user@localhost", "a@b.c1", "@example.com", "user@"])
def test_values_that_are_not_local_at_domain_dot_tld_are_not_email_addresses(value):
    assert not is_email_address(value)


# --- card numbers ---------------------------------------------------------------------------------

def test_the_generated_card_numbers_are_what_they_claim():
    for number, length in ((VISA, 16), (AMEX, 15), (MASTERCARD_2_SERIES, 16), (VISA_13, 13), (UNIONPAY_19, 19)):
        assert len(number) == length and luhn_valid(number)
        assert not luhn_valid(not_luhn(number))
    for prefix in NO_NETWORK_PREFIXES:
        for length in range(12, 21):
            number = card(prefix, length)
            assert len(number) == length and number.startswith(prefix) and luhn_valid(number)


# Every Text or FreeString50 field of a trade record and the models it holds.
FREE_TEXT_FIELDS = [
    "member_id", "order_source", "order_source_detail", "items.0.product_name", "items.0.modifiers.0.option_name",
    "payments.0.payment_type", "payments.0.payment_method_detail",
]
# Every code field (Code, and StoreId for store_id): codes and ids, which are not scanned.
IDENTIFIER_FIELDS = [
    "trade_record_id", "store_id", "source_transaction_type", "original_trade_record_id", "fiscal_document_no",
    "employee_id", "items.0.product_id", "items.0.modifiers.0.group_id", "items.0.modifiers.0.option_id",
    "payments.0.payment_id", "payments.0.original_payment_id", "tax_lines.0.tax_code",
]


@pytest.mark.parametrize("field_path", FREE_TEXT_FIELDS)
def test_a_card_number_in_any_free_text_field_is_refused_at_that_field(field_path):
    found = problems(with_value(field_path, grouped(VISA)))
    assert [problem.path for problem in found] == [wire_path(field_path)]
    assert "card number" in found[0].message


@pytest.mark.parametrize("number", [VISA, card("1", 16), card("9", 16)], ids=["visa", "prefix-1", "prefix-9"])
@pytest.mark.parametrize("field_path", IDENTIFIER_FIELDS)
def test_a_luhn_valid_number_in_an_identifier_is_not_refused(field_path, number):
    assert len(number) == 16 and luhn_valid(number) and contains_card_number(number)
    assert problems(with_value(field_path, number)) == []


@pytest.mark.parametrize("length", CARD_LENGTHS)
@pytest.mark.parametrize("prefix", NO_NETWORK_PREFIXES)
def test_a_luhn_valid_number_is_a_card_number_whatever_its_first_digit(prefix, length):
    number = card(prefix, length)
    assert contains_card_number(number) and contains_card_number(grouped(number))
    (problem,) = problems(with_value("items.0.product_name", f"note {grouped(number)}"))
    assert problem.path == f"{PATH}.items[0].product_name"
    assert number not in problem.message and number[-4:] not in problem.message


@pytest.mark.parametrize("length", [CARD_LENGTHS[0] - 1, CARD_LENGTHS[-1] + 1])
@pytest.mark.parametrize("prefix", ("4",) + NO_NETWORK_PREFIXES)
def test_too_short_and_too_long_digit_strings_pass(prefix, length):
    number = card(prefix, length)
    assert luhn_valid(number)
    assert not contains_card_number(number)
    assert problems(with_value("items.0.product_name", number)) == []


@pytest.mark.parametrize("prefix", ("4",) + NO_NETWORK_PREFIXES)
def test_a_luhn_invalid_16_digit_number_passes(prefix):
    number = not_luhn(card(prefix, 16))
    assert len(number) == 16 and not luhn_valid(number)
    assert not contains_card_number(number) and not contains_card_number(grouped(number, "-"))
    assert problems(with_value("items.0.product_name", number)) == []


@pytest.mark.parametrize("written", [
    VISA, grouped(VISA), grouped(VISA, "-"), f"paid with {grouped(VISA)} thanks", f"ref 12 {VISA}",
    f"{grouped(VISA)} 2", AMEX, f"{AMEX[:4]} {AMEX[4:10]} {AMEX[10:]}", MASTERCARD_2_SERIES, VISA_13, UNIONPAY_19,
    "".join(chr(ord(char) + 0xFEE0) for char in VISA),  # full-width digits
    card("0", 16), card("2026", 16),  # no card network's prefix: a card number all the same
], ids=["plain", "spaces", "dashes", "in-text", "after-a-number", "before-a-number", "amex", "amex-grouped",
        "mastercard-2", "visa-13", "unionpay-19", "full-width", "prefix-0", "date-prefix"])
def test_card_numbers_are_found_however_they_are_written(written):
    assert contains_card_number(written)
    (problem,) = problems(with_value("items.0.product_name", written))
    assert problem.path == f"{PATH}.items[0].product_name"
    assert VISA not in problem.message and VISA[-4:] not in problem.message


@pytest.mark.parametrize("written", [
    not_luhn(VISA),                     # fails the Luhn check
    grouped(not_luhn(VISA)),
    card("4", 12),                      # too short
    card("4", 20),                      # too long
    VISA + "0000",                      # a longer digit string is not cut up
    next(VISA + d for d in "0123456789" if not luhn_valid(VISA + d)),
    next(d + VISA for d in "123456789" if not luhn_valid(d + VISA)),
    "AB-12345678", "E-042", "M-000123",
], ids=["not-luhn", "not-luhn-grouped", "12-digits", "20-digits", "digits-after", "digit-after", "digit-before",
        "fiscal-no", "employee", "member"])
def test_other_digit_strings_pass(written):
    assert not contains_card_number(written)
    assert problems(with_value("items.0.product_name", written)) == []


def test_amounts_and_quantities_are_numbers_not_text():
    # A 15-digit amount that happens to read as an American Express number is an amount.
    body = record_body(currency="JPY", subtotal_amount=AMEX, total_amount=AMEX)
    body["items"][0].update(unit_price=AMEX, line_amount=AMEX, quantity=AMEX)
    body["payments"][0]["amount"] = AMEX
    assert problems(body) == []


def test_every_card_number_of_the_free_text_is_reported_in_walk_order():
    body = record_body(member_id=VISA, order_source=grouped(AMEX, "-"), employee_id=VISA, trade_record_id=AMEX)
    body["items"][0]["modifiers"][0]["option_name"] = f"note {grouped(VISA)}"
    body["items"][0]["modifiers"][0]["option_id"] = VISA
    body["payments"][0]["payment_method_detail"] = UNIONPAY_19
    body["payments"][0]["payment_id"] = UNIONPAY_19
    assert [problem.path for problem in problems(body)] == [
        f"{PATH}.order_source", f"{PATH}.member_id", f"{PATH}.items[0].modifiers[0].option_name",
        f"{PATH}.payments[0].payment_method_detail",
    ]


def test_member_id_problems_come_before_card_numbers():
    body = record_body(member_id="jane@example.com", order_source_detail=VISA)
    assert [problem.path for problem in problems(body)] == [f"{PATH}.member_id", f"{PATH}.order_source_detail"]


def test_a_free_text_field_added_to_the_model_later_is_covered_and_an_identifier_is_not():
    @record_part
    class LaterTradeRecord(TradeRecord):
        delivery_note: FreeString50 | None = Field(default=None)
        courier_remark: Text | None = None
        platform_order_id: Code | None = None
        platform_refs: list[Code] = Field(default_factory=list)

    record = parsed(record_body(
        delivery_note=f"card {grouped(VISA)}", courier_remark=card("8", 19), platform_order_id=VISA,
        platform_refs=[card("1", 16), AMEX]), LaterTradeRecord)
    assert [problem.path for problem in protection_problems(PATH, record, "US")] == [
        f"{PATH}.delivery_note", f"{PATH}.courier_remark"]


def test_the_walk_leaves_out_identifiers_enums_amounts_and_timestamps():
    body = record_body(original_trade_record_id="T-1000")
    body["payments"][0]["original_payment_id"] = "PAY-0"
    walked = {path.removeprefix(f"{PATH}.") for path, _ in text_fields(parsed(body), PATH)}
    assert {wire_path(field).removeprefix(f"{PATH}.") for field in FREE_TEXT_FIELDS} <= walked
    for identifier in IDENTIFIER_FIELDS:
        assert wire_path(identifier).removeprefix(f"{PATH}.") not in walked
    for left_out in ("order_type", "status", "items[0].product_type", "items[0].tax_category",
                     "payments[0].payment_method", "total_amount", "items[0].quantity", "items[0].unit_price",
                     "tax_lines[0].tax_rate", "payments[0].amount", "opened_at", "business_date"):
        assert left_out not in walked
