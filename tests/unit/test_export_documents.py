"""export/documents.py and export/json_text.py: a store-day's stored records read for the Parquet export. The
JSON text of tax_lines and modifiers, written by Arrow's kernels from the parsed values (decision 0123), is what
orjson writes of the values as the service stores them (the wire's TaxLine and TradeModifier, every field in its
order), whatever the strings hold; a document written otherwise (spaces, several lines) is read alike, and a
tax line of another shape is written by orjson."""

from __future__ import annotations

import json

import orjson

from core.documents_page import DocumentsPage
from export.documents import read_documents

CONTROL = "".join(chr(code) for code in range(0x20))
TRICKY = [
    "a]b",
    'say "hi"',
    "back\\slash",
    "[x]",
    '"modifiers":[1]',
    "抹茶 ラテ",
    "{",
    '"tax_lines":null',
    CONTROL,
    "tab\there\r\n",
    "\x7f\u2028/\\u00e9",
]


def modifier(name: str | None = "Extra cheddar") -> dict:
    return {"group_id": "G-1", "option_id": "O.1/x", "option_name": name, "quantity": "1", "price_delta": "0.50"}


def tax_line(code: str = "US-NY") -> dict:
    amounts = {"tax_rate": "0.045", "taxable_amount": "12.84", "tax_amount": "0.58"}
    return {"tax_code": code, **amounts, "is_inclusive": False}


def document(trade_record_id: str, lines: list[list[dict]], tax_lines: list[dict] | None) -> dict:
    items = [
        {"line_no": n, "product_id": f"P{n}", "modifiers": mods, "is_voided": False} for n, mods in enumerate(lines)
    ]
    record = {"trade_record_id": trade_record_id, "currency": "USD", "items": items, "payments": []}
    return record if tax_lines is None else {**record, "tax_lines": tax_lines}


def expected_texts(record: dict) -> list[str]:
    """orjson's text of each parsed value, [] for null or absent."""
    values = [record.get("tax_lines"), *(line.get("modifiers") for line in record.get("items") or [])]
    return [orjson.dumps(value or []).decode() for value in values]


def records() -> list[dict]:
    return [
        document("T1", [[], [modifier()]], [tax_line(), tax_line("US-NY-NYC")]),
        document("T2", [[], []], None),
        document("T3", [], []),
        {"trade_record_id": "T4", "currency": "USD"},  # neither items nor tax_lines
        document("T5", [[modifier(None), modifier("")]], [{**tax_line(), "is_inclusive": True}]),
        document("T6", [[None, modifier()]], [None, {**tax_line(), "is_inclusive": None}]),  # type: ignore[list-item]
        *[document(f"S{n:02d}", [[modifier(text)], []], [tax_line(text)]) for n, text in enumerate(TRICKY)],
    ]


def page(documents: list[bytes]) -> DocumentsPage:
    ids = [orjson.loads(document)["trade_record_id"] for document in documents]
    count = len(documents)
    return DocumentsPage(ids, [1] * count, [0] * count, ["01"] * count, *([[0] * count] * 5), documents)


def assert_texts(read, by_id: dict[str, dict]) -> None:
    order = read.narrow.column("trade_record_ids").to_pylist()
    assert read.tax_lines.to_pylist() == [expected_texts(by_id[key])[0] for key in order]
    assert read.modifiers.to_pylist() == [text for key in order for text in expected_texts(by_id[key])[1:]]


def test_the_texts_are_what_orjson_writes_of_the_stored_values_whatever_the_strings_hold():
    written = [orjson.dumps(record) for record in records()]
    read = read_documents([page(written)])
    assert_texts(read, {record["trade_record_id"]: record for record in records()})


def test_a_page_read_on_the_export_threads_gives_each_record_its_texts():
    """A page of 600 records (over export.pool.SMALL): parsed on the export's threads."""
    many = [
        document(f"R{n:04d}", [[modifier(TRICKY[n % len(TRICKY)])], []], [tax_line()] if n % 2 else None)
        for n in range(600)
    ]
    read = read_documents([page([orjson.dumps(record) for record in many])])
    assert_texts(read, {record["trade_record_id"]: record for record in many})


def test_a_document_with_spaces_or_on_several_lines_is_read_alike():
    compact = read_documents([page([orjson.dumps(record) for record in records()])])
    pretty = [orjson.dumps(record, option=orjson.OPT_INDENT_2) for record in records()]
    spaced = [json.dumps(record, ensure_ascii=False).encode() for record in records()]  # ", " and ": "
    escaped = [json.dumps(record).encode() for record in records()]  # \u escapes for every non-ASCII character
    assert b"\n" in pretty[0]
    for documents in (pretty, spaced, escaped):
        read = read_documents([page(documents)])
        assert read.parsed.column("currency").to_pylist() == ["USD"] * len(documents)
        assert read.tax_lines.equals(compact.tax_lines)
        assert read.modifiers.equals(compact.modifiers)


def test_a_tax_line_of_another_shape_is_written_by_orjson():
    """A value of another type than the wire's (a number for a decimal string) fails Arrow's parse of the
    texts: that page's texts are orjson's of the values."""
    odd = [
        {**document("O1", [[modifier()]], [{**tax_line(), "tax_rate": 0.045}]), "note": "x"},
        document("O2", [[{**modifier(), "quantity": 2}]], [tax_line()]),
        document("O3", [[]], ["not an object"]),  # type: ignore[list-item]
    ]
    usual = records()
    read = read_documents([page([orjson.dumps(record) for record in odd]), page([orjson.dumps(r) for r in usual])])
    assert_texts(read, {record["trade_record_id"]: record for record in [*odd, *usual]})


def test_pages_in_any_order_are_read_in_trade_record_id_order():
    written = [orjson.dumps(record) for record in records()]
    read = read_documents([page(written[4:]), page(written[:4])])
    order = sorted(record["trade_record_id"] for record in records())
    by_id = {record["trade_record_id"]: record for record in records()}
    assert read.records == len(written)
    assert read.narrow.column("trade_record_ids").to_pylist() == order
    assert_texts(read, by_id)
    product_ids = [line["product_id"] for line in read.parsed.column("items").combine_chunks().flatten().to_pylist()]
    assert product_ids == [line["product_id"] for key in order for line in by_id[key].get("items") or []]


def test_the_reader_looks_for_the_keys_in_the_order_the_stored_documents_have_them():
    """Decision 0124: Arrow's JSON reader finds a key fastest right after the field before it; the service stores
    the wire's fields in their order (the documents are orjson's text of the wire's dataclasses)."""
    import dataclasses

    from export.documents import WITH_TEXTS
    from ingest.wire.requests import Payment, TradeItem, TradeRecord

    def in_wire_order(names: list[str], wire: type) -> bool:
        order = [field.name for field in dataclasses.fields(wire)]
        return names == sorted(names, key=order.index)

    assert in_wire_order(WITH_TEXTS.names, TradeRecord)
    assert in_wire_order([field.name for field in WITH_TEXTS.field("items").type.value_type], TradeItem)
    assert in_wire_order([field.name for field in WITH_TEXTS.field("payments").type.value_type], Payment)
