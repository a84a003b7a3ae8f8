"""Hostile and broken input, on both backends: every request below is answered with the documented 4xx
(an RFC 9457 problem document with the specification's code and a request id) and stores nothing,
which is checked by reading the storage afterwards (through the storage port on both backends, and
with SQL on SQLite) and by sending the same batch_id properly afterwards (a first acceptance).

tests/e2e/test_http_edge.py covers the malformed bodies, content types and size limit of the master-data
writes on SQLite; this file covers every write, the path parameters, and both backends.
"""

from __future__ import annotations

import copy
import datetime as dt
import http.client
import json
import time
import uuid
from urllib.parse import urlsplit

import pytest
import requests

from ingest.wire.requests import DailyClose, TradeRecordsBatch
from ingest.wire.scalars import MAX_BATCHES_PER_DAY
from tests.backend_storage import footprint
from tests.conftest import make_partner
from tests.payloads import mapping_batch, problem_of, products_batch, store, stores_batch
from tests.trade_payloads import Line, daily_close, trade_batch, trade_record

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")  # the Cosmos emulator

DAY = "2026-11-20"
MAX_BODY = 5 * 1024 * 1024
TOTALS = {
    "trade_record_count": 1,
    "item_row_count": 1,
    "payment_row_count": 1,
    "net_sales_amount": "5.50",
    "tax_amount": "0.00",
    "tip_amount": "0.00",
    "payment_total_amount": "5.50",
}


@pytest.fixture(scope="module")
def victim(backend_host):
    """One partner per backend and worker, with store S1 and its master data: every request of this
    file is refused, so its data never changes (checked after each test)."""
    partner = make_partner(backend_host, ("S1",), prefix="hostile")
    assert partner.put("stores", stores_batch(store("S1"))).status_code == 202
    return partner


def full_trade_record(**changes) -> dict:
    """A valid record with every optional part present (a modifier, a tax line, every optional field),
    so that every field of the model has a place in the body."""
    record = trade_record(
        "S1",
        DAY,
        [
            Line(
                "P-BURGER",
                1,
                550,
                modifiers=[
                    {
                        "group_id": "G-CHEESE",
                        "option_id": "O-CHEDDAR",
                        "option_name": "Cheddar",
                        "quantity": "1",
                        "price_delta": "0.00",
                    }
                ],
            )
        ],
    )
    record.update(
        order_source_detail="Counter",
        original_trade_record_id=None,
        fiscal_document_no="F-1",
        employee_id="E-7",
        guest_count=2,
        member_id="M-0001",
        closed_at="2026-11-20T12:30:00-05:00",
    )
    record["items"][0].update(tax_category="STANDARD")
    record["payments"][0].update(payment_method_detail="VISA", card_last4="4242", original_payment_id=None)
    record["tax_lines"] = [
        {"tax_code": "NY", "tax_rate": "0.08875", "taxable_amount": "5.50", "tax_amount": "0.00", "is_inclusive": False}
    ]
    record.update(changes)
    return record


def trade_body() -> dict:
    return trade_batch("S1", DAY, [full_trade_record()])


def close_body() -> dict:
    return daily_close("S1", DAY, TOTALS)


WRITES = {
    "stores": ("PUT", "stores", lambda: stores_batch(store("S1", store_name="Changed"))),
    "products": ("PUT", "products", lambda: products_batch()),
    "mappings": ("PUT", "mappings/transaction-types", lambda: mapping_batch()),
    "trade-records": ("POST", "trade-records", trade_body),
    "daily-close": ("POST", "daily-close", close_body),
}


def send(
    partner, method: str, path: str, data: bytes, content_type: str | None = "application/json", session=None
) -> requests.Response:
    headers = partner.headers()
    if content_type is not None:
        headers["Content-Type"] = content_type
    return (session or requests).request(method, partner.host.url(path), data=data, headers=headers, timeout=120)


def sqlite_rows(host, partner_id: str) -> dict:
    """Rows of every data table for this partner (SQLite only)."""
    tables = ("batches", "stores", "products", "modifier_groups", "mappings", "trade_records", "closed_days")
    return {
        table: host.query(f"SELECT count(*) FROM {table} WHERE partner_id = ?", partner_id)[0][0] for table in tables
    }


class NothingStored:
    """Checks around a set of refused requests that the partner's data did not change and that none
    of their batch_ids was recorded (so a resend is a first acceptance, not ALREADY_RECEIVED)."""

    def __init__(self, partner, batch_ids=()) -> None:
        self.partner = partner
        self.batch_ids = tuple(batch_ids)
        self.before = self._state()

    def _state(self):
        host = self.partner.host
        state = footprint(host, self.partner.partner_id, batch_ids=self.batch_ids)
        if host.env.get("POS_BACKEND", "sqlite") == "sqlite":
            state["sql"] = sqlite_rows(host, self.partner.partner_id)
        return state

    def check(self) -> None:
        after = self._state()
        assert after == self.before
        assert all(marker is None for marker in after["batches"].values())


def refused(response, status: int, code: str) -> dict:
    problem = problem_of(response, status, code)
    assert response.headers["x-request-id"] == problem["request_id"]
    return problem


def invalid_at(response, *paths: str) -> list[dict]:
    """400 INVALID_PAYLOAD whose problems are exactly at `paths` (any order)."""
    errors = refused(response, 400, "INVALID_PAYLOAD")["errors"]
    assert sorted({error["path"] for error in errors}) == sorted(set(paths)), errors
    return errors


def encoded(body: dict) -> bytes:
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


def replace_once(data: bytes, old: bytes, new: bytes) -> bytes:
    assert data.count(old) == 1, old
    return data.replace(old, new)


def test_the_bodies_the_cases_start_from_are_valid(backend_host):
    """Each case below breaks one thing in one of these; sent as they are, they are accepted."""
    partner = make_partner(backend_host, ("S1",), prefix="valid")
    for write in ("stores", "products", "mappings", "trade-records", "daily-close"):
        method, path, make = WRITES[write]
        response = send(partner, method, path, encoded(make()))
        assert response.status_code == 202, (write, response.text)
        assert response.json()["warnings"] == [] or write == "trade-records", response.text


# --- malformed, truncated and non-UTF-8 bodies ---------------------------------------------------


@pytest.mark.parametrize("write", WRITES)
def test_a_truncated_body_is_invalid_and_stores_nothing(victim, write):
    method, path, make = WRITES[write]
    body = make()
    data = encoded(body)
    guard = NothingStored(victim, [body["batch_id"]])
    for cut in (1, len(data) // 3, len(data) // 2, len(data) - 1):
        invalid_at(send(victim, method, path, data[:cut]), "$")
    invalid_at(send(victim, method, path, data + b"}"), "$")  # one brace too many
    invalid_at(send(victim, method, path, b"  \r\n\t "), "$")  # only whitespace
    guard.check()


def utf8_breakages() -> dict[str, tuple[bytes, bytes]]:
    """(marker, replacement) pairs that break UTF-8 inside a string value."""
    return {
        "invalid byte": (b"MARK", b"\xff"),
        "overlong slash": (b"MARK", b"\xc0\xaf"),
        "encoded surrogate": (b"MARK", b"\xed\xa0\x80"),
        "truncated sequence": (b"MARK", b"\xe5\x8f"),
        "latin-1": (b"MARK", "Café".encode("latin-1")),
        "lone surrogate escape": (b"MARK", b"\\ud800"),
        "reversed surrogate escapes": (b"MARK", b"\\udc00\\ud800"),
    }


@pytest.mark.parametrize("breakage", utf8_breakages())
def test_invalid_utf8_is_invalid_and_stores_nothing(victim, breakage):
    old, new = utf8_breakages()[breakage]
    trade = trade_body()
    trade["trade_records"][0]["items"][0]["product_name"] = "MARK"
    stores = stores_batch(store("S1", store_name="MARK"))
    guard = NothingStored(victim, [trade["batch_id"], stores["batch_id"]])
    invalid_at(send(victim, "POST", "trade-records", replace_once(encoded(trade), old, new)), "$")
    invalid_at(send(victim, "PUT", "stores", replace_once(encoded(stores), old, new)), "$")
    guard.check()


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32", "utf-8-sig"])
def test_a_body_in_another_encoding_or_with_a_bom_is_invalid(victim, encoding):
    body = trade_body()
    guard = NothingStored(victim, [body["batch_id"]])
    invalid_at(send(victim, "POST", "trade-records", json.dumps(body).encode(encoding)), "$")
    guard.check()


# --- duplicate member names ----------------------------------------------------------------------

DUPLICATES = {
    # (write, marker in the encoded valid body, the same member again)
    "batch_id": ("trade-records", b'"batch_seq": 1, ', b'"batch_id": "%s", ' % str(uuid.uuid4()).encode()),
    "same value twice": ("daily-close", b'"batch_count": 1, ', b'"batch_count": 1, "batch_count": 1, '),
    "record amount": (
        "trade-records",
        b'"total_amount": "5.50", ',
        b'"total_amount": "5.50", "total_amount": "0.01", ',
    ),
    "store currency": ("stores", b'"currency": "USD", ', b'"currency": "USD", "currency": "JPY", '),
    "language of a name": ("products", b'"en-US": "Cheeseburger", ', b'"en-US": "Cheeseburger", "en-US": "X", '),
    "mapping entry": ("mappings", b'"standard_code": "SALE"', b'"standard_code": "REFUND", "standard_code": "SALE"'),
    "ignored field": ("daily-close", b'"batch_count": 1, ', b'"batch_count": 1, "note": 1, "note": 2, '),
}


@pytest.mark.parametrize("case", DUPLICATES)
def test_a_member_name_twice_in_one_object_is_invalid(victim, case):
    """Decision: refused (decision 0016). Parsers disagree on which of two equal names counts, so
    one batch_id could mean two different batches to the partner and to HQ."""
    write, marker, duplicate = DUPLICATES[case]
    method, path, make = WRITES[write]
    body = make()
    data = encoded(body)
    assert data.count(marker) == 1, marker
    guard = NothingStored(victim, [body["batch_id"]])
    if case == "batch_id":
        data = data.replace(marker, marker + duplicate)
    else:
        data = data.replace(marker, duplicate)
    errors = invalid_at(send(victim, method, path, data), "$")
    assert "same member name twice" in errors[0]["message"]
    guard.check()


# --- nesting, numbers, strings -------------------------------------------------------------------


def nested(depth: int, opener: bytes = b"[", closer: bytes = b"]") -> bytes:
    return opener * depth + closer * depth


HUGE = {
    # name: (write, field path in the body (None: the whole body), raw JSON value, expected problem paths)
    "100k brackets as the body": ("trade-records", None, nested(100_000), ["$"]),
    "100k unclosed brackets": ("trade-records", None, b"[" * 100_000, ["$"]),
    "100k objects as the body": ("daily-close", None, b'{"a":' * 100_000 + b"1" + b"}" * 100_000, ["$"]),
    "100k brackets in a list field": ("trade-records", "trade_records", nested(100_000), ["$"]),
    "1000 brackets in an item field": ("trade-records", "trade_records.0.items.0.modifiers", nested(1000), ["$"]),
    "100k brackets in an ignored field": ("daily-close", "note", nested(100_000), ["$"]),
    "1e400 as an integer": ("trade-records", "batch_seq", b"1e400", ["batch_seq"]),
    "-1e400 as a count": ("daily-close", "item_row_count", b"-1e400", ["item_row_count"]),
    "10**1000 as a version": (
        "trade-records",
        "trade_records.0.version",
        str(10**1000).encode(),
        ["trade_records[0].version"],
    ),
    "10**5000 as a count": ("daily-close", "batch_count", b"9" * 5000, ["$"]),
    "2**63 as a version": (
        "trade-records",
        "trade_records.0.version",
        str(2**63).encode(),
        ["trade_records[0].version"],
    ),
    "2**53 as a line number": (
        "trade-records",
        "trade_records.0.items.0.line_no",
        str(2**53).encode(),
        ["trade_records[0].items[0].line_no"],
    ),
    "batch_count 2**53 - 1": ("daily-close", "batch_count", str(2**53 - 1).encode(), ["batch_count"]),
    "batch_seq beyond a day's batches": ("trade-records", "batch_seq", b"100001", ["batch_seq"]),
    "-10**30 guests": (
        "trade-records",
        "trade_records.0.guest_count",
        b"-" + b"1" * 31,
        ["trade_records[0].guest_count"],
    ),
    "1e400 as an amount": ("daily-close", "tax_amount", b"1e400", ["tax_amount"]),
    "a 20-digit amount": ("daily-close", "tax_amount", b'"' + b"9" * 20 + b'.00"', ["tax_amount"]),
    "1e400 in an ignored field": ("trade-records", "note", b"1e400", ["$"]),
    "10**400 in an ignored field": ("daily-close", "note", b"1" + b"0" * 400, ["$"]),
    "NaN as a count": ("daily-close", "trade_record_count", b"NaN", ["trade_record_count"]),
    "Infinity as a version": ("trade-records", "trade_records.0.version", b"Infinity", ["trade_records[0].version"]),
    "-Infinity as an amount": (
        "trade-records",
        "trade_records.0.total_amount",
        b"-Infinity",
        ["trade_records[0].total_amount"],
    ),
    "NaN in an ignored field": ("trade-records", "note", b"NaN", ["$"]),
    "Infinity in a list": ("trade-records", "note", b"[1, Infinity]", ["$"]),
    "a 4 MiB store_id": ("trade-records", "store_id", b'"' + b"S" * (4 * 1024 * 1024) + b'"', None),
    "a 1 MiB member_id": (
        "trade-records",
        "trade_records.0.member_id",
        b'"' + b"7" * (1024 * 1024) + b'"',
        ["trade_records[0].member_id"],
    ),
    "a 1 MiB product name": (
        "trade-records",
        "trade_records.0.items.0.product_name",
        b'"' + "漢".encode() * 350_000 + b'"',
        ["trade_records[0].items[0].product_name"],
    ),
    "a 1 MiB batch_id": ("daily-close", "batch_id", b'"' + b"a" * (1024 * 1024) + b'"', ["batch_id"]),
    "a 1 MiB date": ("daily-close", "business_date", b'"2026-11-20' + b"0" * (1024 * 1024) + b'"', ["business_date"]),
    "a 1 MiB timestamp": ("daily-close", "closed_at", b'"' + b"2" * (1024 * 1024) + b'"', ["closed_at"]),
    "a NUL in a name": (
        "trade-records",
        "trade_records.0.items.0.product_name",
        b'"Burger\\u0000"',
        ["trade_records[0].items[0].product_name"],
    ),
    "an escape sequence in a payment type": (
        "trade-records",
        "trade_records.0.payments.0.payment_type",
        b'"SALE\\u001b[2J"',
        ["trade_records[0].payments[0].payment_type"],
    ),
}


def with_raw(body: dict, path: str | None, raw: bytes) -> bytes:
    """`body` encoded, with the value at `path` (dots; list indexes as numbers) replaced by raw JSON."""
    if path is None:
        return raw
    marker = f"RAW-{uuid.uuid4().hex}"
    copied = copy.deepcopy(body)
    *parents, last = path.split(".")
    target = copied
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    target[int(last) if last.isdigit() else last] = marker
    return encoded(copied).replace(f'"{marker}"'.encode(), raw)


@pytest.mark.parametrize("case", HUGE)
def test_deep_nesting_huge_numbers_and_strings_are_invalid(victim, case):
    write, path, raw, paths = HUGE[case]
    method, route, make = WRITES[write]
    body = make()
    data = with_raw(body, path, raw)
    assert len(data) < MAX_BODY
    guard = NothingStored(victim, [body["batch_id"]])
    response = send(victim, method, route, data)
    if paths is None:  # a store_id no store has: refused by validation before any store check
        refused(response, 400, "INVALID_PAYLOAD")
    else:
        invalid_at(response, *paths)
    assert len(response.content) < 10_000  # nothing of it is echoed
    guard.check()


# --- wrong types, nulls and missing fields, generated from the models ----------------------------

WRONG_VALUES = {"string": "7", "integer": 7, "number": 7.5, "boolean": True, "array": [], "object": {}}


def _json_types(schema: dict, defs: dict) -> set[str]:
    if "$ref" in schema:
        return _json_types(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in schema:
        return set().union(*(_json_types(option, defs) for option in schema["anyOf"]))
    if "type" in schema:
        return set(schema["type"] if isinstance(schema["type"], list) else [schema["type"]])
    if "enum" in schema or "const" in schema:
        values = schema.get("enum", [schema.get("const")])
        return {"string" if isinstance(value, str) else "integer" for value in values}
    raise AssertionError(f"no type in {schema}")


def model_fields(model, body: dict, prefix: str = ""):
    """(path, JSON types accepted, required) of every field of `model` and of the models nested in it,
    where `body` has a place for it; paths like `trade_records.0.items.0.unit_price`."""
    schema = model.model_json_schema()
    defs = schema.get("$defs", {})

    def walk(node: dict, value: dict, at: str):
        for name, prop in node["properties"].items():
            path = f"{at}{name}"
            yield path, _json_types(prop, defs), name in node.get("required", [])
            target = prop
            if "$ref" in target:
                target = defs[target["$ref"].rsplit("/", 1)[-1]]
            if target.get("type") == "array" and "$ref" in target.get("items", {}) and value.get(name):
                item = defs[target["items"]["$ref"].rsplit("/", 1)[-1]]
                yield from walk(item, value[name][0], f"{path}.0.")

    yield from walk(schema, body, prefix)


def set_at(body: dict, path: str, value) -> dict:
    copied = copy.deepcopy(body)
    *parents, last = path.split(".")
    target = copied
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    if value is _MISSING:
        target.pop(last, None)
    else:
        target[last] = value
    return copied


_MISSING = object()


def problem_path(path: str) -> str:
    """`trade_records.0.items.0.unit_price` -> `trade_records[0].items[0].unit_price`."""
    text = ""
    for part in path.split("."):
        text += f"[{part}]" if part.isdigit() else (f".{part}" if text else part)
    return text


MODEL_BODIES = {"trade-records": (TradeRecordsBatch, trade_body), "daily-close": (DailyClose, close_body)}


@pytest.mark.parametrize("write", MODEL_BODIES)
def test_a_wrong_type_in_any_field_is_invalid_at_that_field(victim, write):
    model, make = MODEL_BODIES[write]
    method, route, _ = WRITES[write]
    body = make()
    fields = list(model_fields(model, body))
    assert len(fields) > (60 if write == "trade-records" else 12)
    guard = NothingStored(victim, [body["batch_id"]])
    mistakes, sent = [], 0
    with requests.Session() as session:
        for path, accepted, _ in fields:
            for json_type, wrong in WRONG_VALUES.items():
                if json_type in accepted or (json_type == "integer" and "number" in accepted):
                    continue
                response = send(victim, method, route, encoded(set_at(body, path, wrong)), session=session)
                sent += 1
                paths = [error["path"] for error in response.json().get("errors", [])]
                if response.status_code != 400 or paths != [problem_path(path)]:
                    mistakes.append((path, json_type, response.status_code, paths))
    assert not mistakes, mistakes
    assert sent > len(fields) * 3
    guard.check()


@pytest.mark.parametrize("write", MODEL_BODIES)
def test_null_or_missing_in_a_required_field_is_invalid_at_that_field(victim, write):
    model, make = MODEL_BODIES[write]
    method, route, _ = WRITES[write]
    body = make()
    required = [(path, accepted) for path, accepted, is_required in model_fields(model, body) if is_required]
    guard = NothingStored(victim, [body["batch_id"]])
    mistakes = []
    with requests.Session() as session:
        for path, accepted in required:
            for value in ([None] if "null" not in accepted else []) + [_MISSING]:
                response = send(victim, method, route, encoded(set_at(body, path, value)), session=session)
                paths = [error["path"] for error in response.json().get("errors", [])]
                if response.status_code != 400 or paths != [problem_path(path)]:
                    mistakes.append((path, "missing" if value is _MISSING else "null", response.status_code, paths))
    assert not mistakes, mistakes
    guard.check()


# --- empty bodies, content types, the size limit -------------------------------------------------


@pytest.mark.parametrize("write", ["trade-records", "daily-close"])
@pytest.mark.parametrize(
    "content_type",
    [
        None,
        "text/plain",
        "application/xml",
        "application/problem+json",
        "application/json-patch+json",
        "multipart/form-data; boundary=x",
    ],
)
def test_a_body_not_sent_as_application_json_stores_nothing(victim, write, content_type):
    method, route, make = WRITES[write]
    body = make()
    guard = NothingStored(victim, [body["batch_id"]])
    problem = refused(send(victim, method, route, encoded(body), content_type), 400, "INVALID_PAYLOAD")
    assert [error["path"] for error in problem["errors"]] == ["$"]
    invalid_at(send(victim, method, route, b"", content_type), "$")
    guard.check()


@pytest.mark.parametrize("write", ["trade-records", "daily-close"])
def test_an_empty_body_is_invalid(victim, write):
    method, route, _ = WRITES[write]
    guard = NothingStored(victim)
    errors = invalid_at(send(victim, method, route, b""), "$")
    assert "empty" in errors[0]["message"]
    guard.check()


def padded(body: dict, size: int) -> bytes:
    """`body` as JSON of exactly `size` bytes, grown by a field the service ignores."""
    body = {**body, "padding": ""}
    bare = len(encoded(body))
    body["padding"] = "x" * (size - bare)
    data = encoded(body)
    assert len(data) == size
    return data


def many_records(count: int) -> dict:
    records = [trade_record("S1", DAY, [Line(f"P-{line}", 1, 550) for line in range(1, 6)]) for _ in range(count)]
    return trade_batch("S1", DAY, records)


@pytest.mark.parametrize("write", ["trade-records", "daily-close"])
def test_a_body_just_over_5_mib_is_too_large_and_stores_nothing(victim, write):
    method, route, make = WRITES[write]
    body = many_records(100) if write == "trade-records" else make()
    guard = NothingStored(victim, [body["batch_id"]])
    for size in (MAX_BODY + 1, MAX_BODY + 64 * 1024):
        problem = refused(send(victim, method, route, padded(body, size)), 413, "PAYLOAD_TOO_LARGE")
        assert str(MAX_BODY) in problem["detail"]
    guard.check()


def test_a_body_just_under_5_mib_is_accepted_whole(backend_host):
    partner = make_partner(backend_host, ("S1",), prefix="big")
    assert partner.put("stores", stores_batch(store("S1"))).status_code == 202
    body = many_records(100)
    response = send(partner, "POST", "trade-records", padded(body, MAX_BODY - 1))
    assert response.status_code == 202, response.text[:500]
    assert response.json()["record_count"] == 100
    stored = footprint(backend_host, partner.partner_id, batch_ids=[body["batch_id"]])
    assert len(stored["rows"][("S1", dt.date(2026, 11, 20))]) == 100
    assert stored["batches"][body["batch_id"]].record_count == 100
    close = close_body()
    response = send(partner, "POST", "daily-close", padded(close, MAX_BODY))
    assert response.status_code == 202, response.text[:500]


# --- path parameters -------------------------------------------------------------------------------


def raw_get(partner, target: str) -> tuple[int, dict, bytes]:
    """GET the exact request target (after the route prefix), with no client-side normalisation:
    `..` and percent-escapes reach the host as written."""
    base = urlsplit(partner.host.base_url)
    connection = http.client.HTTPConnection(base.hostname, base.port, timeout=60)
    try:
        connection.putrequest("GET", f"{base.path}/{target}", skip_accept_encoding=True)
        connection.putheader("x-functions-key", partner.key)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


LONG = "A" * 10_000
PATHS = {
    # request target after /pos/v1/: (status, code, problem paths or None)
    "daily-close/%2e%2e/2026-11-20": (404, "NOT_FOUND", None),  # `..` removed: daily-close/2026-11-20
    "daily-close/../2026-11-20": (404, "NOT_FOUND", None),
    "daily-close/S1/../../stores": (405, "METHOD_NOT_ALLOWED", None),  # a GET of a PUT-only route (decision 0101)
    "daily-close/..%2F..%2Fadmin/2026-11-20": (403, "STORE_NOT_ALLOWED", None),  # %2F stays in its segment
    "daily-close/S1%2F..%2F..%2Fx/2026-11-20": (403, "STORE_NOT_ALLOWED", None),
    "daily-close/%27%20OR%201%3D1%20--/2026-11-20": (403, "STORE_NOT_ALLOWED", None),
    "daily-close/S1%27%20OR%20%271%27%3D%271/2026-11-20": (403, "STORE_NOT_ALLOWED", None),
    "daily-close/%22%20OR%20true%20OR%20%22/2026-11-20": (403, "STORE_NOT_ALLOWED", None),
    "daily-close/S1%3B%20DROP%20TABLE%20stores/2026-11-20": (403, "STORE_NOT_ALLOWED", None),
    "daily-close/%3Cscript%3Ealert(1)%3C%2Fscript%3E/2026-11-20": (403, "STORE_NOT_ALLOWED", None),
    "daily-close/%ff%fe/2026-11-20": (403, "STORE_NOT_ALLOWED", None),
    "daily-close/s1/2026-11-20": (403, "STORE_NOT_ALLOWED", None),  # codes are case-sensitive
    "daily-close/%3Cscript%3E/2026-11-20": (403, "STORE_NOT_ALLOWED", None),
    "daily-close/S1%00/2026-11-20": (400, "INVALID_PAYLOAD", ["store_id"]),
    "daily-close/%00/2026-11-20": (400, "INVALID_PAYLOAD", ["store_id"]),
    "daily-close/S1%0D%0ASet-Cookie:%20a=b/2026-11-20": (400, "INVALID_PAYLOAD", ["store_id"]),
    "daily-close/S1%5C..%5C/2026-11-20": (400, "INVALID_PAYLOAD", ["store_id"]),
    "daily-close/S1%3Fcode%3Dx/2026-11-20": (400, "INVALID_PAYLOAD", ["store_id"]),
    "daily-close/S1%23/2026-11-20": (400, "INVALID_PAYLOAD", ["store_id"]),
    f"daily-close/{'A' * 101}/2026-11-20": (400, "INVALID_PAYLOAD", ["store_id"]),
    f"daily-close/{LONG}/2026-11-20": (400, "INVALID_PAYLOAD", ["store_id"]),
    f"daily-close/{LONG}/{LONG}": (400, "INVALID_PAYLOAD", ["store_id", "business_date"]),
    f"daily-close/{'A' * 70_000}/2026-11-20": (414, "URI_TOO_LONG", None),  # the host's request-line limit
    "daily-close/S1/2026-11-20%00": (400, "INVALID_PAYLOAD", ["business_date"]),
    "daily-close/S1/..%2F2026-11-20": (400, "INVALID_PAYLOAD", ["business_date"]),
    "daily-close/S1/2026-11-20%27%20OR%201%3D1%20--": (400, "INVALID_PAYLOAD", ["business_date"]),
    "daily-close/S1/%D9%A2%D9%A0%D9%A2%D9%A6-%D9%A1%D9%A1-%D9%A2%D9%A0": (400, "INVALID_PAYLOAD", ["business_date"]),
    "daily-close/S1/2026-11-20T00:00:00Z": (400, "INVALID_PAYLOAD", ["business_date"]),
    f"daily-close/S1/{'9' * 10_000}": (400, "INVALID_PAYLOAD", ["business_date"]),
    "reference/..%2F..%2Fetc%2Fpasswd": (404, "NOT_FOUND", None),
    "reference/%2e%2e%2f%2e%2e%2fetc%2fpasswd": (404, "NOT_FOUND", None),
    "reference/../../../etc/passwd": (404, "NOT_FOUND", None),
    "reference/%2e%2e": (404, "NOT_FOUND", None),
    "reference/order-types%00": (404, "NOT_FOUND", None),
    "reference/%00": (404, "NOT_FOUND", None),
    "reference/order-types%27%20OR%201%3D1%20--": (404, "NOT_FOUND", None),
    "reference/%3Cscript%3Ealert(1)%3C%2Fscript%3E": (404, "NOT_FOUND", None),
    "reference/ORDER-TYPES": (404, "NOT_FOUND", None),
    "reference/order-types%2F..%2Fpayment-types": (404, "NOT_FOUND", None),
    f"reference/{LONG}": (404, "NOT_FOUND", None),
    f"reference/{'x' * 70_000}": (414, "URI_TOO_LONG", None),
}


@pytest.mark.parametrize("target", PATHS, ids=lambda target: target[:70])
def test_hostile_path_parameters_get_the_documented_answer(victim, target):
    status, code, paths = PATHS[target]
    answered, headers, content = raw_get(victim, target)
    assert answered == status, content[:300]
    assert headers["content-type"].split(";")[0] == "application/problem+json"
    problem = json.loads(content)
    assert problem["status"] == status and problem["code"] == code
    assert headers["x-request-id"] == problem["request_id"]
    if paths is not None:
        assert [error["path"] for error in problem["errors"]] == paths
    assert "set-cookie" not in headers
    assert len(content) < 2_000  # a long parameter is not echoed
    assert b"\x00" not in content and b"\\u0000" not in content


def test_a_close_with_the_most_batches_a_day_may_have_is_reconciled(backend_host):
    """Found by fuzzing: a daily close with batch_count 2**53 - 1 made reconciliation list the missing
    batch_seqs up to it, until the worker ran out of memory (the local host was killed). batch_count
    and batch_seq are now at most 100,000 (ingest/wire/); at that limit reconciliation still runs."""
    partner = make_partner(backend_host, ("S1",), prefix="batches")
    assert partner.put("stores", stores_batch(store("S1"))).status_code == 202
    assert partner.post("trade-records", trade_body()).status_code == 202
    close = {**close_body(), "batch_count": MAX_BATCHES_PER_DAY}
    assert partner.post("daily-close", close).status_code == 202
    deadline = time.monotonic() + 60
    while (result := partner.get(f"daily-close/S1/{DAY}").json())["status"] == "RECEIVED":
        assert time.monotonic() < deadline, result
        time.sleep(0.2)
    details = result["details"]
    assert details["batch_count_expected"] == MAX_BATCHES_PER_DAY and details["batch_seqs_received"] == [1]
    from reconcile.service import MISSING_SEQS_SHOWN

    assert details["missing_batch_seqs"] == list(range(2, 2 + MISSING_SEQS_SHOWN))  # only the first ones


def test_amounts_are_refused_beyond_exact_integers_and_kept_exactly_up_to_them(backend_host):
    """Found by probing: a 15-digit amount of a currency with 4 places (CLF) is 10**19 minor units, and
    storing it overflowed SQLite's 64-bit integers (a 500). Amounts are now refused beyond 2**53 - 1
    minor units (400 at the amount's path), and stored exactly up to it on both backends."""
    from core.money import format_minor_units

    partner = make_partner(backend_host, ("S1",), prefix="money")
    chile = store("S1", currency="CLF", country_code="CL", time_zone="America/Santiago", locale="es-CL")
    assert partner.put("stores", stores_batch(chile)).status_code == 202
    opened = "2026-11-20T12:00:00-03:00"
    too_much = trade_record("S1", DAY, [Line("P", 1, 10**19 - 1)], currency="CLF", exponent=4, opened_at=opened)
    body = trade_batch("S1", DAY, [too_much])
    guard = NothingStored(partner, [body["batch_id"]])
    errors = invalid_at(
        partner.post("trade-records", body),
        "trade_records[0].subtotal_amount",
        "trade_records[0].total_amount",
        "trade_records[0].items[0].unit_price",
        "trade_records[0].items[0].line_amount",
        "trade_records[0].payments[0].amount",
    )
    assert "900719925474.0991 CLF" in errors[0]["message"]
    guard.check()
    largest = 2**53 - 1
    record = trade_record("S1", DAY, [Line("P", 1, largest)], currency="CLF", exponent=4, opened_at=opened)
    assert record["total_amount"] == format_minor_units(largest, 4)
    assert partner.post("trade-records", trade_batch("S1", DAY, [record])).status_code == 202
    (row,) = footprint(backend_host, partner.partner_id)["rows"][("S1", dt.date(2026, 11, 20))]
    assert row.total_minor == largest and row.payments_minor == {"SALE": largest}


def test_a_payment_type_summing_beyond_exact_integers_is_refused_and_kept_exactly_up_to_them(backend_host):
    """Each stored record keeps the sum of its payments per payment_type in minor units (reconciliation reads
    it), an integer that Cosmos DB holds as a double: two amounts that each fit may add up to more than
    2**53 - 1. Such a record is refused (400 at the payment that completes the sum), and a sum of exactly
    2**53 - 1 is stored exactly; payments of different types are not added together."""
    from tests.trade_payloads import Pay

    partner = make_partner(backend_host, ("S1",), prefix="paysum")
    assert partner.put("stores", stores_batch(store("S1"))).status_code == 202
    largest, half = 2**53 - 1, 2**52
    over = trade_record("S1", DAY, [Line("P", 1, 100)], [Pay(100), Pay(half), Pay(half, "DEPOSIT"), Pay(half)])
    body = trade_batch("S1", DAY, [over])
    guard = NothingStored(partner, [body["batch_id"]])
    (error,) = invalid_at(partner.post("trade-records", body), "trade_records[0].payments[3].amount")
    assert "90071992547409.91 USD" in error["message"]
    guard.check()
    exact = trade_record("S1", DAY, [Line("P", 1, 100)], [Pay(half), Pay(half, "DEPOSIT"), Pay(half - 1)])
    assert partner.post("trade-records", trade_batch("S1", DAY, [exact])).status_code == 202
    (row,) = footprint(backend_host, partner.partner_id)["rows"][("S1", dt.date(2026, 11, 20))]
    assert row.payments_minor == {"SALE": largest, "DEPOSIT": half}
