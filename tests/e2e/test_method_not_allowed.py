"""A method that a known path does not declare answers 405 with `Allow` (RFC 9110 section 15.5.6; decision
0101), on each backend, over HTTP: the app's own 405 functions, which the Functions host routes in Azure as
the local host does here. A path that does not exist is still 404."""

from __future__ import annotations

import json

import pytest
import requests

from core.settings import PROJECT_ROOT
from tests.payloads import problem_of
from triggers.method_not_allowed import HOST_METHODS

DOCUMENT = json.loads((PROJECT_ROOT / "docs" / "openapi.json").read_text(encoding="utf-8"))
VALUES = {"{store_id}": "S1", "{business_date}": "2026-11-20", "{code_type}": "order-types"}


def concrete(template: str) -> str:
    for name, value in VALUES.items():
        template = template.replace(name, value)
    return template.lstrip("/")


UNDECLARED = [
    (path, method, [m for m in HOST_METHODS if m.lower() in item])
    for path, item in DOCUMENT["paths"].items()
    for method in HOST_METHODS
    if method.lower() not in item
]


@pytest.mark.parametrize("path, method, allowed", UNDECLARED, ids=[f"{m} {p}" for p, m, _ in UNDECLARED])
def test_an_undeclared_method_of_a_known_path_is_405_with_allow(backend_host, path, method, allowed):
    response = requests.request(method, backend_host.url(concrete(path)), timeout=30)
    assert response.status_code == 405, response.text
    assert response.headers["Allow"] == ", ".join(allowed)
    assert response.headers["x-request-id"]
    if method != "HEAD":  # a HEAD answer has no body
        problem = problem_of(response, 405, "METHOD_NOT_ALLOWED")
        assert problem["detail"] == f"{method} is not supported here; use {', '.join(allowed)}."


def test_a_literal_route_wins_and_an_unknown_path_is_still_404(host):
    # reference/transaction-types beside reference/{code_type}: each answers for itself.
    assert requests.delete(host.url("reference/transaction-types"), timeout=30).headers["Allow"] == "GET"
    assert requests.post(host.url("mappings/transaction-types"), timeout=30).headers["Allow"] == "GET, PUT"
    for method in ("GET", "DELETE"):
        problem_of(requests.request(method, host.url("no-such-thing"), timeout=30), 404, "NOT_FOUND")
    # The declared method still answers as before: a missing key is 401, not 405.
    problem_of(requests.put(host.url("stores"), json={}, timeout=30), 401, "UNAUTHORIZED")
