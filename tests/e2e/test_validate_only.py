"""Decision 0022: `?validate_only=true` on the five writes, over HTTP on both backends.

A validate-only request runs every check of a real send and answers what the real send would answer,
with status VALID (200) in place of ACCEPTED (202), or the same problem; it stores nothing, claims no
batch_id (the real send of the same body is then accepted), enqueues nothing and reconciles nothing.
"""

from __future__ import annotations

import datetime as dt
import time

import pytest

from tests.backend_storage import footprint, storage_of
from tests.conftest import make_partner, start_host
from tests.contract.test_nothing_replaced import settle
from tests.e2e.test_business_day import DAY, DIRECTIONS, open_store, wait_for_result
from tests.e2e.test_close_race import queued
from tests.e2e.test_resend import WRITES
from tests.payloads import mapping_batch, problem_of, product, products_batch, store, stores_batch
from tests.trade_payloads import Line, daily_close, totals_of, trade_batch, trade_record

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")

OTHER_DAY = "2026-11-21"


def sale(**changes) -> dict:
    return trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], tax=44, **changes)


# kind: a body a real send accepts, with a warning (a member the service does not know, and for trade
# records an amount that does not add up), and new data that would show in the partner's footprint
BODIES = {
    "stores": lambda: stores_batch(store("S1", store_name="Renamed by a validation"), extra_member=1),
    "products": lambda: products_batch([product("P-NEW")], extra_member=1),
    "mappings": lambda: mapping_batch(("01", "SALE"), ("02", "REFUND"), ("09", "RETURN"), extra_member=1),
    "trade-records": lambda: {**trade_batch("S1", DAY, [{**sale(), "total_amount": "9.99"}]), "extra_member": 1},
    "daily-close": lambda: {**daily_close("S1", DAY, totals_of([], {"01"}, DIRECTIONS)), "extra_member": 1},
}


def send(partner, kind: str, body: dict, validate_only: str | None = None):
    method, route, *_ = WRITES[kind]
    path = route if validate_only is None else f"{route}?validate_only={validate_only}"
    return partner.put(path, body) if method == "PUT" else partner.post(path, body)


def validate(partner, kind: str, body: dict):
    return send(partner, kind, body, "true")


def state_of(host, partner, *batch_ids: str) -> dict:
    return footprint(
        host,
        partner.partner_id,
        dates=(DAY, OTHER_DAY),
        batch_ids=batch_ids,
        products=(("P-BURGER", None), ("P-NEW", None)),
    )


def without_request_id(problem: dict) -> dict:
    return {name: value for name, value in problem.items() if name != "request_id"}


@pytest.fixture
def shop(backend_host):
    partner = make_partner(backend_host, ("S1",))
    open_store(partner)
    return partner


@pytest.mark.parametrize("kind", WRITES)
def test_a_validation_answers_as_the_real_send_and_stores_nothing(backend_host, shop, kind):
    body = BODIES[kind]()
    before = state_of(backend_host, shop, body["batch_id"])
    since = len(backend_host.log())

    checked = validate(shop, kind, body)
    assert checked.status_code == 200, checked.text
    assert checked.json()["status"] == "VALID" and "Idempotent-Replayed" not in checked.headers
    assert checked.json()["warnings"], checked.json()  # the warnings a real send gets
    if kind == "daily-close":
        settle(backend_host, shop, body["batch_id"], since)  # no reconciliation message
    assert state_of(backend_host, shop, body["batch_id"]) == before

    # the batch_id was not used up: the real send of the same body is accepted, with the same answer
    real = send(shop, kind, body)
    assert real.status_code == 202, real.text
    assert checked.json() == {**real.json(), "status": "VALID"}
    assert state_of(backend_host, shop, body["batch_id"]) != before


@pytest.mark.parametrize("kind", WRITES)
def test_a_validation_of_a_refused_body_gets_the_real_sends_problem(backend_host, shop, kind):
    _, _, valid, refused, not_ours = WRITES[kind]
    for make in (refused, not_ours):
        if make is None:
            continue
        body = make(valid())
        before = state_of(backend_host, shop, body["batch_id"])
        checked, real = validate(shop, kind, body), send(shop, kind, body)
        assert checked.status_code == real.status_code and checked.status_code in (400, 403), checked.text
        assert without_request_id(checked.json()) == without_request_id(real.json())
        assert state_of(backend_host, shop, body["batch_id"]) == before


@pytest.mark.parametrize("kind", WRITES)
def test_a_validation_of_a_batch_id_already_received_is_answered_as_its_resend(backend_host, shop, kind):
    body = BODIES[kind]()
    assert send(shop, kind, body).status_code == 202
    changed = {**body, "extra_member": 2}  # another body: RESEND_BODY_IGNORED
    for resent in (body, changed):
        checked, real = validate(shop, kind, resent), send(shop, kind, resent)
        assert checked.status_code == real.status_code == 200, checked.text
        assert checked.json() == real.json() and checked.json()["status"] == "ALREADY_RECEIVED"
        assert checked.headers["Idempotent-Replayed"] == "true"


def test_validations_leave_a_reconciled_day_and_its_queue_alone(backend_host, shop):
    record = sale()
    assert shop.post("trade-records", trade_batch("S1", DAY, [record])).status_code == 202
    close = daily_close("S1", DAY, totals_of([record], {"01"}, DIRECTIONS))
    assert shop.post("daily-close", close).status_code == 202
    result = wait_for_result(shop, "S1", DAY)
    assert result["status"] == "MATCHED", result
    before = state_of(backend_host, shop)
    since = len(backend_host.log())

    # each of these, sent for real, would put the day back to RECEIVED and reconcile it again
    more = trade_batch("S1", DAY, [sale()], batch_seq=2)
    remapped = mapping_batch(("01", "REFUND"), ("02", "REFUND"))
    new_close = daily_close("S1", DAY, totals_of([record], {"01"}, DIRECTIONS))
    assert validate(shop, "trade-records", more).json()["status"] == "VALID"
    assert validate(shop, "mappings", remapped).json()["status"] == "VALID"
    assert validate(shop, "daily-close", new_close).json()["status"] == "VALID"

    settle(backend_host, shop, new_close["batch_id"], since)  # no reconciliation run, no message of the close
    if backend_host.env.get("POS_BACKEND") != "azure":
        assert queued(backend_host, close["batch_id"]) == [] and queued(backend_host, shop.partner_id) == []
    assert shop.get(f"daily-close/S1/{DAY}").json() == result
    assert state_of(backend_host, shop) == before


def test_a_validation_tells_which_records_a_send_would_move_to_another_day(backend_host, shop):
    first = sale()
    assert shop.post("trade-records", trade_batch("S1", DAY, [first])).status_code == 202
    moved = trade_record(
        "S1",
        OTHER_DAY,
        [Line("P-BURGER", 1, 550)],
        tax=44,
        version=2,
        trade_record_id=first["trade_record_id"],
        opened_at="2026-11-21T12:00:00-05:00",
    )
    batch = trade_batch("S1", OTHER_DAY, [moved])
    checked = validate(shop, "trade-records", batch)
    assert [warning["code"] for warning in checked.json()["warnings"]] == ["TRADE_RECORD_MOVED"], checked.json()
    assert storage_of(backend_host).store_day_rows(shop.partner_id, "S1", dt.date.fromisoformat(OTHER_DAY)) == []
    real = shop.post("trade-records", batch)
    assert real.status_code == 202 and checked.json() == {**real.json(), "status": "VALID"}


def test_validate_only_false_is_a_real_send_and_another_value_is_refused(host):
    partner = make_partner(host, ("S1",))
    body = stores_batch(store("S1"))
    for value in ("yes", "TRUE", "1", ""):
        refused = partner.put(f"stores?validate_only={value}", body)
        problem = problem_of(refused, 400, "INVALID_PAYLOAD")
        assert problem["errors"] == [
            {"path": "validate_only", "message": "the query parameter validate_only must be true or false"}
        ]
    assert storage_of(host).find_batch(partner.partner_id, body["batch_id"]) is None
    accepted = partner.put("stores?validate_only=false", body)
    assert accepted.status_code == 202 and accepted.json()["status"] == "ACCEPTED"


def test_validations_count_toward_the_rate_limit(tmp_path):
    limited_host = start_host(tmp_path, RATE_LIMIT_PER_MINUTE="3")
    try:
        partner = make_partner(limited_host, ("S1",))
        answers = [partner.put("stores?validate_only=true", stores_batch(store("S1"))) for _ in range(3)]
        if int(answers[0].headers["RateLimit"].rsplit("t=", 1)[1]) < 5:  # the window may turn over: use the next
            time.sleep(6)
            answers = [partner.put("stores?validate_only=true", stores_batch(store("S1"))) for _ in range(3)]
        assert [answer.status_code for answer in answers] == [200, 200, 200]
        assert [answer.headers["RateLimit"].split(";")[1] for answer in answers] == ["r=2", "r=1", "r=0"]
        problem_of(partner.put("stores?validate_only=true", stores_batch(store("S1"))), 429, "RATE_LIMITED")
    finally:
        limited_host.stop()
