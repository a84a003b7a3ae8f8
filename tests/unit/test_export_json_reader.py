"""export/json_reader.py: a page of 500 documents or more is read by arrow-rs's decoder with decimals and times
cast by Arrow (decision 0124); what it gives is what Arrow's own reader gives, and what Arrow's reader refuses
(a place too many, a time's seventh digit) still fails the page, never rounded."""

from __future__ import annotations

import orjson
import pyarrow as pa
import pytest

from bench import generate
from export.documents import DOCUMENT, WITH_TEXTS
from export.json_reader import DECODED_FROM, _decoded, _read_by_arrow, read_page

AWKWARD = ["抹茶 ラテ", 'say "hi"', "back\\slash", "tab\there", "\x00\x1f", "\u2028", "", "O'Brien, Dr."]


def documents(count: int = DECODED_FROM) -> list[dict]:
    records = generate.trade_records(count)
    for number, record in enumerate(records):
        record["employee_id"] = AWKWARD[number % len(AWKWARD)]
        record["items"][0]["product_name"] = AWKWARD[(number + 3) % len(AWKWARD)]
        if number % 3 == 0:
            record["opened_at"] = "2026-11-20T23:30:00.123456+09:00"
            record["member_id"] = None
    return records


def by_arrow(lines: list[bytes], schema: pa.Schema) -> pa.Table:
    data = b"\n".join([*lines, b""])
    return _read_by_arrow(lines, data, schema, data.count(b"\n") > len(lines))


@pytest.mark.parametrize("schema", [WITH_TEXTS, DOCUMENT], ids=["with texts", "without"])
def test_the_decoder_reads_what_arrows_reader_reads(schema):
    lines = [orjson.dumps(record) for record in documents()]
    data = b"\n".join([*lines, b""])
    decoded = _decoded(data, len(lines), schema)  # the decoder itself, not its fallback
    assert decoded.schema == schema
    assert decoded.equals(by_arrow(lines, schema))
    assert read_page(lines, schema).equals(decoded)


def with_value(records: list[dict], where: str, value: object) -> list[bytes]:
    """The documents with one value changed in the last record: `where` is a record's key or items.N.key."""
    changed = orjson.loads(orjson.dumps(records[-1]))
    if where.startswith("items."):
        changed["items"][0][where.split(".")[1]] = value
    else:
        changed[where] = value
    return [orjson.dumps(record) for record in [*records[:-1], changed]]


@pytest.mark.parametrize(
    ("where", "value"),
    [
        ("total_amount", "4.89001"),  # a place too many for decimal128(38, 4): arrow-rs alone would round it
        ("items.quantity", "1.123456789"),  # a place too many for decimal128(38, 8)
        ("opened_at", "2026-11-20T19:47:33.1234567-05:00"),  # a seventh digit: arrow-rs alone would drop it
        ("total_amount", ""),
    ],
)
def test_what_arrows_reader_refuses_still_fails_the_page(where, value):
    lines = with_value(documents(), where, value)
    with pytest.raises(pa.ArrowInvalid):
        by_arrow(lines, WITH_TEXTS)
    with pytest.raises(pa.ArrowInvalid):
        read_page(lines, WITH_TEXTS)


@pytest.mark.parametrize(
    ("where", "value"),
    [
        ("opened_at", "2026-11-20T19:47:33"),  # no offset: Arrow's reader takes it as UTC, Arrow's cast refuses it
        ("total_amount", 4.89),  # a number where the wire has a decimal's text
    ],
)
def test_a_value_the_decoder_refuses_is_read_by_arrows_reader(where, value):
    lines = with_value(documents(), where, value)
    assert read_page(lines, WITH_TEXTS).equals(by_arrow(lines, WITH_TEXTS))


def test_small_pages_and_documents_on_several_lines_are_read_by_arrows_reader():
    records = documents()
    small = [orjson.dumps(record) for record in records[: DECODED_FROM - 1]]
    pretty = [orjson.dumps(record, option=orjson.OPT_INDENT_2) for record in records]
    for lines in (small, pretty):
        assert read_page(lines, WITH_TEXTS).equals(by_arrow(lines, WITH_TEXTS))
