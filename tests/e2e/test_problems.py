"""Every problem of a request in one 400, in words a partner understands (decision 0012), over HTTP.

A body its model refuses still has its readable parts checked (amounts against a valid currency,
repeated ids, the records that are valid on their own); the problems come sorted in the order of the
body as sent, each once; pydantic's wording ("Input should be a valid string") is never shown, nor any
value the partner sent.
"""

from __future__ import annotations

import json

import pytest

from tests.e2e.test_business_day import DAY, open_store
from tests.payloads import (
    changed,
    error_paths,
    mapping_batch,
    modifier_group,
    problem_of,
    product,
    products_batch,
    store,
    stores_batch,
)
from tests.trade_payloads import Line, daily_close, trade_batch, trade_record

CARD = "4111 1111 1111 1111"
TOTALS = {
    "trade_record_count": 1,
    "item_row_count": 1,
    "payment_row_count": 1,
    "net_sales_amount": "5.50",
    "tax_amount": "0.44",
    "tip_amount": "0.00",
    "payment_total_amount": "5.94",
}


def errors_of(response, code: str = "INVALID_PAYLOAD") -> list[dict]:
    errors = problem_of(response, 400, code)["errors"]
    for error in errors:
        assert "Input should" not in error["message"] and "Field required" not in error["message"], error
    assert len({(e["path"], e["message"]) for e in errors}) == len(errors), errors  # each problem once
    return errors


def message_at(response, path: str) -> str:
    found = [error["message"] for error in errors_of(response) if error["path"] == path]
    assert len(found) == 1, (path, response.json())
    return found[0]


def sale(store_id="S1", **changes) -> dict:
    return trade_record(store_id, DAY, [Line("P-BURGER", 1, 550), Line("P-FRIES", 1, 300)], tax=44, **changes)


# --- every problem at once ---------------------------------------------------------------------------


def test_a_close_with_a_json_number_and_wrong_places_reports_both(partner):
    open_store(partner)
    body = daily_close("S1", DAY, {**TOTALS, "net_sales_amount": 5.5, "tax_amount": "0.440"})
    response = partner.post("daily-close", body)
    assert error_paths(response) == ["net_sales_amount", "tax_amount"]
    assert message_at(response, "net_sales_amount") == 'must be a decimal string such as "10.32", not a JSON number'
    assert message_at(response, "tax_amount") == "USD amounts have exactly 2 decimal places (for example 12.50)"
    assert partner.get(f"daily-close/S1/{DAY}").json()["status"] == "NOT_RECEIVED"


def test_a_refused_batch_still_checks_its_readable_parts(partner):
    open_store(partner)
    card_holder = sale(member_id=CARD)  # valid on its own: every check that needs no stored data runs
    broken = sale(total_amount=9.94, tax_amount="0.4")  # refused by pydantic: its readable amounts are read
    broken["items"][1]["line_no"] = 1
    broken["items"][0]["product_name"] = 42
    moved = sale(store_id="S2")
    yen = sale(currency="JPY", total_amount=994)  # a JSON number, and amounts with places JPY has not
    body = trade_batch("S1", DAY, [card_holder, broken, moved, yen])
    response = partner.post("trade-records", body)
    paths = error_paths(response)
    assert paths == [
        "trade_records[0].member_id",
        "trade_records[1].tax_amount",
        "trade_records[1].total_amount",
        "trade_records[1].items[0].product_name",
        "trade_records[1].items[1].line_no",
        "trade_records[2].store_id",
        "trade_records[3].subtotal_amount",
        "trade_records[3].discount_amount",
        "trade_records[3].tax_amount",
        "trade_records[3].service_charge_amount",
        "trade_records[3].tip_amount",
        "trade_records[3].rounding_amount",
        "trade_records[3].total_amount",
        "trade_records[3].items[0].unit_price",
        "trade_records[3].items[0].discount_amount",
        "trade_records[3].items[0].line_amount",
        "trade_records[3].items[1].unit_price",
        "trade_records[3].items[1].discount_amount",
        "trade_records[3].items[1].line_amount",
        "trade_records[3].payments[0].amount",
        "trade_records[3].payments[0].tip_amount",
    ]
    assert message_at(response, "trade_records[1].items[1].line_no") == "duplicate of trade_records[1].items[0].line_no"
    assert "JPY amounts have no decimal places" in message_at(response, "trade_records[3].subtotal_amount")
    assert "card number" in message_at(response, "trade_records[0].member_id")
    assert CARD not in response.text and CARD.replace(" ", "") not in response.text


def test_problems_come_in_the_order_of_the_body_as_sent(partner):
    open_store(partner)
    close = daily_close("S1", DAY, {**TOTALS, "tip_amount": "0.0", "net_sales_amount": "5.5"})
    del close["closed_at"]
    reordered = {"tip_amount": close.pop("tip_amount"), "closed_at": "2026-11-21T04:05:00", **close}
    del reordered["payment_row_count"]  # missing: after every member sent
    response = partner.post("daily-close", json.dumps(reordered))
    assert error_paths(response) == ["tip_amount", "closed_at", "net_sales_amount", "payment_row_count"]
    assert message_at(response, "payment_row_count") == "is required"


def test_a_refused_body_also_says_when_a_member_name_is_repeated(partner):
    body = json.dumps(daily_close("S1", DAY, {**TOTALS, "tax_amount": 0.44}))
    body = body.replace('"store_id": "S1"', '"store_id": "S1", "store_id": "S2"')
    response = partner.post("daily-close", body)
    assert error_paths(response) == ["$", "tax_amount"]
    assert "same member name twice" in message_at(response, "$")


def test_a_refused_products_batch_lists_repeats_places_and_rules(partner):
    broken = product("P-1", status="active", unit_price="5.5")
    combo_rule = product("P-2", combo_components=[{"product_id": "P-1", "quantity": "1", "is_substitutable": False}])
    body = products_batch(
        [broken, combo_rule, product("P-1")],
        [modifier_group("G-1", min_select=2, max_select=1), modifier_group("G-1", name={})],
    )
    response = partner.put("products", body)
    assert error_paths(response) == [
        "products[0].unit_price",
        "products[0].status",
        "products[1].combo_components",
        "products[2].product_id",
        "modifier_groups[0].max_select",
        "modifier_groups[1].group_id",
        "modifier_groups[1].name",
    ]
    assert message_at(response, "products[0].status") == "must be one of ACTIVE, INACTIVE (case-sensitive)"
    assert message_at(response, "modifier_groups[1].name") == "must not be empty"


def test_a_refused_stores_batch_lists_its_repeated_store_ids(partner):
    body = stores_batch(store("S1"), store("S1", prices_include_tax="false"))
    response = partner.put("stores", body)
    assert error_paths(response) == ["stores[1].store_id", "stores[1].prices_include_tax"]
    assert message_at(response, "stores[1].prices_include_tax") == "must be true or false, not a string"


def test_a_refused_mapping_lists_unknown_codes_beside_the_other_problems(partner):
    body = mapping_batch(("01", "SALE"), ("02", "sale"), ("01", "REFUND"))
    body["mappings"].append({"source_code": 3, "standard_code": "VOID"})
    response = partner.put("mappings/transaction-types", body)
    assert error_paths(response) == ["mappings[1].standard_code", "mappings[2].source_code", "mappings[3].source_code"]
    unknown = message_at(response, "mappings[1].standard_code")
    assert "case-sensitive" in unknown and "GET /pos/v1/reference/transaction-types" in unknown


def test_unknown_codes_alone_keep_their_own_code_and_say_where_the_list_is(partner):
    response = partner.put("mappings/transaction-types", mapping_batch(("01", "Sale")))
    [error] = errors_of(response, "UNKNOWN_STANDARD_CODE")
    assert error["path"] == "mappings[0].standard_code"
    assert "case-sensitive" in error["message"] and "/pos/v1/reference/transaction-types" in error["message"]


def test_a_well_formed_batch_lists_its_own_and_its_stored_data_problems_together(partner):
    open_store(partner)  # a USD store
    records = [sale(tax_amount="0.4"), sale(currency="EUR"), sale(store_id="S2")]
    records[0]["items"][1]["line_no"] = 1
    response = partner.post("trade-records", trade_batch("S1", DAY, records))
    assert error_paths(response) == [
        "trade_records[0].tax_amount",
        "trade_records[0].items[1].line_no",
        "trade_records[1].currency",
        "trade_records[2].store_id",
    ]


def test_a_malformed_body_is_answered_before_the_store_check_a_well_formed_one_after(new_partner):
    partner = new_partner(stores=("S1",))
    malformed = stores_batch(store("NOT-MINE", currency=840))
    assert error_paths(partner.put("stores", malformed)) == ["stores[0].currency"]
    repeated = stores_batch(store("NOT-MINE"), store("NOT-MINE"))
    problem_of(partner.put("stores", repeated), 403, "STORE_NOT_ALLOWED")


# --- words a partner understands -----------------------------------------------------------------

WORDS = {  # field of a daily close: (value sent, message)
    "batch_id": [
        (1042, 'must be a UUID string such as "3f0c6d3e-2a59-4f4b-9a0e-0d6d2c1b7a01", not a JSON number'),
        ("b-1042", 'must be a UUID string such as "3f0c6d3e-2a59-4f4b-9a0e-0d6d2c1b7a01"'),
    ],
    "store_id": [
        (
            1042,
            "must be a string (store codes are JSON strings, also when they are numbers, such as "
            '"1042"), not a JSON number',
        ),
        ("", "must not be empty"),
        ("S/1", "must not contain / \\ ? #, control characters or line separators (store_id travels"),
        ("S" * 101, "must have at most 100 characters"),
    ],
    "business_date": [
        ("2026/11/20", "must be a date written YYYY-MM-DD, such as 2024-05-01"),
        (20261120, "must be a string holding a date written YYYY-MM-DD, such as 2024-05-01, not a JSON number"),
    ],
    "closed_at": [
        ("2026-11-21T04:05:00", "must carry a UTC offset (the offset is required"),
        (
            1763697900,
            "must be a string holding an RFC 3339 date-time with a UTC offset, such as "
            "2024-05-01T12:30:00+09:00 or 2024-05-01T03:30:00Z, not a JSON number",
        ),
        (
            "21.11.2026 04:05",
            "must be an RFC 3339 date-time with a UTC offset, such as "
            "2024-05-01T12:30:00+09:00 or 2024-05-01T03:30:00Z",
        ),
        ("0001-06-01T00:00:00Z", "must be on or after 0002-01-01T00:00:00Z"),
        ("9999-06-01T00:00:00+09:00", "must be before 9999-01-01T00:00:00Z"),
    ],
    "trade_record_count": [
        ("12", "must be an integer such as 2, not a string"),
        (12.0, "must be an integer written without a fraction or an exponent (2, not 2.0)"),
        (12.5, "must be an integer written without a fraction or an exponent (2, not 2.0)"),
        (-1, "must be at least 0"),
        (True, "must be an integer such as 2, not a boolean"),
    ],
    "batch_count": [(100_001, "must be at most 100000")],
    "tip_amount": [
        (0, 'must be a decimal string such as "10.32", not a JSON number'),
        (None, 'must be a decimal string such as "10.32", not null'),
        ("1,00", 'must be a decimal string such as "10.32": digits, an optional leading minus sign'),
    ],
    "currency": [
        ("usd", "must be an ISO 4217 currency code with minor units, such as USD or JPY"),
        (["USD"], 'must be an ISO 4217 currency code string such as "USD", not an array'),
    ],
}


@pytest.mark.parametrize(
    "field, sent, message", [(field, sent, message) for field, cases in WORDS.items() for sent, message in cases]
)
def test_each_refusal_is_worded_for_a_partner(partner, field, sent, message):
    body = changed(daily_close("S1", DAY, TOTALS), field, sent)
    response = partner.post("daily-close", body)
    said = message_at(response, field)
    assert said.startswith(message), said
    if isinstance(sent, str) and len(sent) > 3:
        assert sent not in response.text  # what was sent is never echoed


@pytest.mark.parametrize(
    "path, sent, message",
    [
        (
            "trade_records.0.order_type",
            "dine_in",
            "must be one of DINE_IN, TO_GO, PICK_UP, DELIVERY, DRIVE_THRU (case-sensitive)",
        ),
        (
            "trade_records.0.payments.0.payment_method",
            3,
            "must be one of CASH, CREDIT_CARD, DEBIT_CARD, MOBILE_WALLET, "
            "GIFT_CARD, LOYALTY_POINTS, VOUCHER, BANK_TRANSFER, OTHER "
            "(case-sensitive), not a JSON number",
        ),
        ("trade_records.0.items", {"line_no": 1}, "must be an array, not an object"),
        ("trade_records.0.items.0", ["P-BURGER"], "must be an object, not an array"),
        ("trade_records.0.payments.0.card_last4", "41111", "must be exactly 4 digits"),
        ("trade_records.0.prices_include_tax", "true", "must be true or false, not a string"),
        ("trade_records.0.items.0.quantity", 1, 'must be a decimal string such as "2" or "0.5", not a JSON number'),
        ("trade_records", [], "must not be empty"),
    ],
)
def test_records_are_worded_for_a_partner(partner, path, sent, message):
    body = changed(trade_batch("S1", DAY, [sale()]), path, sent)
    response = partner.post("trade-records", body)
    assert message_at(response, path.replace(".0", "[0]")) == message


# --- timestamps as .NET and Java clients write them --------------------------------------------------


@pytest.mark.parametrize(
    "closed_at",
    [
        "2026-11-21T04:05:00.1234567+09:00",  # .NET DateTimeOffset "o"
        "2026-11-21T04:05:00Z",
        "2026-11-21T04:05:00.000+0000",  # Java SimpleDateFormat "Z": no colon in the offset, accepted
        "2026-11-21T04:05:00.123Z",  # Java Instant, JavaScript toISOString
        "2026-11-21T04:05:00.123456789-05:00",  # Java OffsetDateTime with nanoseconds
        "2026-11-21 04:05:00+09:00",  # a space for the T: accepted as before
    ],
)
def test_timestamps_of_common_clients_are_accepted(partner, closed_at):
    open_store(partner)
    response = partner.post("daily-close", daily_close("S1", DAY, TOTALS, closed_at=closed_at))
    assert response.status_code == 202, response.text


@pytest.mark.parametrize(
    "closed_at, message",
    [
        (
            "2026-11-21T04:05:00.1234567",
            "must carry a UTC offset (the offset is required",
        ),  # .NET DateTime "o", Unspecified
        ("2026-11-21T04:05:00.000", "must carry a UTC offset (the offset is required"),  # Java LocalDateTime
        ("2026-11-21T04:05:00+09", "must be an RFC 3339 date-time with a UTC offset"),
        ("/Date(1763697900000)/", "must be an RFC 3339 date-time with a UTC offset"),  # old .NET JSON dates
    ],
)
def test_refused_timestamps_say_what_is_expected(partner, closed_at, message):
    response = partner.post("daily-close", daily_close("S1", DAY, TOTALS, closed_at=closed_at))
    assert message_at(response, "closed_at").startswith(message)
