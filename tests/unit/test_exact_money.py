"""The amounts of the store's currency checked in pydantic-core (issue 20, ingest/amounts.py
`validated_exact_money`): it builds the same batch as the wire model when every amount has the exponent's
places and at most 15 digits, refuses anything else, and a refusal leaves the answer to the wire model, so
a batch gets the same answer as before: the same 400 for wrong places or range, a 202 for a long amount.
"""

from __future__ import annotations

import orjson
import pytest

from backends.memory.storage import MemoryStorage
from core.clock import utc_now
from core.errors import ApiError
from ingest.amounts import validated_exact_money
from ingest.stores import put_stores
from ingest.trade_records import document_json, post_trade_records
from ingest.wire.requests import TradeRecordsBatch
from tests.payloads import store, stores_batch
from tests.trade_payloads import Line, trade_batch, trade_record

DAY = "2026-11-20"
MODIFIER = {"group_id": "G1", "option_id": "O1", "quantity": "1", "price_delta": "0"}


def batch_body(currency: str = "USD", exponent: int = 2, price_delta: str | None = None) -> dict:
    lines = [Line("P-BURGER", 2, 550, modifiers=[dict(MODIFIER)]), Line("P-COLA", 1, 199)]
    record = trade_record("S1", DAY, lines, currency=currency, exponent=exponent, tax=130, tip=100)
    record["items"][0]["modifiers"][0]["price_delta"] = price_delta or ("0" if exponent == 0 else "0." + "0" * exponent)
    return trade_batch("S1", DAY, [record])


@pytest.mark.parametrize(("currency", "exponent"), [("USD", 2), ("JPY", 0), ("KWD", 3), ("CLF", 4)])
def test_a_batch_with_the_exponents_places_is_the_wire_models_batch(currency, exponent):
    body = orjson.dumps(batch_body(currency, exponent))
    exact = validated_exact_money(TradeRecordsBatch, body, exponent)
    wire = TradeRecordsBatch.model_validate_json(body)
    assert exact is not None and exact == wire and exact.model_fields_set == wire.model_fields_set
    assert [document_json(record) for record in exact.trade_records] == [
        document_json(record) for record in wire.trade_records
    ]
    assert validated_exact_money(TradeRecordsBatch, body, exponent + 1) is None


@pytest.mark.parametrize("amount", ["12.5", "12.500", "12", "-0.1", "12345678901234.00"])
def test_other_places_or_more_than_15_digits_are_left_to_the_wire_model(amount):
    body = orjson.dumps(batch_body(price_delta=amount))
    TradeRecordsBatch.model_validate_json(body)  # a valid Money for the wire model
    assert validated_exact_money(TradeRecordsBatch, body, 2) is None


@pytest.fixture
def storage() -> MemoryStorage:
    """Partner p1 with store S1 (USD) registered and its master data sent."""
    storage = MemoryStorage()
    storage.add_partner("p1", "Partner one", utc_now())
    storage.register_stores("p1", ["S1"], utc_now())
    partner = storage.get_partner("p1")
    assert partner is not None
    assert put_stores(storage, partner, orjson.dumps(stores_batch(store("S1")))).http_status == 202
    return storage


def post(storage: MemoryStorage, body: dict):
    return post_trade_records(storage, None, storage.get_partner("p1"), orjson.dumps(body), 0)  # type: ignore[arg-type]


def test_wrong_places_and_range_answer_the_wire_models_problems(storage):
    body = batch_body(price_delta="0.5")
    body["trade_records"][0]["payments"][0]["tip_amount"] = "99999999999999.99"
    with pytest.raises(ApiError) as refused:
        post(storage, body)
    assert [(problem.path, problem.message) for problem in refused.value.errors] == [
        (
            "trade_records[0].items[0].modifiers[0].price_delta",
            "USD amounts have exactly 2 decimal places (for example 12.50)",
        ),
        (
            "trade_records[0].payments[0].tip_amount",
            "must be at most 90071992547409.91 USD in absolute value",
        ),
    ]


def test_an_amount_of_16_digits_within_range_is_still_accepted(storage):
    assert post(storage, batch_body(price_delta="12345678901234.00")).http_status == 202
