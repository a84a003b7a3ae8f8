"""A valid batch read with one parse (decision 0020, ingest/one_parse.py): it builds the same batch as the wire
model when every amount has the exponent's places and at most 15 digits, the body is I-JSON and every
member is known; it confirms nothing else, and what it does not confirm gets the wire model's answer, so a
batch gets the same answer as before: the same 400 for wrong places or range or a repeated name, a 202
for a long amount or with a warning for an unknown member.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from typing import Any

import msgspec
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import from_json

from backends.memory.storage import MemoryStorage
from bench import generate
from core.clock import utc_now
from core.errors import ApiError
from ingest.one_parse import may_hold_control_characters, read_batch, read_slow_way, validated_once
from ingest.parsing import i_json_problem
from ingest.stores import put_stores
from ingest.trade_records import post_trade_records
from ingest.wire.record_structs import WIRE_CLASS_OF
from ingest.wire.requests import TradeRecordsBatch
from ingest.wire.scalars import Code, FreeString50, Text
from tests.payloads import store, stores_batch
from tests.trade_payloads import Line, trade_batch, trade_record

DAY = "2026-11-20"
MODIFIER = {"group_id": "G1", "option_id": "O1", "quantity": "1", "price_delta": "0"}


def batch_body(currency: str = "USD", exponent: int = 2, price_delta: str | None = None) -> dict:
    lines = [Line("P-BURGER", 2, 550, modifiers=[dict(MODIFIER)]), Line("P-COLA", 1, 199)]
    record = trade_record("S1", DAY, lines, currency=currency, exponent=exponent, tax=130, tip=100)
    record["items"][0]["modifiers"][0]["price_delta"] = price_delta or ("0" if exponent == 0 else "0." + "0" * exponent)
    return trade_batch("S1", DAY, [record])


def once(body: bytes, exponent: int = 2) -> TradeRecordsBatch | None:
    read = read_batch(TradeRecordsBatch, body)
    return None if read is None else validated_once(TradeRecordsBatch, body, read, exponent)


def values_of(value: Any) -> Any:
    """A value as plain, comparable parts: a model, dataclass or Struct by its field names (the fast path's
    records are Structs where pydantic's are dataclasses), a datetime with its offset and ISO text."""
    if isinstance(value, BaseModel):
        return {name: values_of(getattr(value, name)) for name in type(value).model_fields}
    if dataclasses.is_dataclass(value) or isinstance(value, msgspec.Struct):
        names = [field.name for field in dataclasses.fields(WIRE_CLASS_OF.get(type(value), type(value)))]
        return {name: values_of(getattr(value, name)) for name in names}
    if isinstance(value, list):
        return [values_of(element) for element in value]
    if isinstance(value, dt.datetime):
        return (value, value.utcoffset(), value.isoformat())
    return (type(value), value)


def assert_same_batch(body: bytes, exponent: int) -> None:
    fast = once(body, exponent)
    wire = TradeRecordsBatch.model_validate_json(body)
    assert fast is not None and values_of(fast) == values_of(wire) and fast.model_fields_set == wire.model_fields_set


@pytest.mark.parametrize(("currency", "exponent"), [("USD", 2), ("JPY", 0), ("KWD", 3), ("CLF", 4)])
def test_a_batch_with_the_exponents_places_is_the_wire_models_batch(currency, exponent):
    body = orjson.dumps(batch_body(currency, exponent))
    assert_same_batch(body, exponent)
    assert once(body, exponent + 1) is None


def test_the_benchmarks_batch_is_the_wire_models_batch():
    # 500 records with modifiers, payments, tax lines, optional members present and absent, time zones;
    # no control character, so validated without the control-character patterns
    body = generate.batch_bodies(1, 500, seed=3, tag="T")[0]
    assert not may_hold_control_characters(body)
    assert_same_batch(body, 2)


def test_either_reader_hands_on_the_same_structs():
    # one decoded type downstream (decision 0020): the slow way's records are copied into the fast path's
    # Structs (with or without the control-character patterns), nested parts included, with the same values
    # and so the same stored documents
    body = orjson.dumps(batch_body())
    fast, (slow, unknown) = once(body), read_slow_way(TradeRecordsBatch, body)
    assert fast is not None and not unknown
    for mine, theirs in [
        (fast.trade_records[0], slow.trade_records[0]),
        (fast.trade_records[0].items[0].modifiers[0], slow.trade_records[0].items[0].modifiers[0]),
    ]:
        assert isinstance(theirs, msgspec.Struct) and WIRE_CLASS_OF[type(theirs)] is WIRE_CLASS_OF[type(mine)]
    assert values_of(slow) == values_of(fast) and slow.model_fields_set == fast.model_fields_set


def test_pretty_printed_and_with_timestamps_as_dotnet_and_java_write_them():
    body = batch_body()
    record = body["trade_records"][0]
    record["opened_at"] = "2026-11-20T12:00:00.1234567+09:00"  # .NET "o"
    record["closed_at"] = "2026-11-20T12:05:00.123-05:00"  # Java OffsetDateTime
    record["last_modified_at"] = "2026-11-20t12:05:00z"
    assert_same_batch(json.dumps(body, indent=2, ensure_ascii=True).encode(), 2)
    assert_same_batch(json.dumps(body, indent="\t", separators=(" , ", " : ")).encode(), 2)


@pytest.mark.parametrize("amount", ["12.5", "12.500", "12", "-0.1", "12345678901234.00"])
def test_other_places_or_more_than_15_digits_are_left_to_the_wire_model(amount):
    body = orjson.dumps(batch_body(price_delta=amount))
    TradeRecordsBatch.model_validate_json(body)  # a valid Money for the wire model
    assert once(body) is None


def with_text(old: str, new: str, body: dict | None = None) -> bytes:
    """The body of batch_body (or body) as orjson writes it, with the text old written as new."""
    text = orjson.dumps(body or batch_body()).decode()
    assert old in text
    return text.replace(old, new, 1).encode()


# A name written twice in an object, at every level, with colons in its values, in either order of the values,
# with the first a null or an object; the counts of colons would otherwise agree.
@pytest.mark.parametrize(
    "body",
    [
        with_text('"batch_seq":1', '"batch_seq":1,"batch_seq":1'),
        with_text('"store_id":"S1"', '"store_id":"S1","store_id":"S1"'),
        with_text('"order_source":"POS"', '"order_source":"P:O:S","order_source":"POS"'),
        with_text('"order_source":"POS"', '"order_source":null,"order_source":"POS"'),
        with_text('"order_source":"POS"', '"member_id":"a:b","order_source":"POS","member_id":"c"'),
        with_text('"parent_line_no":null', '"parent_line_no":null,"parent_line_no":null'),
        with_text('"group_id":"G1"', '"group_id":"G:1","group_id":"G1"'),
        with_text(
            '"paid_at":"2026-11-20T12:00:00-05:00"',
            '"paid_at":"2026-11-20T12:00Z","paid_at":"2026-11-20T12:00:00-05:00"',
        ),
        with_text('"is_voided":false}]', '"is_voided":false,"modifiers":[]}]'),
        with_text(
            '"modifiers":[]',
            '"modifiers":[{"group_id":"G","option_id":"O","quantity":"1","price_delta":"0.00"}],"modifiers":[]',
        ),
        with_text('"version":1', '"version":1,\n  "version" :\t1'),
        with_text('"version":1', '"vers\\u0069on":2,"version":1'),  # the first written with an escape
        with_text('"order_source":"POS"', '"order_source":"POS","tax_lines":[],"tax_lines":[]'),
    ],
)
def test_a_repeated_name_is_never_confirmed(body):
    assert read_batch(TradeRecordsBatch, body) is not None  # msgspec reads it, keeping the last
    assert once(body) is None
    assert i_json_problem(body) is not None  # the slow way refuses it


@pytest.mark.parametrize(
    "body",
    [
        with_text('"order_source":"POS"', '"order_source":"P:O:S","member_id":null,"tax_lines":[]'),
        with_text('"P-BURGER","product_type"', '"東京:渋谷 متجر:١","product_type"'),
        with_text('"order_source":"POS"', '"order_source":"x\\u003ay\\u003A"'),  # colons written as escapes
        with_text('"paid_at":"2026-11-20T12:00:00-05:00"', '"paid_at":"2026-11-20T12:00Z"'),  # Java: one colon
        with_text('"paid_at":"2026-11-20T12:00:00-05:00"', '"paid_at":"2026-11-20T12:00:00.1234567+0900"'),
        with_text('"parent_line_no":null,', ""),  # left out, not null
        orjson.dumps(batch_body(), option=orjson.OPT_INDENT_2),
    ],
)
def test_a_body_without_repeated_names_is_confirmed(body):
    assert once(body) is not None


def test_text_that_only_looks_like_an_escaped_colon_is_left_to_the_slow_way():
    body = with_text('"order_source":"POS"', '"order_source":"\\\\u003a"')  # a backslash, then the letters u003a
    read = read_batch(TradeRecordsBatch, body)
    assert read is not None and read.struct.trade_records[0].order_source == "\\u003a"
    assert once(body) is None


# Each written in a value or a member of a valid batch.
@pytest.mark.parametrize(
    "body",
    [
        with_text('"POS"', '"P\nOS"'),
        with_text('"POS"', '"P\tOS"'),
        with_text('"POS"', '"P\\uDC00"'),
        with_text('"POS"', '"P\\ud800x"'),
        with_text('"batch_seq":1', '"batch_seq":01'),
        with_text('"batch_seq":1', '"batch_seq":1e999'),
        with_text('"batch_seq":1', '"batch_seq":NaN'),
        with_text('"modifiers":[]', '"modifiers":[],'),
        b"\xef\xbb\xbf" + orjson.dumps(batch_body()),
        orjson.dumps(batch_body()) + b"x",
        with_text('"POS"', '"POS"').replace(b"POS", b"\xc0\xaf"),
        with_text('"POS"', '"POS"').replace(b"POS", b"\xed\xa0\x80"),
    ],
)
def test_what_msgspec_refuses_the_models_parser_or_the_i_json_check_refuses(body):
    assert read_batch(TradeRecordsBatch, body) is None
    try:
        from_json(body)  # the parser of model_validate_json
    except ValueError:
        return
    assert i_json_problem(body) is not None


def test_a_body_that_is_not_a_batch_is_not_read():
    for body in (b"[1]", b'"x"', b"{}", b'{"batch_id": "x"}'):
        assert read_batch(TradeRecordsBatch, body) is None


def test_a_member_no_model_knows_is_left_to_the_slow_way():
    body = batch_body()
    body["trade_records"][0]["items"][0]["tip_amout"] = "1.00"
    assert once(orjson.dumps(body)) is None


# --- control characters: the patterns that refuse only them are skipped for a body that holds none -------

# Each character the code and text patterns refuse, written every way JSON allows (a C0 control only as an
# escape: raw, it is not JSON).
_CONTROL_WRITINGS = [
    *(f"\\u{code:04x}" for code in (0x00, 0x1F, 0x7F, 0x80, 0x9F, 0x2028, 0x2029)),
    *(f"\\u{code:04X}" for code in (0x0A, 0x1F, 0x7F, 0x85, 0x9F, 0x2028)),
    *(f"\\{letter}" for letter in "bfnrt"),
    *("\x7f", "\x80", "\x85", "\x9f", "\u2028", "\u2029"),
]


@pytest.mark.parametrize("written", _CONTROL_WRITINGS)
def test_a_control_character_however_written_gets_every_pattern(written):
    body = batch_body()
    body["trade_records"][0]["items"][0]["product_id"] = "P-1"
    encoded = orjson.dumps(body).replace(b'"P-1"', f'"P{written}1"'.encode())
    assert isinstance(orjson.loads(encoded).get("trade_records"), list)  # still JSON
    assert may_hold_control_characters(encoded)
    assert once(encoded) is None
    with pytest.raises(ValidationError):
        TradeRecordsBatch.model_validate_json(encoded)


@pytest.mark.parametrize(
    "body",
    [
        b'{"a": "say \\"hi\\" \\/ \\\\ \\u00e9 \\u00a0 \\u20ac \\ud83d\\ude00"}',  # escapes of other characters
        '{"a": "caf\u00e9 \u00a0\u00b0 \u2019 \u20ac \u6771\u4eac"}'.encode(),  # C2 and E2 80 bytes, not controls
        b'{\n\t"a": "x"\r\n}',  # whitespace between tokens is not in a string
    ],
)
def test_other_escapes_and_characters_are_not_control_characters(body):
    assert orjson.loads(body) and not may_hold_control_characters(body)


_CHARACTERS = st.characters(blacklist_categories=("Cs",))  # lone surrogates are not UTF-8


@settings(max_examples=500, deadline=None)
@given(text=st.text(_CHARACTERS, min_size=1, max_size=12), dumps=st.sampled_from(["orjson", "ascii", "utf-8"]))
def test_a_body_said_to_hold_no_control_character_meets_every_pattern(text, dumps):
    """What the validator of such a body relies on: each string of it meets the patterns it skips."""
    value = {"a": text}
    if dumps == "orjson":
        body = orjson.dumps(value)
    else:
        body = json.dumps(value, ensure_ascii=dumps == "ascii").encode()
    if may_hold_control_characters(body):
        return
    for kind in (Code, Text, FreeString50):
        TypeAdapter(kind).validate_python(text[:50])


# --- timestamps and dates: plain strings parsed as JSON's strict mode parses them --------------------------

_TEXT = st.text(alphabet="0123456789-:.TtZz+ W", max_size=32)
_FORMS = st.sampled_from(
    [
        "2026-11-24T10:15:00Z",
        "2026-11-24T10:15Z",
        "2026-11-24 10:15:00+05:30",
        "2026-11-24T10:15:00+0530",
        "2026-11-24T10:15:00",
        "2026-11-24",
        "2026-11-24T00:00:00Z",
        "2026-11-24T00:00:00+00:00",
        "1732406400",
        "1732400000",
        "0",
        "20261124",
        "2026-W48-2",
        "2026-11-24T24:00:00Z",
    ]
)


def _read(validate, value):
    try:
        return ("ok", validate(value))
    except ValidationError:
        return ("refused", None)


@settings(max_examples=400, deadline=None)
@given(text=st.one_of(_TEXT, _FORMS), field=st.sampled_from(["opened_at", "business_date"]))
def test_a_timestamp_or_date_is_confirmed_only_as_the_wire_model_reads_it(text, field):
    body = batch_body()
    body["trade_records"][0][field] = text
    if field == "business_date":
        body["business_date"] = text
    encoded = orjson.dumps(body)
    fast = once(encoded)
    try:
        wire = TradeRecordsBatch.model_validate_json(encoded)
    except ValidationError:
        assert fast is None
        return
    if fast is not None:
        assert values_of(fast) == values_of(wire)


def test_a_number_for_a_timestamp_or_a_date_is_refused_as_the_wire_model_refuses_it():
    for field, value in [("opened_at", 1732400000), ("business_date", 0), ("opened_at", dt.date.today().year)]:
        body = batch_body()
        body["trade_records"][0][field] = value
        encoded = orjson.dumps(body)
        assert once(encoded) is None
        with pytest.raises(ValidationError):
            TradeRecordsBatch.model_validate_json(encoded)


# --- through the use case ----------------------------------------------------------------------------


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


def post(storage: MemoryStorage, body: dict | bytes):
    encoded = body if isinstance(body, bytes) else orjson.dumps(body)
    return post_trade_records(storage, None, storage.get_partner("p1"), encoded, 0)  # type: ignore[arg-type]


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


def test_a_repeated_name_in_a_record_is_refused(storage):
    text = orjson.dumps(batch_body()).decode()
    repeated = text.replace('"currency":"USD"', '"currency":"USD","currency":"USD"', 1)
    assert repeated != text
    with pytest.raises(ApiError) as refused:
        post(storage, repeated.encode())
    assert [(problem.path, problem.message) for problem in refused.value.errors] == [
        ("$", "an object has the same member name twice; send each name once")
    ]


def test_an_unknown_member_is_still_accepted_with_its_warning(storage):
    body = batch_body()
    body["trade_records"][0]["items"][0]["tip_amout"] = "1.00"
    outcome = post(storage, body)
    assert outcome.http_status == 202
    assert [(w.code, w.path, w.field) for w in outcome.warnings if w.code != "SOURCE_TYPE_UNMAPPED"] == [
        ("UNKNOWN_MEMBER_IGNORED", "trade_records[0]", "items[0].tip_amout")
    ]
