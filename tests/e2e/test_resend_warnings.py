"""A resend answers what the first answer told (decision 0030), on every write and every backend: the
200 ALREADY_RECEIVED carries the warnings of the first 202 (codes, paths, fields), as the first answer is
often the one a timeout lost. RESEND_BODY_IGNORED tells a change of what the body says, not of its bytes:
the same batch written with other whitespace or member order is the same batch. A marker stored before the
warnings were kept whole still tells them by code."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.conftest import make_partner
from tests.e2e.test_business_day import DAY, open_store
from tests.e2e.test_resend import WRITES, send
from tests.trade_payloads import Line, trade_batch, trade_record


@pytest.fixture
def anywhere(backend_host):
    """A partner on each backend in turn."""
    return make_partner(backend_host)


def with_unknown_member(kind: str) -> dict:
    """A valid first batch of kind whose answer warns: a member the service does not know (each write has one)."""
    body = WRITES[kind][2]()
    body["pos_version"] = "7.2"
    if kind == "trade-records":  # and a record that breaks the amount identity
        body["trade_records"][0]["total_amount"] = "5.99"
    return body


def warnings_of(response) -> list[tuple]:
    return [(w["code"], w["path"], w.get("field"), w["message"]) for w in response.json()["warnings"]]


def rewritten(body: dict) -> bytes:
    """The same JSON value written otherwise: indented, every object's members in reverse order."""

    def reverse(value):
        if isinstance(value, dict):
            return {key: reverse(value[key]) for key in reversed(list(value))}
        if isinstance(value, list):
            return [reverse(element) for element in value]
        return value

    return json.dumps(reverse(body), indent=3, ensure_ascii=True).encode()


@pytest.mark.parametrize("kind", WRITES)
def test_a_resend_carries_the_first_answers_warnings(anywhere, kind):
    open_store(anywhere)
    body = with_unknown_member(kind)
    first = send(anywhere, kind, body)
    assert first.status_code == 202, first.text
    told = warnings_of(first)
    assert ("UNKNOWN_MEMBER_IGNORED", "$", "pos_version") in [w[:3] for w in told]
    if kind == "trade-records":
        assert ("AMOUNT_MISMATCH", "trade_records[0]", "total_amount") in [w[:3] for w in told]

    again = send(anywhere, kind, body)
    assert (again.status_code, again.json()["status"]) == (200, "ALREADY_RECEIVED")
    assert warnings_of(again) == told

    # the same content written otherwise is the same body: no RESEND_BODY_IGNORED
    assert warnings_of(send(anywhere, kind, rewritten(body))) == told

    # other content: the new body was ignored, and the first answer is still told
    changed = WRITES[kind][3](body)
    ignored = warnings_of(send(anywhere, kind, changed))
    assert [w[:3] for w in ignored[:1]] == [("RESEND_BODY_IGNORED", "$", "batch_id")]
    assert ignored[1:] == told


def test_a_resend_tells_the_records_the_first_answer_moved(anywhere):
    open_store(anywhere)
    record = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], tax=44)
    assert send(anywhere, "trade-records", trade_batch("S1", DAY, [record])).status_code == 202
    moved = {**record, "version": 2, "business_date": "2026-11-21", "last_modified_at": "2026-11-21T20:00:00Z"}
    other = trade_record("S1", "2026-11-21", [Line("P-COLA", 1, 199)], opened_at="2026-11-21T12:00:00-05:00")
    body = trade_batch("S1", "2026-11-21", [other, moved])
    first = send(anywhere, "trade-records", body)
    assert first.status_code == 202, first.text
    told = warnings_of(first)
    assert ("TRADE_RECORD_MOVED", "trade_records[1]", "business_date") in [w[:3] for w in told]
    assert warnings_of(send(anywhere, "trade-records", body)) == told


def test_a_batch_stored_before_the_warnings_were_kept_tells_them_by_code(partner):
    open_store(partner)
    body = with_unknown_member("trade-records")
    assert send(partner, "trade-records", body).status_code == 202
    with sqlite3.connect(partner.host.data_dir / "pos.sqlite3") as db:  # as a release before decision 0030 kept it
        db.execute(
            "UPDATE batches SET answer = NULL, meaning_digest = NULL WHERE partner_id = ? AND batch_id = ?",
            (partner.partner_id, body["batch_id"]),
        )
    again = send(partner, "trade-records", body)
    assert [w[:3] for w in warnings_of(again)] == [
        ("AMOUNT_MISMATCH", "$", None),
        ("UNKNOWN_MEMBER_IGNORED", "$", None),
    ]
    assert "carried 1 AMOUNT_MISMATCH warning;" in again.json()["warnings"][0]["message"]
    # without what the body said, a body written otherwise is told apart by its bytes, as before
    codes = [w[0] for w in warnings_of(send(partner, "trade-records", rewritten(body)))]
    assert codes[0] == "RESEND_BODY_IGNORED"


def test_a_validate_only_resend_carries_them_too(partner):
    open_store(partner)
    body = with_unknown_member("stores")
    told = warnings_of(send(partner, "stores", body))
    checked = partner.put("stores?validate_only=true", body)
    assert (checked.status_code, checked.json()["status"]) == (200, "ALREADY_RECEIVED")
    assert warnings_of(checked) == told
