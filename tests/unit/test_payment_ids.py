"""PAYMENT_ID_REUSED (ingest/payment_ids.py) of a parsed batch: a payment_id used by another trade_record_id,
stored or earlier in the batch, is reported; a record's own payment_ids (a new version of it, stored or in the
same batch) are not. A batch of distinct payment_ids none of which is stored is told by one set."""

from __future__ import annotations

import orjson

from ingest.payment_ids import PAYMENT_ID_REUSED, reused_payment_ids
from ingest.wire.requests import TradeRecordsBatch
from tests.trade_payloads import Line, Pay, trade_batch, trade_record

DAY = "2026-11-20"


def records(*payment_ids_of: tuple[str, list[str]]):
    """Records (trade_record_id, its payment_ids), parsed."""
    built = []
    for trade_record_id, payment_ids in payment_ids_of:
        record = trade_record("S1", DAY, [Line("P", 1, 100)], [Pay(100)] * len(payment_ids))
        record["trade_record_id"] = trade_record_id
        for payment, payment_id in zip(record["payments"], payment_ids, strict=True):
            payment["payment_id"] = payment_id
        built.append(record)
    return TradeRecordsBatch.model_validate_json(orjson.dumps(trade_batch("S1", DAY, built))).trade_records


def found(batch, stored_users=None) -> list[tuple[str, str | None, str]]:
    warnings = reused_payment_ids(batch, stored_users or {})
    assert {warning.code for warning in warnings} <= {PAYMENT_ID_REUSED}
    return [(warning.path, warning.field, warning.message) for warning in warnings]


def test_distinct_new_payment_ids_are_not_reported():
    assert found(records(("T1", ["P1"]), ("T2", ["P2", "P3"]))) == []


def test_a_payment_id_another_record_of_the_batch_uses_is_reported_at_the_later_one():
    batch = records(("T1", ["P1"]), ("T2", ["P2", "P1"]))
    assert found(batch) == [
        (
            "trade_records[1]",
            "payments[1].payment_id",
            "trade_records[0] of this batch, another trade_record_id, uses this payment_id too; payment_id is "
            "unique within the partner",
        )
    ]


def test_a_new_version_of_a_record_in_the_same_batch_keeps_its_payment_ids():
    assert found(records(("T1", ["P1"]), ("T1", ["P1"]))) == []


def test_a_stored_payment_id_of_another_record_is_reported_even_in_a_batch_of_distinct_ids():
    batch = records(("T1", ["P1"]), ("T2", ["P2"]))
    [(path, field, message)] = found(batch, {"P2": {"T9"}})
    assert (path, field) == ("trade_records[1]", "payments[0].payment_id")
    assert message.startswith('this payment_id is already used by trade record "T9" of this partner')


def test_a_stored_payment_id_of_the_same_record_is_its_own():
    assert found(records(("T1", ["P1"])), {"P1": {"T1"}}) == []
