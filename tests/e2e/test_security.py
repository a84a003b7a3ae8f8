"""Security, on both backends: partner isolation on every operation of the OpenAPI document, keys at
rest and compared in constant time, no secret in an error body or a log line, a request id in every
answer (spec 5; test_auth.py covers keys, rotation and partner status over the master-data writes)."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import re
import socket
import time
import uuid
from urllib.parse import urlsplit

import azure.functions as func
import pytest
import requests

from ingest import access
from tests.backend_storage import storage_of
from tests.conftest import ROOT, make_partner, start_host
from tests.payloads import mapping_batch, problem_of, product, products_batch, store, stores_batch
from tests.trade_payloads import Line, daily_close, totals_of, trade_batch, trade_record

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")

DAY = "2026-11-20"
DOCUMENT = json.loads((ROOT / "docs" / "openapi.json").read_text(encoding="utf-8"))
OPERATIONS = {
    operation["operationId"]: (method.upper(), path)
    for path, item in DOCUMENT["paths"].items()
    for method, operation in item.items()
}
DIRECTIONS = {"SALE": 1, "REFUND": -1}


# --- partner isolation on every operation ----------------------------------------------------------


class Pair:
    """Partner A with data everywhere, and partner B, who shares one store code (SHARED) with A and
    knows A's other store code and A's batch_ids. A's batches hold more records than B's, so an
    answer carrying A's record_count is told apart from B's own."""

    def __init__(self, host) -> None:
        self.host = host
        self.a = make_partner(host, ("A-ONLY", "SHARED"), prefix="iso-a")
        self.b = make_partner(host, ("B-ONLY", "SHARED"), prefix="iso-b")
        self.a_batches: dict[str, str] = {}
        a = self.a
        self._accepted("stores", a.put("stores", stores_batch(store("A-ONLY"), store("SHARED", store_name="A's"))), 2)
        self._accepted(
            "mappings",
            a.put("mappings/transaction-types", mapping_batch(("A01", "SALE"), ("A02", "REFUND"), ("A03", "VOID"))),
            3,
        )
        self._accepted(
            "products",
            a.put(
                "products",
                products_batch([product("P-A", store_id="A-ONLY"), product("P-SHARED", name={"en-US": "A's"})]),
            ),
            2,
        )
        self.a_records = {
            store_id: [
                trade_record(
                    store_id, DAY, [Line("P-A", 2, 550)], source_type="A01", trade_record_id=f"T-{store_id}-{n}"
                )
                for n in range(2)
            ]
            for store_id in ("A-ONLY", "SHARED")
        }
        for store_id, records in self.a_records.items():
            self._accepted(f"trade-records {store_id}", a.post("trade-records", trade_batch(store_id, DAY, records)), 2)
            close = daily_close(store_id, DAY, totals_of(records, {"A01"}, DIRECTIONS))
            self._accepted(f"daily-close {store_id}", a.post("daily-close", close), 1)
        self.a_results = {store_id: self._reconciled(store_id) for store_id in ("A-ONLY", "SHARED")}

    def _accepted(self, name: str, response, record_count: int) -> None:
        assert response.status_code == 202, response.text
        assert response.json()["record_count"] == record_count
        self.a_batches[name] = response.json()["batch_id"]

    def _reconciled(self, store_id: str) -> dict:
        deadline = time.monotonic() + 30
        while True:
            body = self.a.get(f"daily-close/{store_id}/{DAY}").json()
            if body["status"] == "MATCHED" or time.monotonic() > deadline:
                assert body["status"] == "MATCHED", body
                return body
            time.sleep(0.2)

    def a_unchanged(self) -> None:
        """Everything of A reads as it was set up, through A's key and through the storage."""
        storage = storage_of(self.host)
        assert storage.get_store(self.a.partner_id, "SHARED").document["store_name"] == "A's"
        assert storage.get_product(self.a.partner_id, "P-SHARED", None).document["name"] == {"en-US": "A's"}
        mapping = self.a.get("mappings/transaction-types").json()
        assert [entry["source_code"] for entry in mapping["mappings"]] == ["A01", "A02", "A03"]
        for store_id in ("A-ONLY", "SHARED"):
            assert self.a.get(f"daily-close/{store_id}/{DAY}").json() == self.a_results[store_id]
            rows = storage.store_day_rows(self.a.partner_id, store_id, dt.date.fromisoformat(DAY))
            assert sorted(row.trade_record_id for row in rows) == [f"T-{store_id}-0", f"T-{store_id}-1"]
            assert {row.version for row in rows} == {1}


@pytest.fixture(scope="module")
def pair(backend_host) -> Pair:
    return Pair(backend_host)


def b_reuses_a_batch_id(pair: Pair, kind: str, send, record_count: int) -> None:
    """B's request with A's batch_id is B's own first batch: 202 ACCEPTED with B's record_count."""
    response = send(pair.a_batches[kind])
    assert response.status_code == 202, response.text
    body = response.json()
    assert body["status"] == "ACCEPTED" and body["record_count"] == record_count
    assert not {warning["code"] for warning in body["warnings"]} & {"RESEND_BODY_IGNORED", "BATCH_ID_REUSED"}
    assert "Idempotent-Replayed" not in response.headers
    marker = storage_of(pair.host).find_batch(pair.b.partner_id, pair.a_batches[kind])
    assert marker is not None and marker.record_count == record_count


def check_put_stores(pair: Pair) -> None:
    b = pair.b
    problem_of(b.put("stores", stores_batch(store("A-ONLY", store_name="B's"))), 403, "STORE_NOT_ALLOWED")
    problem_of(b.put("stores", stores_batch(store("B-ONLY"), store("A-ONLY"))), 403, "STORE_NOT_ALLOWED")
    b_reuses_a_batch_id(
        pair,
        "stores",
        lambda batch_id: b.put(
            "stores", stores_batch(store("SHARED", store_name="B's", currency="JPY"), batch_id=batch_id)
        ),
        1,
    )
    assert storage_of(pair.host).get_store(b.partner_id, "SHARED").currency == "JPY"


def check_put_products(pair: Pair) -> None:
    b = pair.b
    problem_of(b.put("products", products_batch([product("P-B", store_id="A-ONLY")])), 403, "STORE_NOT_ALLOWED")
    b_reuses_a_batch_id(
        pair,
        "products",
        lambda batch_id: b.put(
            "products", products_batch([product("P-SHARED", name={"en-US": "B's"})], batch_id=batch_id)
        ),
        1,
    )


def check_put_transaction_type_mapping(pair: Pair) -> None:
    b = pair.b
    b_reuses_a_batch_id(
        pair,
        "mappings",
        lambda batch_id: b.put("mappings/transaction-types", mapping_batch(("B01", "SALE"), batch_id=batch_id)),
        1,
    )


def check_get_transaction_type_mapping(pair: Pair) -> None:
    mapping = pair.b.get("mappings/transaction-types").json()
    assert mapping["partner_id"] == pair.b.partner_id
    codes = [entry["source_code"] for entry in mapping["mappings"]]
    # B's mapping is empty, or B's own upload (which may have reused A's batch_id: see above).
    assert codes in ([], ["B01"]) and (codes or mapping["batch_id"] is None)
    assert pair.a.partner_id not in json.dumps(mapping)


def _b_shared_store(pair: Pair) -> tuple[str, int]:
    """B's store SHARED, with master data: its currency and minor-unit exponent."""
    storage = storage_of(pair.host)
    if storage.get_store(pair.b.partner_id, "SHARED") is None:
        assert pair.b.put("stores", stores_batch(store("SHARED"), store("B-ONLY"))).status_code == 202
    currency = storage.get_store(pair.b.partner_id, "SHARED").currency
    return currency, 0 if currency == "JPY" else 2


def check_post_trade_records(pair: Pair) -> None:
    b = pair.b
    currency, exponent = _b_shared_store(pair)
    mine = [trade_record("A-ONLY", DAY, [Line("P-B", 1, 100)])]
    problem_of(b.post("trade-records", trade_batch("A-ONLY", DAY, mine)), 403, "STORE_NOT_ALLOWED")
    # B's record with one of A's trade_record_ids, a higher version and A's batch_id: B's own record.
    shared = pair.a_records["SHARED"][0]
    record = trade_record(
        "SHARED",
        DAY,
        [Line("P-B", 1, 100)],
        trade_record_id=shared["trade_record_id"],
        version=5,
        currency=currency,
        exponent=exponent,
    )
    b_reuses_a_batch_id(
        pair,
        "trade-records SHARED",
        lambda batch_id: b.post("trade-records", {**trade_batch("SHARED", DAY, [record]), "batch_id": batch_id}),
        1,
    )
    rows = storage_of(pair.host).store_day_rows(b.partner_id, "SHARED", dt.date.fromisoformat(DAY))
    assert [(row.trade_record_id, row.version) for row in rows] == [(shared["trade_record_id"], 5)]


def check_post_daily_close(pair: Pair) -> None:
    b = pair.b
    currency, exponent = _b_shared_store(pair)
    totals = totals_of([], set(), DIRECTIONS)
    problem_of(b.post("daily-close", daily_close("A-ONLY", DAY, totals)), 403, "STORE_NOT_ALLOWED")
    b_reuses_a_batch_id(
        pair,
        "daily-close SHARED",
        lambda batch_id: b.post(
            "daily-close",
            daily_close(
                "SHARED", DAY, totals_of([], set(), DIRECTIONS, exponent=exponent), currency=currency, batch_id=batch_id
            ),
        ),
        1,
    )


def check_get_daily_close(pair: Pair) -> None:
    b = pair.b
    problem_of(b.get(f"daily-close/A-ONLY/{DAY}"), 403, "STORE_NOT_ALLOWED")
    mine = b.get(f"daily-close/SHARED/{DAY}").json()
    assert mine["store_id"] == "SHARED"
    assert mine != pair.a_results["SHARED"]
    assert mine["expected"] != pair.a_results["SHARED"]["expected"]  # None, or B's own close


def check_get_trade_records(pair: Pair) -> None:
    b, day = pair.b, {"business_date": DAY}
    problem_of(b.get("trade-records", params={"store_id": "A-ONLY", **day}), 403, "STORE_NOT_ALLOWED")
    theirs = pair.a.get("trade-records", params={"store_id": "SHARED", **day}).json()["trade_records"]
    mine = b.get("trade-records", params={"store_id": "SHARED", **day}).json()["trade_records"]
    assert theirs and not {r["trade_record_id"] for r in theirs} & {r["trade_record_id"] for r in mine}


def check_public(operation_id: str):
    """Operations without partner data answer both partners alike, and name neither."""

    def check(pair: Pair) -> None:
        method, path = OPERATIONS[operation_id]
        path = path.lstrip("/").replace("{code_type}", "payment-types")
        answers = [
            requests.request(method, pair.host.url(path), headers=partner.headers(), timeout=30)
            for partner in (pair.a, pair.b)
        ]
        assert answers[0].status_code == answers[1].status_code == 200
        assert answers[0].json() == answers[1].json()
        assert pair.a.partner_id not in answers[0].text and pair.b.partner_id not in answers[0].text

    return check


ISOLATION = {
    "put_stores": check_put_stores,
    "put_products": check_put_products,
    "put_transaction_type_mapping": check_put_transaction_type_mapping,
    "get_transaction_type_mapping": check_get_transaction_type_mapping,
    "post_trade_records": check_post_trade_records,
    "post_daily_close": check_post_daily_close,
    "get_daily_close": check_get_daily_close,
    "get_trade_records": check_get_trade_records,
    "get_transaction_types": check_public("get_transaction_types"),
    "get_code_list": check_public("get_code_list"),
    "health": check_public("health"),
    "get_openapi": check_public("get_openapi"),
}


def test_every_operation_of_the_document_has_an_isolation_check():
    assert set(ISOLATION) == set(OPERATIONS), "add an isolation check for each new operation"


@pytest.mark.parametrize("operation_id", sorted(OPERATIONS))
def test_partner_b_can_neither_reach_nor_see_partner_a(pair, operation_id):
    ISOLATION[operation_id](pair)
    pair.a_unchanged()


def test_store_bound_operations_refuse_another_partners_store_code_in_any_place(pair):
    """Every place a store code goes: the body's store_id, a record's, a product's, the path."""
    b = pair.b
    records = [trade_record("A-ONLY", DAY, [Line("P", 1, 100)])]
    refused = [
        b.put("stores", stores_batch(store("A-ONLY"))),
        b.put("products", products_batch([product(store_id="A-ONLY")])),
        b.post("trade-records", trade_batch("A-ONLY", DAY, records)),
        b.post("daily-close", daily_close("A-ONLY", DAY, totals_of([], set(), DIRECTIONS))),
        b.get(f"daily-close/A-ONLY/{DAY}"),
        b.get(f"daily-close/A-ONLY/{DAY}", headers={**b.headers(), "x-request-id": "iso-1"}),
    ]
    for response in refused:
        problem = problem_of(response, 403, "STORE_NOT_ALLOWED")
        assert pair.a.partner_id not in response.text
        assert "A's" not in response.text and problem["request_id"] == response.headers["x-request-id"]
    pair.a_unchanged()


# --- keys at rest and in comparison ------------------------------------------------------------------


def stored_text(host, partner_id: str) -> str:
    """What the backend holds, as text: the SQLite files whole, or every Cosmos DB item that names the
    partner (its partner item, registrations and keys)."""
    if host.env.get("POS_BACKEND", "sqlite") == "sqlite":
        return "".join(
            path.read_bytes().decode("latin-1") for path in sorted(host.data_dir.iterdir()) if path.is_file()
        )
    partners = storage_of(host).client.get_database_client(host.env["COSMOS_DATABASE"]).get_container_client("partners")
    items = list(
        partners.query_items(
            "SELECT * FROM c WHERE c.partner_id = @partner",
            parameters=[{"name": "@partner", "value": partner_id}],
            enable_cross_partition_query=True,
        )
    )
    assert sum(1 for item in items if item.get("type") == "key") == 2, items
    return json.dumps(items)


def test_keys_are_stored_only_as_their_sha256(backend_host):
    partner = make_partner(backend_host, prefix="keys")
    issued = backend_host.hq_in_process("key", "issue", partner.partner_id)
    second = issued.stdout.strip().splitlines()[-1]
    assert partner.get("mappings/transaction-types").status_code == 200
    text = stored_text(backend_host, partner.partner_id)
    for key in (partner.key, second):
        assert key.startswith("posk_") and len(key) > 40
        digest = hashlib.sha256(key.encode()).hexdigest()
        assert digest in text
        owner = storage_of(backend_host).find_key(digest)
        assert owner.partner.partner_id == partner.partner_id and owner.key_hash == digest
        for fragment in (key, key[5:], key[5:17], key[-12:]):  # no part of the secret either
            assert fragment not in text
    if backend_host.env.get("POS_BACKEND", "sqlite") == "sqlite":
        hashes = [
            row[0]
            for row in backend_host.query("SELECT key_hash FROM api_keys WHERE partner_id = ?", partner.partner_id)
        ]
        assert len(hashes) == 2 and all(re.fullmatch(r"[0-9a-f]{64}", value) for value in hashes)
        assert backend_host.query("SELECT count(*) FROM api_keys WHERE key_hash LIKE 'posk_%'") == [(0,)]


class _Keys:
    """A storage that knows one key, for the comparison below."""

    def __init__(self, key_hash: str) -> None:
        from core.records import KeyOwner, Partner

        self.owner = KeyOwner(Partner("p", "P", True, dt.datetime(2026, 1, 1, tzinfo=dt.UTC)), "key_1", key_hash, False)

    def find_key(self, key_hash: str):
        return self.owner if key_hash == self.owner.key_hash else None


def test_a_presented_key_is_compared_in_constant_time(monkeypatch):
    secret = access.new_key()
    storage = _Keys(secret.key_hash)
    calls = []
    real = hmac.compare_digest

    def spy(a, b):
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(access.hmac, "compare_digest", spy)
    assert access.authenticate(storage, secret.secret).partner.partner_id == "p"
    assert calls == [(secret.key_hash, hashlib.sha256(secret.secret.encode()).hexdigest())]
    # The comparison decides: a lookup that found the hash is still refused if it says no.
    monkeypatch.setattr(access.hmac, "compare_digest", lambda a, b: False)
    with pytest.raises(Exception) as refused:
        access.authenticate(storage, secret.secret)
    assert getattr(refused.value, "code", None) == "UNAUTHORIZED"


def test_a_new_key_is_256_random_bits_and_only_its_hash_is_kept():
    first, second = access.new_key(), access.new_key()
    assert first.secret != second.secret and first.key_id != second.key_id
    assert len(first.secret.removeprefix(access.KEY_PREFIX)) >= 43  # 32 bytes, URL-safe base64
    assert first.key_hash == hashlib.sha256(first.secret.encode()).hexdigest()
    assert first.secret not in repr(first.key_hash) and first.key_id not in first.secret


# --- no secret in an error body or a log line ------------------------------------------------------

CARD = "4111111111111111"
CARD_SPACED = "4111 1111 1111 1111"
EMAIL = "jane.doe@example.com"
PHONE = "+1 212 555 0142"


def rejected_requests(partner, stranger_key: str):
    """Requests refused for many reasons, each carrying a secret: a key, a member_id or a card number."""

    def records(**changes) -> dict:
        return trade_batch("S1", DAY, [trade_record("S1", DAY, [Line("P", 1, 550)], **changes)])

    bad_record = trade_record("S1", DAY, [Line("P", 1, 550)])
    bad_record["payments"][0]["payment_method_detail"] = CARD_SPACED
    bad_name = trade_record("S1", DAY, [Line("P", 1, 550)])
    bad_name["items"][0]["product_name"] = f"Gift card {CARD}"
    return [
        ("GET", "mappings/transaction-types", None, {"x-functions-key": stranger_key}),
        ("PUT", "stores", stores_batch(store("S1")), {"x-functions-key": stranger_key + "x"}),
        ("GET", "reference/order-types", None, {"x-functions-key": partner.key[:-1]}),
        ("GET", "reference/order-types", None, {"x-functions-key": partner.key + " "}),
        ("POST", "trade-records", records(member_id=EMAIL), {}),
        ("POST", "trade-records", records(member_id=PHONE), {}),
        ("POST", "trade-records", records(member_id=CARD), {}),
        ("POST", "trade-records", records(member_id=CARD * 4), {}),  # too long
        ("POST", "trade-records", records(member_id=12345678901234), {}),  # wrong type
        ("POST", "trade-records", trade_batch("S1", DAY, [bad_record]), {}),
        ("POST", "trade-records", trade_batch("S1", DAY, [bad_name]), {}),
        ("POST", "trade-records", records(guest_count=CARD), {}),
        ("POST", "trade-records", records(fiscal_document_no=f"{CARD}/{EMAIL}/" * 8), {}),  # a code too long
        ("POST", "trade-records", {**records(), "store_id": CARD}, {}),
        ("POST", "trade-records", records(total_amount=CARD), {}),
        ("POST", "daily-close", daily_close(CARD, DAY, totals_of([], set(), DIRECTIONS)), {}),
        ("PUT", "stores", stores_batch(store("S1", store_name=CARD, currency=CARD, country_code=EMAIL)), {}),
        ("PUT", "products", products_batch([product(name={CARD: "x", EMAIL: "y"}, sku=EMAIL, version=CARD)]), {}),
        ("PUT", "mappings/transaction-types", mapping_batch((CARD, EMAIL)), {}),
        ("GET", f"daily-close/{CARD}%00/{DAY}", None, {}),
        ("GET", f"daily-close/{CARD}/{DAY}", None, {}),
        ("GET", f"daily-close/{CARD_SPACED}/{DAY}", None, {}),
        ("GET", f"daily-close/{EMAIL}/{DAY}", None, {}),
        ("GET", f"daily-close/S1/{CARD}", None, {}),
        ("GET", f"reference/{CARD}", None, {}),
        ("GET", f"nowhere/{CARD}", None, {}),
    ]


def test_no_key_member_id_or_card_number_reaches_an_error_body_or_the_log(backend_host):
    partner = make_partner(backend_host, ("S1",), prefix="secrets")
    assert partner.put("stores", stores_batch(store("S1"))).status_code == 202
    stranger = make_partner(backend_host, prefix="stranger")
    assert backend_host.hq_in_process("key", "revoke", stranger.partner_id, stranger.key_id).returncode == 0
    request_ids = []
    for method, path, body, headers in rejected_requests(partner, stranger.key):
        request_id = f"secrets-{uuid.uuid4().hex[:12]}"
        response = requests.request(
            method,
            backend_host.url(path),
            json=body,
            timeout=30,
            headers={**partner.headers(), "x-request-id": request_id, **headers},
        )
        assert 400 <= response.status_code < 500, (method, path, response.status_code, response.text[:300])
        assert response.headers["x-request-id"] == request_id
        request_ids.append(request_id)
        for secret in (partner.key, stranger.key, CARD, CARD_SPACED, EMAIL, PHONE, "12345678901234"):
            assert secret not in response.text, (method, path, secret, response.text)
    log = wait_for_log(backend_host, request_ids[-1])
    assert all(request_id in log for request_id in request_ids)  # every refusal was logged
    for secret in (
        partner.key,
        stranger.key,
        partner.key[5:25],
        stranger.key[5:25],
        CARD,
        CARD_SPACED,
        EMAIL,
        PHONE,
        "12345678901234",
    ):
        assert secret not in log, secret


def wait_for_log(host, text: str, timeout: float = 10) -> str:
    deadline = time.monotonic() + timeout
    while text not in (log := host.log()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return log


# --- a request id in every answer --------------------------------------------------------------------


def raw_request(host, data: bytes) -> tuple[int, dict, bytes]:
    """Send bytes as they are and read the answer (whatever http.client would refuse to send)."""
    base = urlsplit(host.base_url)
    with socket.create_connection((base.hostname, base.port), timeout=30) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    head, _, content = b"".join(chunks).partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {
        name.strip().lower(): value.strip()
        for name, value in (line.split(":", 1) for line in header_lines if ":" in line)
    }
    return int(status_line.split()[1]), headers, content


def test_every_answer_carries_a_request_id(backend_host):
    host = backend_host
    partner = make_partner(host, ("S1",), prefix="rid")
    prefix = urlsplit(host.base_url).path
    body = stores_batch(store("S1"))
    answers = {
        200: partner.get("reference/order-types"),
        202: partner.put("stores", body),
        "200 replay": partner.put("stores", body),
        "200 health": requests.get(host.url("health"), timeout=30),
        400: partner.put("stores", b"{"),
        401: requests.get(host.url("reference/order-types"), timeout=30),
        403: partner.get(f"daily-close/NOT-MINE/{DAY}"),
        "404 app": partner.get("reference/nothing"),
        "404 host": partner.get("nothing/here"),
        "404 host, outside the prefix": requests.get(host.url("../../other"), timeout=30),
        "405 app, wrong method": requests.delete(host.url("stores"), headers=partner.headers(), timeout=30),
        "413 app": partner.put("stores", b"{" + b" " * (5 * 1024 * 1024) + b"}"),
    }
    for name, response in answers.items():
        request_id = response.headers.get("x-request-id")
        assert request_id and re.fullmatch(r"[0-9a-f]{32}", request_id), (name, response.headers)
        if response.status_code >= 400:
            assert response.json()["request_id"] == request_id, name
    assert answers[202].status_code == 202 and answers["200 replay"].status_code == 200
    assert answers["413 app"].status_code == 413 and answers["404 host"].status_code == 404
    # What the host answers without reaching a function: a problem document with a request id too.
    raw = {
        "413 host": f"PUT {prefix}/stores HTTP/1.1\r\nHost: x\r\nContent-Length: {200 * 1024 * 1024}\r\n\r\n",
        "414 host": f"GET {prefix}/reference/{'x' * 70_000} HTTP/1.1\r\nHost: x\r\n\r\n",
        "400 host": f"GET {prefix}/health HTTP/1.1 extra\r\nHost: x\r\n\r\n",
        "431 host": f"GET {prefix}/health HTTP/1.1\r\nHost: x\r\nX-Long: {'y' * 70_000}\r\n\r\n",
        "505 host": f"GET {prefix}/health HTTP/2.0\r\nHost: x\r\n\r\n",
        "501 host": f"BREW {prefix}/health HTTP/1.1\r\nHost: x\r\n\r\n",
        "400 host, negative length": f"PUT {prefix}/stores HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
    }
    for name, request in raw.items():
        status, headers, content = raw_request(host, request.encode())
        assert status == int(name.split()[0]), (name, status, content[:200])
        assert headers["content-type"] == "application/problem+json", name
        assert json.loads(content)["request_id"] == headers["x-request-id"], name
    # The caller's own id, when short and plain, is kept everywhere, the host's own answers included.
    for path in ("reference/order-types", "nothing/here", f"daily-close/NOT-MINE/{DAY}"):
        response = partner.get(path, headers={**partner.headers(), "x-request-id": "support-42"})
        assert response.headers["x-request-id"] == "support-42", path


def test_rate_limited_answers_carry_a_request_id(tmp_path):
    limited = start_host(tmp_path, RATE_LIMIT_PER_MINUTE="1")
    try:
        partner = make_partner(limited)
        answers = [partner.get("reference/order-types") for _ in range(3)]
        limited_answer = next(response for response in answers if response.status_code == 429)
        problem = problem_of(limited_answer, 429, "RATE_LIMITED")
        assert problem["request_id"] == limited_answer.headers["x-request-id"]
    finally:
        limited.stop()


def test_an_unexpected_error_answers_500_with_a_request_id_and_no_internals(monkeypatch):
    """The app's own last resort (triggers/http.py): no stack, no message of the exception, a request id."""
    from triggers import http

    monkeypatch.setattr(http, "current_backend", lambda: None)

    def broken(call):
        raise RuntimeError(f"internal detail {CARD}")

    request = func.HttpRequest("GET", "http://x/pos/v1/health", headers={"x-request-id": "boom-1"}, body=b"")
    response = http.handle(request, broken, authenticated=False)
    assert response.status_code == 500
    assert response.headers["x-request-id"] == "boom-1"
    problem = json.loads(response.get_body())
    assert problem["code"] == "INTERNAL_ERROR" and problem["request_id"] == "boom-1"
    assert "internal detail" not in response.get_body().decode() and "Traceback" not in response.get_body().decode()


def test_a_function_that_raises_in_the_host_answers_500_with_a_request_id():
    """The local host's own last resort (devhost/server.py), for an exception that escapes a function."""
    from devhost.functions import FunctionTable, HttpFunction
    from devhost.server import FunctionsHttpServer

    def handler(req):
        raise RuntimeError("escaped")

    table = FunctionTable(http=[HttpFunction("boom", frozenset({"GET"}), "boom", re.compile("boom"), 1, handler)])
    server = FunctionsHttpServer(("127.0.0.1", 0), table, "pos/v1")
    try:
        status, headers, content = server.dispatch("GET", "/pos/v1/boom", {"x-request-id": "boom-2"}, b"")
    finally:
        server.server_close()
    assert status == 500 and headers["x-request-id"] == "boom-2"
    problem = json.loads(content)
    assert problem["code"] == "INTERNAL_ERROR" and problem["request_id"] == "boom-2"
    assert "escaped" not in content.decode()
