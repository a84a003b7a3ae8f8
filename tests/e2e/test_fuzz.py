"""Fuzzing from the served OpenAPI document (schemathesis): every operation, with a fixed seed and a
bounded number of examples, answers no 5xx and only what the document describes (status code,
content type, body schema, headers).

Generated requests carry a real partner's key, and three in four name one of its registered stores
and are fitted to its master data (currency, money places, country...), so that valid requests get
past the key, the store and the currency checks and reach the use cases and the storage; the
documented example of each write is sent too. `make fuzz` runs the same test with more
examples (FUZZ_EXAMPLES) and prints a summary (FUZZ_SUMMARY names the file it is appended to).
"""

from __future__ import annotations

import copy
import decimal
import itertools
import json
import os
import time
import uuid
from pathlib import Path

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.conftest import ROOT, make_partner

DOCUMENT = json.loads((ROOT / "docs" / "openapi.json").read_text(encoding="utf-8"))
OPERATIONS = [(path, method.upper()) for path, item in DOCUMENT["paths"].items() for method in item]
# Negative examples (outside the schema) for the operations that take something to break: a body or
# path parameters.
RUNS = [
    (path, method, mode)
    for path, method in OPERATIONS
    for mode in GenerationMode
    if mode is GenerationMode.POSITIVE or {"requestBody", "parameters"} & set(DOCUMENT["paths"][path][method.lower()])
]
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "25"))  # per operation and generation mode
SEED = int(os.environ.get("FUZZ_SEED", "20261122"))
MAX_ITEMS = int(os.environ.get("FUZZ_MAX_ITEMS", "3"))  # items per array of a request body; 0: as documented
# Registered for the fuzzing partner: the example day's stores, and one whose currency has 4 places.
STORES = ("NYC-001", "TKY-001", "SCL-001")
CHILE = {
    "store_id": "SCL-001",
    "store_name": "Providencia",
    "country_code": "CL",
    "currency": "CLF",
    "time_zone": "America/Santiago",
    "locale": "es-CL",
    "workday_start": "05:00",
    "prices_include_tax": True,
    "status": "ACTIVE",
    "last_modified_at": "2026-11-01T09:00:00-03:00",
}
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]


@pytest.fixture(scope="module", params=["sqlite", "azure"])
def fuzz_host(request):
    """The local host on each backend (SQLite; Cosmos DB and Azurite emulators), without a rate limit."""
    return request.getfixturevalue("host" if request.param == "sqlite" else "azure_host")


@pytest.fixture(scope="module")
def fuzz_key(fuzz_host) -> str:
    partner = make_partner(fuzz_host, STORES, prefix="fuzz")
    for name, path in (
        ("stores.json", "stores"),
        ("mapping.json", "mappings/transaction-types"),
        ("products.json", "products"),
    ):
        body = (ROOT / "examples" / "day" / name).read_bytes()
        assert partner.put(path, body).status_code == 202
    assert partner.put("stores", {"batch_id": str(uuid.uuid4()), "stores": [CHILE]}).status_code == 202
    return partner.key


def _references(node, found: set[str]) -> set[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            found.add(node["$ref"].rsplit("/", 1)[-1])
        for value in node.values():
            _references(value, found)
    elif isinstance(node, list):
        for value in node:
            _references(value, found)
    return found


def _closure(names: set[str], schemas: dict) -> set[str]:
    todo, seen = list(names), set()
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += _references(schemas[name], set())
    return seen


def _cap_arrays(node, cap: int) -> None:
    if isinstance(node, dict):
        if node.get("type") == "array":
            node["maxItems"] = min(node.get("maxItems", cap), max(cap, node.get("minItems", 0)))
        for value in node.values():
            _cap_arrays(value, cap)
    elif isinstance(node, list):
        for value in node:
            _cap_arrays(value, cap)


def bounded(document: dict, cap: int) -> dict:
    """The document with the arrays of request bodies capped at `cap` items (0: as it is). Generating
    a batch of up to 500 records, each with lists of items and modifiers, costs seconds per example;
    capped, the same seed explores the same fields in a fraction of the time. Response schemas, which
    the answers are checked against, are left as they are."""
    if not cap:
        return document
    document = copy.deepcopy(document)
    schemas = document["components"]["schemas"]
    requests_ = _closure(
        _references([op.get("requestBody") for item in document["paths"].values() for op in item.values()], set()),
        schemas,
    )
    responses = _closure(
        _references([op["responses"] for item in document["paths"].values() for op in item.values()], set()), schemas
    )
    for name in requests_ - responses:
        _cap_arrays(schemas[name], cap)
    return document


@pytest.fixture(scope="module")
def schema(fuzz_host):
    served = requests.get(fuzz_host.url("openapi.json"), timeout=30)
    assert served.status_code == 200
    return schemathesis.openapi.from_dict(bounded(served.json(), MAX_ITEMS))


# What the registered stores' master data says (examples/day/stores.json).
STORE_FACTS = {
    "NYC-001": {
        "currency": "USD",
        "exponent": 2,
        "country_code": "US",
        "time_zone": "America/New_York",
        "locale": "en-US",
    },
    "TKY-001": {"currency": "JPY", "exponent": 0, "country_code": "JP", "time_zone": "Asia/Tokyo", "locale": "ja-JP"},
    "SCL-001": {
        "currency": "CLF",
        "exponent": 4,
        "country_code": "CL",
        "time_zone": "America/Santiago",
        "locale": "es-CL",
    },
}
MONEY = {
    "unit_price",
    "discount_amount",
    "line_amount",
    "price_delta",
    "amount",
    "tip_amount",
    "taxable_amount",
    "tax_amount",
    "subtotal_amount",
    "service_charge_amount",
    "rounding_amount",
    "total_amount",
    "net_sales_amount",
    "payment_total_amount",
}
STANDARD_CODES = ("SALE", "REFUND", "VOID", "RETURN", "EXCHANGE", "NO_SALE")
LANGUAGES = ("en-US", "zh-TW", "ja-JP", "fr", "de-CH")


def _fit(node, store_id: str, facts: dict, business_date) -> None:
    """Make a generated body agree with a registered store where the schema cannot say it: the store's
    code, currency, country, zone and language, amounts with its currency's places (and below 10**9),
    the batch's date in every record, standard codes from the list, integers written as integers.
    Everything else stays as generated."""
    if isinstance(node, list):
        for item in node:
            _fit(item, store_id, facts, business_date)
        return
    if not isinstance(node, dict):
        return
    for name, value in list(node.items()):
        if name == "store_id" and isinstance(value, str):
            node[name] = store_id
        elif name in ("currency", "country_code", "time_zone", "locale") and isinstance(value, str):
            node[name] = facts[name]
        elif name == "business_date" and isinstance(value, str) and business_date is not None:
            node[name] = business_date
        elif name == "standard_code" and isinstance(value, str):
            node[name] = STANDARD_CODES[len(value) % len(STANDARD_CODES)]
        elif isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
            node[name] = int(value)  # the generator writes integers as 2.0 too, which the service refuses
        elif name in ("name", "category_name") and isinstance(value, dict) and value:
            node[name] = dict(zip(LANGUAGES, value.values(), strict=False))  # fewer names than languages is fine
        elif name in MONEY and isinstance(value, str):
            try:
                amount = decimal.Decimal(value)
            except decimal.InvalidOperation:
                continue
            if amount.is_finite():
                if abs(amount) >= 10**9:  # within the 2**53 - 1 minor units every currency allows
                    amount = amount % 10**9
                node[name] = f"{amount:.{facts['exponent']}f}"
        else:
            _fit(value, store_id, facts, business_date)


def _with_registered_store(case, store_id: str | None, batch_id: uuid.UUID):
    """Three cases in four name a registered store, fitted to its master data, with a batch_id of
    their own, so that valid requests get past the store and currency checks and reach the use cases
    (rather than the ALREADY_RECEIVED of the few UUIDs the generator favours)."""
    if store_id is None:
        return case
    if case.path_parameters and "store_id" in case.path_parameters:
        case.path_parameters["store_id"] = store_id
    if isinstance(case.body, dict):
        date = case.body.get("business_date")
        _fit(case.body, store_id, STORE_FACTS[store_id], date if isinstance(date, str) else None)
        if isinstance(case.body.get("stores"), list):
            del case.body["stores"][1:]  # one registered store per currency: no duplicates
        if isinstance(case.body.get("batch_id"), str):
            case.body["batch_id"] = str(batch_id)
    return case


class Tally:
    """What a run did, for `make fuzz`'s summary."""

    def __init__(self) -> None:
        self.calls = 0
        self.statuses: dict[int, int] = {}

    def add(self, status: int) -> None:
        self.calls += 1
        self.statuses[status] = self.statuses.get(status, 0) + 1


def _report(path: str, method: str, mode: str, tally: Tally, seconds: float, failure: str | None) -> None:
    target = os.environ.get("FUZZ_SUMMARY")
    if not target:
        return
    line = {
        "operation": f"{method} {path}",
        "mode": mode,
        "examples": EXAMPLES,
        "seed": SEED,
        "calls": tally.calls,
        "statuses": {str(k): v for k, v in sorted(tally.statuses.items())},
        "seconds": round(seconds, 1),
        "failure": failure,
    }
    with Path(target).open("a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


@pytest.mark.parametrize("path, method, mode", RUNS, ids=[f"{m} {p} {mode}" for p, m, mode in RUNS])
def test_every_operation_conforms_to_the_document(schema, fuzz_host, fuzz_key, path, method, mode):
    operation = schema[path][method]
    headers = {"x-functions-key": fuzz_key}
    tally = Tally()
    session = requests.Session()

    def call(case):
        response = case.call_and_validate(
            base_url=fuzz_host.base_url,
            session=session,
            headers=headers,
            checks=CHECKS,
            timeout=60,
        )
        tally.add(response.status_code)
        assert response.headers.get("x-request-id"), "every answer carries x-request-id"

    strategy = st.tuples(operation.as_strategy(generation_mode=mode), st.sampled_from((None, *STORES)))
    # A batch_id per fitted case, the same in every run of a seed (the generator's own UUIDs repeat).
    batch_ids = (uuid.UUID(int=(SEED << 64) + number) for number in itertools.count())

    @seed(SEED)
    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        print_blob=False,
        suppress_health_check=list(HealthCheck),
    )
    @given(generated=strategy)
    def fuzz(generated):
        call(_with_registered_store(*generated, next(batch_ids)))

    started = time.monotonic()
    failure = None
    try:
        if mode is GenerationMode.POSITIVE:
            body = DOCUMENT["paths"][path][method.lower()].get("requestBody")
            example = body["content"]["application/json"].get("example") if body else None
            if example is not None:  # the documented example: a request that succeeds
                call(operation.Case(body=example, media_type="application/json"))
        fuzz()
    except BaseException as error:
        failure = f"{type(error).__name__}: {str(error)[:2000]}"
        raise
    finally:
        session.close()
        _report(path, method, str(mode), tally, time.monotonic() - started, failure)


def test_a_partners_day_follows_the_documents_links(schema, fuzz_host, fuzz_key):
    """Stateful: schemathesis chains operations along the document's links (a store-day's write, then its
    reads with the values the write sent), fitted to a registered store, with the same checks."""
    batch_ids = (uuid.UUID(int=(SEED << 65) + number) for number in itertools.count())
    headers = {"x-functions-key": fuzz_key}

    class PartnersDay(schema.as_state_machine()):  # type: ignore[misc]
        def before_call(self, case):
            _with_registered_store(case, STORES[0], next(batch_ids))

        def get_call_kwargs(self, case):
            return {"base_url": fuzz_host.base_url, "headers": headers, "timeout": 60}

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            case.validate_response(response, checks=CHECKS, transport_kwargs=kwargs)

    PartnersDay.run(
        settings=settings(
            max_examples=EXAMPLES,
            stateful_step_count=6,
            derandomize=True,
            database=None,
            deadline=None,
            print_blob=False,
            suppress_health_check=list(HealthCheck),
        )
    )
