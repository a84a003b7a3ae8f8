"""GET /reference/transaction-types and GET /reference/{code_type} over real HTTP (spec 2, 4.3, 4.4)."""

import datetime as dt
import re

import pytest
import requests

from tests.payloads import batch_id, problem_of, product, products_batch

CODE_TYPES = ("order-types", "order-sources", "payment-methods", "payment-types", "tax-categories")
# The values the specification names for each list (section 2); the lists may hold more.
SPEC_VALUES = {
    "order-types": {"DINE_IN", "TO_GO", "PICK_UP", "DELIVERY"},
    "order-sources": {"POS", "KIOSK", "DELIVERY_PLATFORM", "WEB"},
    "payment-methods": {"CREDIT_CARD", "LOYALTY_POINTS", "GIFT_CARD", "CASH"},
    "payment-types": {"SALE", "REFUND", "DEPOSIT", "DEPOSIT_APPLIED", "ADJUSTMENT"},
    "tax-categories": {"STANDARD", "REDUCED", "ZERO", "EXEMPT"},
}
LANGUAGE_TAG = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$")


def assert_code_list(body: dict) -> None:
    dt.date.fromisoformat(body["version"])  # the version is a date
    codes = [entry["code"] for entry in body["data"]]
    assert len(codes) == len(set(codes)), codes
    for entry in body["data"]:
        assert isinstance(entry["code"], str) and entry["code"]
        assert entry["name"] and all(LANGUAGE_TAG.match(tag) and text for tag, text in entry["name"].items()), entry


def test_transaction_types(partner):
    response = partner.get("reference/transaction-types")
    assert response.status_code == 200
    assert response.headers["Content-Type"].split(";")[0] == "application/json"
    body = response.json()
    assert_code_list(body)
    by_code = {entry["code"]: entry for entry in body["data"]}
    assert {"SALE", "REFUND", "VOID", "RETURN", "EXCHANGE", "NO_SALE"} <= set(by_code)
    assert (by_code["SALE"]["amount_sign"], by_code["SALE"]["is_revenue"]) == (1, True)
    assert by_code["REFUND"]["amount_sign"] == -1
    assert by_code["EXCHANGE"]["amount_sign"] is None  # the direction depends on each line
    for entry in body["data"]:
        assert set(entry) == {"code", "name", "is_revenue", "amount_sign", "description"}
        assert isinstance(entry["is_revenue"], bool)
        assert entry["amount_sign"] in (1, -1, 0, None)
        assert isinstance(entry["description"], str) and entry["description"]


@pytest.mark.parametrize("code_type", CODE_TYPES)
def test_code_lists(partner, code_type):
    response = partner.get(f"reference/{code_type}")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"version", "data"}
    assert_code_list(body)
    assert SPEC_VALUES[code_type] <= {entry["code"] for entry in body["data"]}
    # Only code and name: HQ-internal fields (such as a payment type's direction) stay inside.
    assert all(set(entry) == {"code", "name"} for entry in body["data"])


def test_the_answer_is_the_same_for_every_partner(new_partner):
    first, second = new_partner(), new_partner()
    assert first.get("reference/payment-methods").json() == second.get("reference/payment-methods").json()


@pytest.mark.parametrize("code_type", ["unknown", "Order-Types", "order_types", "transaction-type", "standard-codes"])
def test_an_unknown_code_type_is_not_found(partner, code_type):
    problem = problem_of(partner.get(f"reference/{code_type}"), 404, "NOT_FOUND")
    assert "order-types" in problem["detail"]  # it says which code types exist


@pytest.mark.parametrize("code_type", ["transaction-types", *CODE_TYPES, "unknown"])
def test_reference_lists_need_a_key(host, code_type):
    problem_of(requests.get(host.url(f"reference/{code_type}"), timeout=10), 401, "UNAUTHORIZED")


def test_the_tax_categories_served_are_the_ones_products_accept(partner):
    served = [entry["code"] for entry in partner.get("reference/tax-categories").json()["data"]]
    body = products_batch([product(f"P-{code}", tax_category=code) for code in served])
    assert partner.put("products", body).status_code == 202
    refused = partner.put("products", products_batch([product(tax_category="NOT_" + served[0])]))
    problem_of(refused, 400, "INVALID_PAYLOAD")


def test_the_standard_codes_served_are_the_ones_mappings_accept(partner):
    served = [entry["code"] for entry in partner.get("reference/transaction-types").json()["data"]]
    mappings = [{"source_code": f"C{number}", "standard_code": code} for number, code in enumerate(served)]
    response = partner.put("mappings/transaction-types", {"batch_id": batch_id(), "mappings": mappings})
    assert response.status_code == 202, response.text
