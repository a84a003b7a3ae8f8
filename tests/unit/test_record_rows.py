"""The stored row of a trade record (ingest.trade_records._row), built with positional arguments for speed:
each field must still hold what its name says, whatever order TradeRecordRow's fields come to have."""

from __future__ import annotations

import dataclasses

import orjson

from bench import generate
from core.records import TradeRecordRow
from ingest.amounts import MoneyReader
from ingest.record_amounts import read_amounts
from ingest.trade_records import _row
from ingest.wire.requests import TradeRecordsBatch


def _by_name(record, amounts) -> TradeRecordRow:
    lines: dict[str, int] = {}
    for item in record.items:
        lines[item.product_id] = lines.get(item.product_id, 0) + 1
    return TradeRecordRow(
        trade_record_id=record.trade_record_id,
        version=record.version,
        last_modified_at=record.last_modified_at,
        store_id=record.store_id,
        business_date=record.business_date,
        source_transaction_type=record.source_transaction_type,
        item_rows=len(record.items),
        payment_rows=len(record.payments),
        total_minor=amounts.total_amount,
        tax_minor=amounts.tax_amount,
        tip_minor=amounts.tip_amount,
        payments_minor=amounts.payments_by_type,
        document_json=orjson.dumps(record, option=orjson.OPT_UTC_Z).decode(),
        payment_ids=tuple(payment.payment_id for payment in record.payments),
        product_lines=lines,
    )


def test_each_field_of_a_row_holds_what_its_name_says():
    body = generate.batch_bodies(1, 120, seed=20, tag="R")[0]
    records = TradeRecordsBatch.model_validate_json(body).trade_records
    checked = 0
    for record in records:
        amounts = read_amounts("x", record, MoneyReader(record.currency))
        row, expected = _row(record, amounts), _by_name(record, amounts)
        for field in dataclasses.fields(TradeRecordRow):  # compare=False fields too
            assert getattr(row, field.name) == getattr(expected, field.name), field.name
            checked += 1
    assert checked == len(records) * len(dataclasses.fields(TradeRecordRow))
    # The batch tells fields of one type apart: two of them swapped would differ in some row.
    rows = [_row(record, read_amounts("x", record, MoneyReader(record.currency))) for record in records]
    for same_type in (("item_rows", "payment_rows"), ("total_minor", "tax_minor", "tip_minor")):
        for first, second in zip(same_type, same_type[1:] + same_type[:1], strict=True):
            assert any(getattr(row, first) != getattr(row, second) for row in rows), (first, second)
