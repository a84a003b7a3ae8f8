"""A resend of a known batch_id is answered from its marker before the body is validated, on every write
(ingest/batches.py `known_batch`; decision 0028): 200 ALREADY_RECEIVED with the original record_count,
and RESEND_BODY_IGNORED when the body differs, even when the new body would be refused. The key and the
store codes are still checked first, and a body that is not I-JSON is still refused."""

from __future__ import annotations

import json
import uuid

import pytest

from tests.conftest import make_partner
from tests.e2e.test_business_day import DAY, DIRECTIONS, close_and_wait, open_store
from tests.e2e.test_hq_operations import batch_fields
from tests.payloads import mapping_batch, problem_of, product, products_batch, store, stores_batch
from tests.trade_payloads import Line, daily_close, totals_of, trade_batch, trade_record


def sale() -> dict:
    return trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], tax=44)


# kind: (method, route, a valid body, the same batch_id with a body that is refused as a new batch,
#        the same batch_id naming a store that is not the partner's)
WRITES = {
    "stores": (
        "PUT",
        "stores",
        lambda: stores_batch(store("S1")),
        lambda body: {**body, "stores": [{"store_id": "S1", "currency": "usd"}]},
        lambda body: {**body, "stores": [store("S1"), store("S9")]},
    ),
    "products": (
        "PUT",
        "products",
        lambda: products_batch(),
        lambda body: {**body, "products": [product(unit_price=5.5)]},
        lambda body: {**body, "products": [product(store_id="S9")]},
    ),
    "mappings": (
        "PUT",
        "mappings/transaction-types",
        lambda: mapping_batch(),
        lambda body: {**body, "mappings": []},
        None,
    ),
    "trade-records": (
        "POST",
        "trade-records",
        lambda: trade_batch("S1", DAY, [sale()]),
        lambda body: {**body, "trade_records": [{**sale(), "total_amount": "5.9"}]},
        lambda body: {**body, "store_id": "S9"},
    ),
    "daily-close": (
        "POST",
        "daily-close",
        lambda: daily_close("S1", DAY, totals_of([], {"01"}, DIRECTIONS)),
        lambda body: {key: value for key, value in body.items() if key != "tax_amount"},
        lambda body: {**body, "store_id": "S9"},
    ),
}


def send(partner, kind: str, body: dict | bytes):
    method, route, *_ = WRITES[kind]
    return partner.put(route, body) if method == "PUT" else partner.post(route, body)


def accepted(partner, kind: str) -> tuple[dict, int]:
    """A first batch of `kind`, accepted; its body and record_count."""
    open_store(partner)
    body = WRITES[kind][2]()
    response = send(partner, kind, body)
    assert response.status_code == 202, response.text
    return body, response.json()["record_count"]


@pytest.mark.parametrize("kind", WRITES)
def test_a_known_batch_id_with_a_body_that_would_be_refused_is_already_received(partner, kind):
    body, record_count = accepted(partner, kind)
    refused = WRITES[kind][3](body)
    problem_of(send(partner, kind, {**refused, "batch_id": str(uuid.uuid4())}), 400, "INVALID_PAYLOAD")
    again = send(partner, kind, refused)
    assert again.status_code == 200 and again.headers["Idempotent-Replayed"] == "true"
    answer = again.json()
    assert (answer["batch_id"], answer["status"], answer["record_count"]) == (
        body["batch_id"],
        "ALREADY_RECEIVED",
        record_count,
    )
    warnings = [(warning["code"], warning["path"], warning["field"]) for warning in answer["warnings"]]
    assert warnings == [("RESEND_BODY_IGNORED", "$", "batch_id")]


@pytest.mark.parametrize("kind", [kind for kind, write in WRITES.items() if write[4] is not None])
def test_a_resend_naming_a_store_that_is_not_the_partners_is_still_refused(partner, kind):
    body, _ = accepted(partner, kind)
    problem_of(send(partner, kind, WRITES[kind][4](body)), 403, "STORE_NOT_ALLOWED")


def test_a_resend_is_refused_once_its_store_is_no_longer_registered(partner):
    body, _ = accepted(partner, "trade-records")
    partner.host.storage().unregister_stores(partner.partner_id, ["S1"])
    problem_of(send(partner, "trade-records", body), 403, "STORE_NOT_ALLOWED")


def test_a_resend_whose_store_code_cannot_be_read_gets_the_validation_answer(partner):
    body, _ = accepted(partner, "trade-records")
    response = send(partner, "trade-records", {**body, "store_id": 17})
    assert "store_id" in {error["path"] for error in problem_of(response, 400, "INVALID_PAYLOAD")["errors"]}


def test_a_resend_that_names_its_batch_id_twice_is_refused(partner):
    """The partner's parser may read the first batch_id, ours the last: the body must mean one thing."""
    body, _ = accepted(partner, "trade-records")
    first = json.dumps({**body, "batch_id": str(uuid.uuid4())})
    twice = first[:-1] + f', "batch_id": "{body["batch_id"]}"}}'
    response = send(partner, "trade-records", twice.encode())
    problem = problem_of(response, 400, "INVALID_PAYLOAD")
    assert [error["path"] for error in problem["errors"]] == ["$"]
    assert "same member name twice" in problem["errors"][0]["message"]


# --- batch_id: echoed as sent, equal as a UUID (decision 0017) -------------------------------------


def forms_of(batch_id: str) -> list[str]:
    """One UUID as partners' code writes it: each accepted form, in upper and lower case."""
    lower, upper = batch_id.lower(), batch_id.upper()
    return [upper, lower, upper.replace("-", ""), "{" + lower + "}", "urn:uuid:" + upper]


@pytest.fixture
def anywhere(backend_host):
    """A partner on each backend in turn."""
    return make_partner(backend_host)


@pytest.mark.parametrize("kind", WRITES)
def test_the_batch_id_is_echoed_as_sent_and_one_uuid_is_one_batch(anywhere, kind):
    open_store(anywhere)
    body = WRITES[kind][2]()
    sent = body["batch_id"].upper()
    first = send(anywhere, kind, {**body, "batch_id": sent})
    assert first.status_code == 202, first.text
    assert first.json()["batch_id"] == sent
    record_count = first.json()["record_count"]
    # A body that differs only in how its batch_id is written is the same body: no RESEND_BODY_IGNORED.
    for form in forms_of(sent):
        again = send(anywhere, kind, {**body, "batch_id": form})
        answer = again.json()
        assert (
            again.status_code,
            answer["batch_id"],
            answer["status"],
            answer["record_count"],
            answer["warnings"],
        ) == (200, form, "ALREADY_RECEIVED", record_count, []), form
    # The marker is keyed by the canonical form of the UUID, whatever form came first.
    fields = batch_fields(anywhere.host, anywhere.partner_id, sent)
    assert (fields["batch_id"], fields["kind"]) == (sent.lower(), kind)


def test_a_day_sent_with_upper_case_batch_ids_reconciles(anywhere):
    open_store(anywhere)
    record = trade_record("S1", DAY, [Line("P-BURGER", 2, 550)], tax=88)
    batch = trade_batch("S1", DAY, [record])
    assert send(anywhere, "trade-records", {**batch, "batch_id": batch["batch_id"].upper()}).status_code == 202
    close_id = str(uuid.uuid4()).upper()
    result = close_and_wait(anywhere, "S1", totals_of([record], {"01"}, DIRECTIONS), batch_id=close_id)
    assert result["status"] == "MATCHED", result
    assert "this close is the latest" in batch_fields(anywhere.host, anywhere.partner_id, close_id)["store_day"]


@pytest.mark.parametrize(
    "batch_id",
    [
        "9b2e51c0-7d4a4e8f-b1c3-5a6d7e8f9012",
        " 9b2e51c0-7d4a-4e8f-b1c3-5a6d7e8f9012",
        "URN:UUID:9b2e51c0-7d4a-4e8f-b1c3-5a6d7e8f9012",
        "{9b2e51c07d4a4e8fb1c35a6d7e8f9012}",
        "9b2e51c0-7d4a-4e8f-b1c3-5a6d7e8f901g",
        "FV/2024/01/001",
    ],
)
def test_a_batch_id_that_is_not_a_uuid_is_refused_without_echo(partner, batch_id):
    open_store(partner)
    body = {**trade_batch("S1", DAY, [sale()]), "batch_id": batch_id}
    problem = problem_of(send(partner, "trade-records", body), 400, "INVALID_PAYLOAD")
    assert [error["path"] for error in problem["errors"]] == ["batch_id"]
    assert batch_id not in json.dumps(problem)
