"""The quick search of data protection (ingest/data_protection.py): the free text it searches for a card
number candidate (`free_texts` of a record and `may_hold_card_numbers` of a batch, no paths) is exactly
the text the walk with paths reads (`text_fields`), in another order, so the search never lets through a
record that the precise check, run on every free-text field, would refuse: card numbers in any field,
written in any form data protection recognises."""

from __future__ import annotations

import orjson
import pytest
from pydantic import TypeAdapter

from bench import generate
from ingest.card_numbers import contains_card_number
from ingest.data_protection import (
    card_number_problems,
    free_texts,
    free_texts_of_models,
    may_hold_card_numbers,
    text_fields,
)
from ingest.one_parse import _free_text_slots, read_batch, validated_once
from ingest.wire.record_structs import BULK_CHECKS
from ingest.wire.requests import Product, TradeRecord, TradeRecordsBatch, record_part
from ingest.wire.scalars import Code, FreeString50, LocalizedText, Text
from tests.trade_payloads import Line, trade_record

PATH = "trade_records[3]"
VISA, AMEX = "4111111111111111", "378282246310005"  # the networks' published test numbers (Luhn-valid)


def other_digits(number: str, zero: str) -> str:
    return "".join(chr(ord(zero) + int(digit)) for digit in number)


WRITTEN_FORMS = {
    "plain": VISA,
    "in words": f"paid with {AMEX} thanks",
    "spaces": " ".join(VISA[i : i + 4] for i in range(0, 16, 4)),
    "dashes": "-".join(VISA[i : i + 4] for i in range(0, 16, 4)),
    "amex groups": f"{AMEX[:4]} {AMEX[4:10]} {AMEX[10:]}",
    "after other digits": f"ref 12 {VISA[:4]} {VISA[4:8]} {VISA[8:12]} {VISA[12:]}",
    "full-width digits": other_digits(VISA, "\uff10"),
    "Arabic-Indic digits": other_digits(VISA, "\u0660"),
    "Devanagari digits": other_digits(VISA, "\u0966"),
    # not card numbers as data protection reads them: both paths must still agree
    "dots": ".".join(VISA[i : i + 4] for i in range(0, 16, 4)),
    "double spaces": "  ".join(VISA[i : i + 4] for i in range(0, 16, 4)),
    "12 digits": VISA[:12],
}
FREE_TEXT_FIELDS = [
    "order_source",
    "order_source_detail",
    "member_id",
    "items.0.product_name",
    "items.0.modifiers.0.option_name",
    "payments.0.payment_type",
    "payments.0.payment_method_detail",
]


def record_with(dotted: str, value: str) -> TradeRecord:
    return TypeAdapter(TradeRecord).validate_json(orjson.dumps(record_body_with(dotted, value)))


def record_body_with(dotted: str, value: str) -> dict:
    modifier = {"group_id": "G1", "option_id": "O1", "option_name": "Cheddar", "quantity": "1", "price_delta": "0.00"}
    body = trade_record("S1", "2026-11-20", [Line("P-1", 1, 550, modifiers=[modifier]), Line("P-2", 2, 100)])
    target = body
    *parents, last = dotted.split(".")
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    target[last] = value
    return body


# Shapes a model may declare: text in dicts (LocalizedText), lists of text, a model in a single field, lists
# of lists (module level: the walk reads their type hints).
@record_part
class Note:
    text: Text
    code: Code


@record_part
class Holder:
    label: FreeString50 | None = None
    notes: list[Note]
    main: Note | None = None
    names: LocalizedText | None = None
    lines: list[list[Text]]
    codes: list[Code]


@pytest.mark.parametrize("form", WRITTEN_FORMS)
@pytest.mark.parametrize("field", FREE_TEXT_FIELDS)
def test_the_quick_search_lets_through_no_record_the_precise_check_refuses(field, form):
    record = record_with(field, WRITTEN_FORMS[form])
    precise = [path for path, text in text_fields(record, PATH) if contains_card_number(text)]
    assert [problem.path for problem in card_number_problems(PATH, record)] == precise
    assert bool(precise) == (form not in ("dots", "double spaces", "12 digits"))


def test_free_texts_are_the_texts_of_the_walk_with_paths():
    batch = TradeRecordsBatch.model_validate_json(generate.batch_bodies(1, 60, seed=11, tag="W")[0])
    records = [*batch.trade_records, record_with("member_id", "M-1"), record_with("order_source", VISA)]
    for record in records:
        assert sorted(free_texts(record)) == sorted(text for _, text in text_fields(record, PATH))
    # the whole batch at once: the texts of all its records
    walked = [text for record in records for _, text in text_fields(record, PATH)]
    assert sorted(free_texts_of_models(TradeRecord, records)) == sorted(walked)


@pytest.mark.parametrize("form", WRITTEN_FORMS)
@pytest.mark.parametrize("field", FREE_TEXT_FIELDS)
def test_the_quick_search_of_a_batch_finds_every_record_the_precise_check_refuses(field, form):
    batch = TradeRecordsBatch.model_validate_json(generate.batch_bodies(1, 20, seed=5, tag="C")[0])
    records = [*batch.trade_records, record_with(field, WRITTEN_FORMS[form]), *batch.trade_records]
    precise = [path for record in records for path, text in text_fields(record, PATH) if contains_card_number(text)]
    assert bool(precise) == (form not in ("dots", "double spaces", "12 digits"))
    # the forms that are not card numbers hold no candidate either: the batch's search tells both apart
    assert may_hold_card_numbers(records) == bool(precise)
    assert not may_hold_card_numbers(batch.trade_records)


@pytest.mark.parametrize("form", WRITTEN_FORMS)
@pytest.mark.parametrize("field", FREE_TEXT_FIELDS)
def test_the_bulk_checks_of_the_one_parse_answer_as_the_quick_search_of_the_batch(field, form):
    # they slice the same free texts out of the texts they read (decision 0120)
    document = orjson.loads(generate.batch_bodies(1, 20, seed=5, tag="C")[0])
    document["trade_records"].insert(7, record_body_with(field, WRITTEN_FORMS[form]))
    body = orjson.dumps(document)
    read = read_batch(TradeRecordsBatch, body)
    assert read is not None
    batch = validated_once(TradeRecordsBatch, body, read, 2)
    assert batch is not None
    assert read.card_number_candidates is may_hold_card_numbers(batch.trade_records)
    assert read.card_number_candidates is (form not in ("dots", "double spaces", "12 digits"))


def test_the_bulk_checks_read_the_free_texts_of_the_walk():
    body = generate.batch_bodies(1, 60, seed=11, tag="W")[0]
    read = read_batch(TradeRecordsBatch, body)
    assert read is not None and validated_once(TradeRecordsBatch, body, read, 2) is not None
    assert read.card_number_candidates is False
    records, sliced = read.struct.trade_records, []
    level = [(type(records[0]), records)]
    while level:  # the classes below the batch, as bulk_checks visits them
        struct, objects = level.pop()
        checks = BULK_CHECKS[struct]
        texts = [getattr(item, name) for item in objects for name in checks.texts]
        sliced += [text for slot in _free_text_slots(struct) for text in texts[slot :: len(checks.texts)]]
        for name, held, is_list in checks.held:
            values = [getattr(item, name) for item in objects if getattr(item, name) is not None]
            level.append((held, [element for value in values for element in value] if is_list else values))
    assert sorted(filter(None, sliced)) == sorted(free_texts_of_models(TradeRecord, records))


def test_free_texts_walk_every_shape_a_model_may_declare():
    holder = TypeAdapter(Holder).validate_json(
        orjson.dumps(
            {
                "label": "L",
                "notes": [{"text": "a", "code": "C1"}, {"text": "b", "code": "C2"}],
                "main": {"text": "m", "code": "C3"},
                "names": {"en-US": "Name", "ja-JP": "名前"},
                "lines": [["x", "y"], [], ["z"]],
                "codes": ["C4"],
            }
        )
    )
    walked = text_fields(holder, "h")
    assert [path for path, _ in walked] == [
        "h.label",
        "h.notes[0].text",
        "h.notes[1].text",
        "h.main.text",
        "h.names.en-US",
        "h.names.ja-JP",
        "h.lines[0][0]",
        "h.lines[0][1]",
        "h.lines[2][0]",
    ]
    assert sorted(free_texts(holder)) == sorted(text for _, text in walked)
    product = Product.model_validate_json(
        orjson.dumps(
            {
                "product_id": "P1",
                "name": {"en-US": "Burger", "fr-FR": "Hamburger"},
                "category_name": {"en-US": "Mains"},
                "unit_price": "5.50",
                "currency": "USD",
                "status": "ACTIVE",
                "version": 1,
                "last_modified_at": "2026-11-20T12:00:00Z",
                "product_type": "SINGLE",
            }
        )
    )
    assert free_texts(product) == [text for _, text in text_fields(product, "p")] == ["Burger", "Hamburger", "Mains"]
