"""export/documents.py: a store-day's stored records read for the Parquet export. The JSON text of tax_lines and
modifiers cut from a document's text is what orjson writes of the parsed values, whatever the strings hold,
and a document written otherwise than the service writes them (spaces, several lines) is read alike."""

from __future__ import annotations

import json

import orjson

from core.documents_page import DocumentsPage
from export.documents import json_texts, read_documents

TRICKY = ["a]b", 'say "hi"', "back\\slash", "[x]", '"modifiers":[1]', "抹茶 ラテ", "{", '"tax_lines":null']


def document(trade_record_id: str, lines: list[list[dict] | None], tax_lines: list[dict] | None, **extra) -> dict:
    items = [
        {"line_no": n, "product_id": f"P{n}", "modifiers": mods, "is_voided": False} for n, mods in enumerate(lines)
    ]
    return {"trade_record_id": trade_record_id, "currency": "USD", "items": items, "tax_lines": tax_lines, **extra}


def expected_texts(record: dict) -> list[str]:
    """What the export wrote before it cut the text: orjson's text of each parsed value, [] for null."""
    values = [record.get("tax_lines"), *(line.get("modifiers") for line in record.get("items") or [])]
    return [orjson.dumps(value or []).decode() for value in values]


def records() -> list[dict]:
    modifier = {"option_id": "O1", "option_name": TRICKY[0], "quantity": "1", "price_delta": "0.50"}
    tax = {"tax_code": "T", "tax_rate": "0.08", "tax_amount": "0.40", "is_inclusive": False}
    return [
        document("T1", [[], [modifier]], [tax]),
        document("T2", [None, []], None),
        document("T3", [], []),
        {"trade_record_id": "T4", "currency": "USD"},  # neither items nor tax_lines
        *[
            document(f"S{n}", [[{**modifier, "option_name": text}], []], [{**tax, "tax_code": text}], note=text)
            for n, text in enumerate(TRICKY)
        ],
    ]


def test_the_text_cut_from_a_document_is_what_orjson_writes_of_the_parsed_values():
    written = [orjson.dumps(record) for record in records()]
    lines = [len(record.get("items") or []) for record in records()]
    tax_lines, modifiers = json_texts(written, lines)
    expected = [expected_texts(record) for record in records()]
    assert tax_lines == [texts[0] for texts in expected]
    assert modifiers == [text for texts in expected for text in texts[1:]]


def test_a_document_with_spaces_or_on_several_lines_is_read_alike():
    compact = [orjson.dumps(record) for record in records()]
    pretty = [orjson.dumps(record, option=orjson.OPT_INDENT_2) for record in records()]
    spaced = [json.dumps(record, ensure_ascii=False).encode() for record in records()]  # ", " and ": "
    lines = [len(record.get("items") or []) for record in records()]
    assert json_texts(pretty, lines) == json_texts(spaced, lines) == json_texts(compact, lines)
    assert b"\n" in pretty[0]
    read = read_documents([page(pretty)])
    assert read.parsed.column("currency").to_pylist() == ["USD"] * len(pretty)
    in_order = sorted(range(len(compact)), key=lambda n: records()[n]["trade_record_id"])
    assert read.tax_lines.to_pylist() == [json_texts(compact, lines)[0][n] for n in in_order]


def page(documents: list[bytes]) -> DocumentsPage:
    ids = [orjson.loads(document)["trade_record_id"] for document in documents]
    count = len(documents)
    return DocumentsPage(ids, [1] * count, [0] * count, ["01"] * count, *([[0] * count] * 5), documents)


def test_pages_in_any_order_are_read_in_trade_record_id_order():
    written = [orjson.dumps(record) for record in records()]
    read = read_documents([page(written[4:]), page(written[:4])])
    order = sorted(record["trade_record_id"] for record in records())
    assert read.records == len(written)
    assert read.narrow.column("trade_record_ids").to_pylist() == order
    by_id = {record["trade_record_id"]: record for record in records()}
    assert read.tax_lines.to_pylist() == [expected_texts(by_id[trade_record_id])[0] for trade_record_id in order]
    assert read.modifiers.to_pylist() == [text for key in order for text in expected_texts(by_id[key])[1:]]
    product_ids = [line["product_id"] for line in read.parsed.column("items").combine_chunks().flatten().to_pylist()]
    assert product_ids == [line["product_id"] for key in order for line in by_id[key].get("items") or []]


def test_a_page_read_on_the_export_threads_gives_each_record_its_texts():
    """Documents as the service writes them (tax_lines the last key), each with an awkward string in a
    modifier and a tax line: each record and each of its lines gets the text json_texts gives it."""
    modifier = {"option_id": "O1", "quantity": "1", "price_delta": "0.50"}
    tax = {"tax_code": "T", "tax_rate": "0.08", "is_inclusive": False}
    written = [
        orjson.dumps(
            {
                "trade_record_id": f"R{n}",
                "currency": "USD",
                "items": [{"line_no": 1, "modifiers": [{**modifier, "option_name": text}]}, {"modifiers": None}],
                "tax_lines": [{**tax, "tax_code": text}] if n % 2 else None,
            }
        )
        for n, text in enumerate([*TRICKY, "plain", "with space"])
    ]
    read = read_documents([page(written)])
    tax_lines, modifiers = json_texts(written, [2] * len(written))
    assert read.tax_lines.to_pylist() == tax_lines
    assert read.modifiers.to_pylist() == modifiers
