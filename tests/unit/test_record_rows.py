"""The stored row of a trade record (ingest.trade_records._row), built with positional arguments for speed:
each field must still hold what its name says, whatever order TradeRecordRow's fields come to have; the same
for the fast path's Structs, whose documents msgspec writes into a buffer kept per thread."""

from __future__ import annotations

import dataclasses
import sys
import threading

import msgspec
import orjson

from bench import generate
from core.records import TradeRecordRow
from ingest.amounts import MoneyReader
from ingest.one_parse import read_batch, validated_once
from ingest.record_amounts import read_amounts
from ingest.trade_records import _row, document_json
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


def structs_and_wire(body: bytes):
    read = read_batch(TradeRecordsBatch, body)
    assert read is not None
    fast = validated_once(TradeRecordsBatch, body, read, 2)
    assert fast is not None
    return fast.trade_records, TradeRecordsBatch.model_validate_json(body).trade_records


def test_the_rows_of_the_structs_are_the_rows_of_the_dataclasses():
    structs, wire = structs_and_wire(generate.batch_bodies(1, 120, seed=21, tag="S")[0])
    for struct, record in zip(structs, wire, strict=True):
        row = _row(struct, read_amounts("x", struct, MoneyReader(struct.currency, 2)))
        expected = _by_name(record, read_amounts("x", record, MoneyReader(record.currency)))
        for field in dataclasses.fields(TradeRecordRow):
            assert getattr(row, field.name) == getattr(expected, field.name), field.name


def test_a_documents_buffer_holds_only_the_latest_document():
    # the buffer is reused: a short document after a long one must not keep the long one's tail
    structs, _ = structs_and_wire(generate.batch_bodies(1, 60, seed=22, tag="B")[0])
    by_size = sorted(structs, key=lambda record: len(msgspec.json.encode(record)), reverse=True)
    assert len(msgspec.json.encode(by_size[0])) > len(msgspec.json.encode(by_size[-1]))
    for record in [*by_size, by_size[0], by_size[-1]]:
        assert document_json(record) == msgspec.json.encode(record).decode()


def test_threads_write_their_documents_into_buffers_of_their_own():
    structs, _ = structs_and_wire(generate.batch_bodies(1, 200, seed=23, tag="T")[0])
    expected = [msgspec.json.encode(record).decode() for record in structs]
    wrong = []
    start = threading.Barrier(4)

    def write(offset: int) -> None:
        start.wait()
        for _ in range(5):
            order, wanted = structs[offset:] + structs[:offset], expected[offset:] + expected[:offset]
            wrong.extend(
                record.trade_record_id
                for record, document in zip(order, wanted, strict=True)
                if document_json(record) != document
            )

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # a thread switch every microsecond: between one's write and its read, often
    try:
        threads = [threading.Thread(target=write, args=(offset,)) for offset in (0, 50, 100, 150)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert wrong == []
