"""Responses built from their models (ingest/wire/responses.py `answer`, decision 0019) answer the same
bytes as the dicts the use cases built by hand before: members in the same order, null where they were
null, absent where they were absent (also a member that a stored result predates)."""

from __future__ import annotations

import datetime as dt

import orjson
import pytest

from core.clock import to_api_text
from core.ports import ClosedDay
from ingest.batches import BatchOutcome
from ingest.daily_close_status import status_answer
from ingest.wire.responses import BatchWarning, MappingResponse, answer

DAY = dt.date(2026, 11, 20)
CHECKED = dt.datetime(2026, 11, 21, 3, 4, 5, 120000, tzinfo=dt.timezone(dt.timedelta(hours=9)))
DUE = dt.datetime(2026, 11, 21, 3, 19, 5, tzinfo=dt.UTC)
TOTALS = {
    "trade_record_count": 2,
    "item_row_count": 3,
    "payment_row_count": 2,
    "net_sales_amount": "10.00",
    "tax_amount": "0.80",
    "tip_amount": "0.00",
    "payment_total_amount": "10.80",
}
DETAILS = {
    "raw_differences": {"trade_record_count": -1, "net_sales_amount": "-0.01"},
    "batch_count_received": 1,
    "batch_count_expected": 2,
    "batch_seqs_received": [1],
    "missing_batch_seqs": [2],
    "unmapped_source_codes": ["X"],
    "unknown_payment_types": [],
    "source_codes": ["S", "X"],
    "mapped_source_codes": {"S": "SALE"},
    "records_moved_out": [{"trade_record_id": "T-1", "to_store_id": "S2", "to_business_date": "2026-11-21"}],
}
# A result saved before results recorded their mapping and the records moved out.
OLD_DETAILS = {
    name: value for name, value in DETAILS.items() if name not in ("mapped_source_codes", "records_moved_out")
}


def by_hand(day: ClosedDay) -> dict:
    """The status body as ingest/daily_close_status.py built it by hand before."""
    body = {
        "store_id": day.store_id,
        "business_date": day.business_date.isoformat(),
        "status": day.status,
        "checked_at": None if day.checked_at is None else to_api_text(day.checked_at),
        "expected": {name: value for name, value in day.expected.items() if name != "batch_count"},
        "actual": day.actual,
        "differences": day.differences,
    }
    if day.details is not None:
        body["details"] = day.details
    if day.status == "RECEIVED":
        body["reconciliation_due_at"] = to_api_text(day.due_at)
    return body


def from_model(day: ClosedDay) -> dict:
    return status_answer(day.store_id, day.business_date, day)


def closed_day(status: str, **result) -> ClosedDay:
    return ClosedDay(
        "S1", DAY, "b", "USD", {"batch_count": 2, **TOTALS}, DUE - dt.timedelta(minutes=15), DUE, status, **result
    )


@pytest.mark.parametrize(
    "day",
    [
        closed_day("RECEIVED"),
        closed_day("RECEIVED", details=DETAILS),  # reopened after a result
        closed_day("MATCHED", checked_at=CHECKED, actual=TOTALS, details=DETAILS),
        closed_day("MISMATCHED", checked_at=CHECKED, actual=TOTALS, differences=["net_sales_amount"], details=DETAILS),
        closed_day("MATCHED", checked_at=CHECKED, actual=TOTALS, details=OLD_DETAILS),
        closed_day("MATCHED", checked_at=CHECKED.replace(microsecond=0), actual=TOTALS),
    ],
    ids=["received", "reopened", "matched", "mismatched", "old-result", "no-details"],
)
def test_the_status_answer_has_the_bytes_of_the_hand_built_one(day):
    assert orjson.dumps(from_model(day)) == orjson.dumps(by_hand(day))


def test_a_day_not_received_answers_nulls_and_no_optional_member():
    assert orjson.dumps(status_answer("S1", DAY, None)) == orjson.dumps(
        {
            "store_id": "S1",
            "business_date": "2026-11-20",
            "status": "NOT_RECEIVED",
            "checked_at": None,
            "expected": None,
            "actual": None,
            "differences": [],
        }
    )


def test_the_mapping_answer_keeps_its_members_and_their_order():
    entries = [
        {"source_code": "01", "source_name": None, "standard_code": "SALE"},
        {"source_code": "R", "source_name": "Refund", "standard_code": "REFUND"},
    ]
    batch_id = "3f0c6d3e-2a59-4f4b-9a0e-0d6d2c1b7a01"
    body = answer(
        MappingResponse,
        {"partner_id": "p1", "batch_id": batch_id, "updated_at": CHECKED.astimezone(dt.UTC), "mappings": entries},
    )
    assert orjson.dumps(body) == orjson.dumps(
        {"partner_id": "p1", "batch_id": batch_id, "updated_at": to_api_text(CHECKED), "mappings": entries}
    )
    empty = answer(MappingResponse, {"partner_id": "p1", "batch_id": None, "updated_at": None, "mappings": []})
    assert empty == {"partner_id": "p1", "batch_id": None, "updated_at": None, "mappings": []}


def test_the_batch_answer_leaves_out_a_warning_field_that_is_none():
    warnings = [BatchWarning("A", "trade_records[0]", "m", field="total_amount"), BatchWarning("B", "$", "n")]
    body = BatchOutcome("ABC", 2, replayed=True, warnings=warnings).as_dict()
    assert orjson.dumps(body) == orjson.dumps(
        {
            "batch_id": "ABC",
            "status": "ALREADY_RECEIVED",
            "record_count": 2,
            "warnings": [
                {"code": "A", "path": "trade_records[0]", "message": "m", "field": "total_amount"},
                {"code": "B", "path": "$", "message": "n"},
            ],
        }
    )
