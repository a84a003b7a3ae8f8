"""What one stored item may hold (ingest/stored_size.py): a transaction or a mapping that a Cosmos DB item
could not hold is refused with a clear problem, on both backends alike, and nothing is stored; one just
below the limit is accepted."""

from __future__ import annotations

import pytest

from tests.conftest import make_partner
from tests.e2e.test_business_day import DAY, open_store
from tests.payloads import mapping_batch
from tests.trade_payloads import Line, trade_batch, trade_record


@pytest.fixture
def partner(backend_host):
    found = make_partner(backend_host)
    open_store(found)
    return found


def many_lines(count: int) -> dict:
    # Long product names, as some POS exports write them: ~550 bytes a line as stored.
    return trade_record("S1", DAY, [Line(f"P-{n:05d}-" + "x" * 150, 1, 100) for n in range(count)])


def test_a_transaction_larger_than_one_item_holds_is_refused_clearly(partner):
    body = trade_batch("S1", DAY, [many_lines(3), many_lines(3_000)])
    response = partner.post("trade-records", body)
    assert response.status_code == 400, response.text
    problem = response.json()
    assert problem["code"] == "INVALID_PAYLOAD"
    assert [error["path"] for error in problem["errors"]] == ["trade_records[1]"]
    assert "MB as stored" in problem["errors"][0]["message"] and "1.5 MB" in problem["errors"][0]["message"]
    assert partner.get(f"daily-close/S1/{DAY}").json()["status"] == "NOT_RECEIVED"
    assert partner.post("trade-records", trade_batch("S1", DAY, [many_lines(2_000)])).status_code == 202


def test_a_mapping_larger_than_one_item_holds_is_refused_clearly(partner):
    entries = [(f"CODE-{n:06d}-" + "y" * 80, "SALE") for n in range(16_000)]
    response = partner.put("mappings/transaction-types", mapping_batch(*entries))
    assert response.status_code == 400, response.text
    assert [error["path"] for error in response.json()["errors"]] == ["mappings"]
    assert [entry["source_code"] for entry in partner.get("mappings/transaction-types").json()["mappings"]] == [
        "01",
        "02",
    ]
