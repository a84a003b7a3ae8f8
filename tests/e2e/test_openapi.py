"""The OpenAPI document: valid 3.1, generated from the app's routes and models, served and checked in
identically, and describing what the service really answers."""

from __future__ import annotations

import json

import pytest
import requests
from openapi_spec_validator import validate

from core.settings import PROJECT_ROOT
from ingest.wire.responses import (
    BatchResponse,
    CodeListResponse,
    DailyCloseStatus,
    HealthResponse,
    MappingResponse,
    Problem,
    TransactionTypesResponse,
)
from tests.e2e.test_business_day import DAY, DIRECTIONS, close_and_wait, push
from tests.payloads import mapping_batch, store, stores_batch
from tests.trade_payloads import Line, totals_of, trade_record
from triggers.openapi import OPERATIONS, app_functions, build_document, http_functions

CHECKED_IN = PROJECT_ROOT / "docs" / "openapi.json"


@pytest.fixture(scope="module")
def served(host) -> dict:
    response = requests.get(host.url("openapi.json"), timeout=30)
    assert response.status_code == 200
    return response.json()


def test_the_served_document_is_valid_openapi_3_1(served):
    assert served["openapi"] == "3.1.0"
    validate(served)


def test_the_checked_in_copy_equals_the_served_one_and_the_code(served):
    assert json.loads(CHECKED_IN.read_text(encoding="utf-8")) == served
    assert build_document(app_functions()) == served, "docs/openapi.json is stale: run `make openapi`"


def test_every_route_of_the_app_is_documented_and_nothing_else():
    functions = http_functions(app_functions())
    assert {name for name, _, _ in functions} == set(OPERATIONS)
    document = build_document(app_functions())
    documented = {(path, method) for path, item in document["paths"].items() for method in item}
    assert documented == {(f"/{route}", method) for _, route, methods in functions for method in methods}


def test_write_examples_are_valid_requests():
    document = build_document(app_functions())
    for item in document["paths"].values():
        for operation in item.values():
            body = operation.get("requestBody")
            if body:
                model = OPERATIONS[operation["operationId"]].request
                model.model_validate_json(json.dumps(body["content"]["application/json"]["example"]))


def test_headers_and_codes_are_documented(served):
    trade = served["paths"]["/trade-records"]["post"]
    assert served["components"]["securitySchemes"]["FunctionsKey"]["name"] == "x-functions-key"
    assert "Retry-After" in trade["responses"]["429"]["headers"]
    assert "Idempotent-Replayed" in trade["responses"]["200"]["headers"]
    assert {"202", "200", "400", "401", "403", "413", "429"} <= set(trade["responses"])
    warning_codes = served["components"]["schemas"]["BatchWarning"]["properties"]["code"]["examples"]
    assert {"AMOUNT_MISMATCH", "RESEND_BODY_IGNORED", "BUSINESS_DATE_MISMATCH"} <= set(warning_codes)
    assert served["paths"]["/health"]["get"]["security"] == []
    assert served["paths"]["/openapi.json"]["get"]["security"] == []


def test_both_security_schemes_are_declared_either_opens_a_keyed_operation(served):
    schemes = served["components"]["securitySchemes"]
    assert schemes["FunctionsKey"] == {**schemes["FunctionsKey"], "type": "apiKey", "in": "header"}
    assert schemes["BearerToken"] == {
        **schemes["BearerToken"],
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "JWT",
    }
    either = [{"FunctionsKey": []}, {"BearerToken": []}]
    assert served["security"] == either
    for path, item in served["paths"].items():
        for method, operation in item.items():
            if operation["security"]:
                assert operation["security"] == either, (path, method)
                assert "WWW-Authenticate" in operation["responses"]["401"]["headers"], (path, method)


def strict(model, response):
    return model.model_validate_json(response.content, strict=True)


def test_real_responses_match_the_documented_models(partner):
    strict(HealthResponse, partner.get("health"))
    strict(MappingResponse, partner.get("mappings/transaction-types"))
    strict(BatchResponse, partner.put("stores", stores_batch(store("S1"))))
    strict(BatchResponse, partner.put("mappings/transaction-types", mapping_batch()))
    strict(MappingResponse, partner.get("mappings/transaction-types"))
    strict(TransactionTypesResponse, partner.get("reference/transaction-types"))
    strict(CodeListResponse, partner.get("reference/order-types"))
    strict(Problem, partner.get("reference/nope"))
    strict(Problem, partner.put("stores", {"batch_id": "x"}))
    strict(DailyCloseStatus, partner.get(f"daily-close/S1/{DAY}"))
    record = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)])
    push(partner, "S1", [record])
    close_and_wait(partner, "S1", totals_of([record], {"01"}, DIRECTIONS))
    status = strict(DailyCloseStatus, partner.get(f"daily-close/S1/{DAY}"))
    assert status.details is not None
