"""The msgspec Structs of the fast path (ingest/wire/record_structs.py, ingest/one_parse.py): they mirror the
wire dataclasses field for field, and a batch the fast path confirms holds the values pydantic reads, or the
fast path confirms nothing (None: the slow way answers). Each divergence of msgspec from pydantic has its
test here: the bodies are sent to both, and the fast path must refuse or agree.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import subprocess
import sys
import typing
from pathlib import Path
from typing import Annotated, Any

import msgspec
import orjson
import pytest
from pydantic import Field, ValidationError
from pydantic.dataclasses import dataclass

from core.money import RECORD_AMOUNTS
from ingest.data_protection import free_texts, text_fields
from ingest.one_parse import read_batch, validated_once
from ingest.trade_records import document_json
from ingest.wire.record_structs import BULK_CHECKS, WIRE_CLASS_OF, decode, struct_of
from ingest.wire.requests import Payment, TaxLine, TradeItem, TradeModifier, TradeRecord, TradeRecordsBatch
from ingest.wire.scalars import Code, WireModel
from tests.unit.test_one_parse import batch_body, values_of

WIRE_CLASSES = [TradeModifier, TradeItem, Payment, TaxLine, TradeRecord]


def fast_and_wire(body: bytes, exponent: int = 2) -> tuple[Any, Any]:
    """The fast path's batch (or None) and pydantic's (or None when it refuses the body)."""
    read = read_batch(TradeRecordsBatch, body)
    fast = None if read is None else validated_once(TradeRecordsBatch, body, read, exponent)
    try:
        wire = TradeRecordsBatch.model_validate_json(body)
    except ValidationError:
        wire = None
    return fast, wire


def assert_agrees(body: bytes, exponent: int = 2) -> Any:
    """The fast path refuses, or confirms exactly pydantic's batch (values, offsets, stored documents)."""
    fast, wire = fast_and_wire(body, exponent)
    if fast is None:
        return None
    assert wire is not None, "the fast path confirmed what pydantic refuses"
    assert values_of(fast) == values_of(wire)
    assert fast.model_fields_set == wire.model_fields_set
    # one encoder writes the Structs of either reader (decision 0020): what it writes is pydantic's bytes
    assert [r.__pydantic_serializer__.to_json(r).decode() for r in wire.trade_records] == [
        document_json(r) for r in fast.trade_records
    ]
    return fast


def with_change(change, *, control: bool = False) -> bytes:
    """A valid batch (USD) with one change made to its plain values."""
    body = batch_body()
    change(body, body["trade_records"][0])
    return orjson.dumps(body)


def record_with(**members) -> bytes:
    return with_change(lambda _, record: record.update(members))


def item_with(**members) -> bytes:
    return with_change(lambda _, record: record["items"][0].update(members))


def payment_with(**members) -> bytes:
    return with_change(lambda _, record: record["payments"][0].update(members))


# --- the mirror ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("control", [True, False])
@pytest.mark.parametrize("wire", WIRE_CLASSES)
def test_a_struct_has_its_dataclasss_fields_in_order_with_their_defaults(wire, control):
    struct = struct_of(wire, control)
    assert WIRE_CLASS_OF[struct] is wire and struct.__name__ == wire.__name__
    fields = msgspec.structs.fields(struct)
    assert [field.name for field in fields] == [field.name for field in dataclasses.fields(wire)]
    for field, wire_field in zip(fields, dataclasses.fields(wire), strict=True):
        if wire_field.default_factory is not dataclasses.MISSING:
            assert field.default_factory() == wire_field.default_factory()  # through a factory that counts it
        elif wire_field.default is dataclasses.MISSING:
            assert field.required
        else:
            assert field.default_factory() == wire_field.default


# batch_body's JSON with a text written otherwise: (text, written, how many more fields it leaves out).
_LEFT_OUT = {
    "nothing": ('"order_source"', '"order_source"', 0),
    "an optional code": ('"order_source":"POS",', "", 1),
    "a null sent, then left out": ('"parent_line_no":null,', "", 1),
    "a payment's optional tip": ('"tip_amount":"1.00","paid_at"', '"paid_at"', 1),
    "tax lines, empty": ('"order_source":"POS",', '"tax_lines":[],"order_source":"POS",', -1),
}


@pytest.mark.parametrize("name", _LEFT_OUT)
def test_decode_counts_the_fields_a_body_leaves_out(name):
    text, written, more = _LEFT_OUT[name]
    body = orjson.dumps(batch_body())
    assert text.encode() in body
    before, after = (
        decode(TradeRecordsBatch, body),
        decode(TradeRecordsBatch, body.replace(text.encode(), written.encode(), 1)),
    )
    assert before is not None and after is not None
    assert after[1] == before[1] + more


def test_decode_refuses_what_msgspec_refuses_and_counts_afresh():
    assert decode(TradeRecordsBatch, b"{") is None
    assert decode(TradeRecordsBatch, b'{"batch_id": 1}') is None
    body = orjson.dumps(batch_body())
    first, again = decode(TradeRecordsBatch, body), decode(TradeRecordsBatch, body)
    assert first is not None and again is not None and first[1] == again[1]


def _meta(kind: Any) -> dict:
    """The msgspec.Meta constraints of a Struct field's type (optional or not)."""
    if typing.get_origin(kind) is not Annotated and type(None) in typing.get_args(kind):
        kind = next(k for k in typing.get_args(kind) if k is not type(None))
    if typing.get_origin(kind) is not Annotated:
        return {}
    meta = kind.__metadata__[0]
    return {
        key: getattr(meta, key) for key in ("min_length", "max_length", "pattern", "ge", "le") if getattr(meta, key)
    }


def test_the_constraints_are_the_wires_with_patterns_ending_at_the_end_of_the_text():
    fields = {field.name: field.type for field in msgspec.structs.fields(struct_of(TradeRecord, True))}
    code = next(meta for meta in Code.__metadata__ if hasattr(meta, "pattern"))
    assert _meta(fields["trade_record_id"]) == {
        "min_length": 1,
        "max_length": 200,
        "pattern": code.pattern[:-1] + r"\Z",  # Python's "$" also matches before a final newline
    }
    assert _meta(fields["version"]) == {"ge": 1, "le": 2**53 - 1}
    assert _meta(fields["items"]) == {"min_length": 1}
    assert _meta(fields["member_id"])["max_length"] == 50
    # without control characters, only the lengths (the patterns refuse nothing else)
    lean = {field.name: field.type for field in msgspec.structs.fields(struct_of(TradeRecord, False))}
    assert _meta(lean["trade_record_id"]) == {"min_length": 1, "max_length": 200}
    assert "pattern" in _meta(lean["store_id"])  # store_id's also refuses "/" "\\" "?" "#"
    batch = {field.name: field.type for field in msgspec.structs.fields(struct_of(TradeRecordsBatch, False))}
    assert _meta(batch["trade_records"]) == {"min_length": 1, "max_length": 500}
    assert _meta(batch["batch_seq"]) == {"ge": 1, "le": 100_000}


def test_what_the_structs_leave_to_the_bulk_checks():
    checks = BULK_CHECKS[struct_of(TradeRecord, False)]
    assert checks.money == list(RECORD_AMOUNTS)  # a record's Money fields, in their order
    assert checks.timestamps == ["opened_at", "closed_at", "last_modified_at"]
    assert [name for name, _ in checks.validated] == ["currency"]
    assert [(name, WIRE_CLASS_OF[held], is_list) for name, held, is_list in checks.held] == [
        ("items", TradeItem, True),
        ("payments", Payment, True),
        ("tax_lines", TaxLine, True),
    ]
    assert BULK_CHECKS[struct_of(TradeItem, False)].decimals == ["quantity"]
    assert [name for name, _ in BULK_CHECKS[struct_of(TradeRecordsBatch, False)].validated] == ["batch_id"]


def test_what_the_generator_does_not_know_raises_when_it_is_built():
    @dataclass(config=WireModel.model_config, kw_only=True)
    class Floats:
        price: float

    @dataclass(config=WireModel.model_config, kw_only=True)
    class Stripped:
        name: Annotated[str, Field(strict=False)]

    @dataclass(config=WireModel.model_config, kw_only=True)
    class Sets:
        codes: set[str]

    for wire in (Floats, Stripped, Sets):
        with pytest.raises(TypeError):
            struct_of(wire)


# --- each divergence: the fast path refuses or agrees ---------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        record_with(version=2.0),
        record_with(version=True),
        record_with(version="2"),
        record_with(version=0),
        record_with(version=2**53),
        record_with(guest_count=-1),
        record_with(guest_count=1.5),
        record_with(prices_include_tax=1),
        record_with(prices_include_tax="true"),
        record_with(trade_record_id=5),
        record_with(trade_record_id=None),
        record_with(trade_record_id=""),
        record_with(order_type="dine_in"),
        record_with(order_type="TAKEAWAY"),
        record_with(status=None),
        record_with(items=[]),
        record_with(payments=None),
        record_with(currency="usd"),
        record_with(currency="XXX"),
        record_with(currency=None),
        item_with(tax_category="NOT-A-CATEGORY"),
        item_with(line_no=0),
        item_with(quantity="1.123456789"),
        item_with(quantity="1\n2"),
        item_with(quantity="1e2"),
        item_with(unit_price="5.50\n1.00"),
        item_with(unit_price=" 5.50"),
        item_with(unit_price="+5.50"),
        item_with(unit_price=5.5),
        payment_with(card_last4="1234\n"),
        payment_with(card_last4="123"),
        payment_with(payment_id="PAY\n"),
        payment_with(payment_type="x" * 51),
        with_change(lambda body, _: body.update(batch_id="not-a-uuid")),
        with_change(lambda body, _: body.update(batch_seq=100_001)),
        with_change(lambda body, _: body.update(business_date="2026-11-20T00:00:00Z")),
        with_change(lambda body, _: body.update(business_date="20261120")),
        with_change(lambda body, record: body.update(trade_records=[record] * 501)),
        with_change(lambda body, _: body.update(trade_records=[])),
    ],
)
def test_a_value_pydantic_refuses_is_not_confirmed(body):
    fast, wire = fast_and_wire(body)
    assert fast is None and wire is None


@pytest.mark.parametrize(
    "body",
    [
        record_with(trade_record_id="😀" * 200, member_id="ก" * 50, order_source="मुंबई"),
        record_with(fiscal_document_no="FV/2024/01/001", employee_id="#4411", source_transaction_type="01"),
        record_with(order_source="Tab\there", order_source_detail="two\nlines"),  # free text may hold them
        record_with(closed_at=None, guest_count=None, member_id=None),
        with_change(lambda _, record: [record.pop(name) for name in ("closed_at", "order_source")]),
        with_change(lambda body, _: body.update(batch_id="{" + body["batch_id"].upper() + "}")),
        item_with(product_name="زيت الزيتون", quantity="0.12345678", unit_price="-0.00"),
        with_change(lambda body, record: body.update(trade_records=[record] * 500)),
    ],
)
def test_a_valid_batch_is_confirmed_with_pydantics_values(body):
    assert assert_agrees(body) is not None


@pytest.mark.parametrize(
    "body",
    [
        record_with(trade_record_id="😀" * 201),
        record_with(member_id="ก" * 51),
        record_with(trade_record_id="T\u2028"),
        record_with(trade_record_id="T\x7f"),
        record_with(trade_record_id="T\x85"),
        record_with(order_source="esc\x1b"),
        record_with(store_id="S/1"),
    ],
)
def test_lengths_in_code_points_and_control_characters_are_refused_as_pydantic_refuses_them(body):
    fast, wire = fast_and_wire(body)
    assert fast is None and wire is None


def test_an_unknown_member_at_any_level_is_not_confirmed():
    for body in (
        record_with(extra=1),
        item_with(extra=1),
        payment_with(extra=None),
        with_change(lambda body, _: body.update(extra="x")),
        with_change(lambda _, record: record["items"][0]["modifiers"][0].update(extra=1)),
    ):
        fast, wire = fast_and_wire(body)
        assert fast is None and wire is not None  # pydantic ignores it: the slow way warns


# .NET writes 7 digits, Java and JavaScript milliseconds, Python microseconds and "+00:00", PHP "+0900".
PARTNER_TIMESTAMPS = [
    "2026-11-20T12:00:00.1234567+09:00",
    "2026-11-20T12:00:00.9999999Z",
    "2026-11-20T12:00:00.9999995Z",
    "2026-11-20T12:00:00.123Z",
    "2026-11-20T12:00:00.123+05:30",
    "2026-11-20T12:00:00.123456+00:00",
    "2026-11-20T12:00:00+0900",
    "2026-11-20T12:00Z",  # Java's OffsetDateTime at a whole minute
    "2026-11-20T12:00+05:30",
    "2026-11-20T12:00:00-00:00",
    "2026-11-20T12:00:00+14:00",
    "2026-11-20 12:00:00Z",
    "2026-11-20t12:00:00z",
    "2026-11-20T12:00:00.123456789-03:30",
    "0002-01-01T00:00:00Z",
    "0002-01-01T01:00:00+01:00",
    "9998-12-31T23:59:59.999999Z",
    "9998-12-31T22:59:59-01:00",
]


@pytest.mark.parametrize("text", PARTNER_TIMESTAMPS)
def test_a_timestamp_as_partners_write_it_is_confirmed_with_pydantics_value(text):
    fast = assert_agrees(record_with(opened_at=text, closed_at=text, last_modified_at=text))
    assert fast is not None
    assert isinstance(fast.trade_records[0].opened_at, dt.datetime)
    assert assert_agrees(payment_with(paid_at=text)) is not None


@pytest.mark.parametrize(
    "text",
    [
        "0001-12-31T23:59:59Z",
        "0002-01-01T00:59:59+01:00",  # before the bound in UTC
        "9999-01-01T00:00:00Z",
        "9998-12-31T23:00:00-01:00",  # at the bound in UTC
        "2026-02-29T00:00:00Z",
        "2026-11-20T24:00:00Z",
        "2026-11-20T23:59:60Z",
        "2026-11-20T12:00:00",
        "2026-11-20T12:00:00+24:00",
        "2026-11-20T12:00.5Z",
        "2026-11-20T12:00:00,5Z",
        "1700000000",
        "2026-11-20T12:00:00.Z",
        "2026-11-20T12:00:00.1234567890Z",
        "2026-11-20T12:00:00Z\n",
    ],
)
def test_a_timestamp_beyond_the_bounds_or_in_another_form_is_not_confirmed(text):
    # pydantic refuses some and reads others ("12:00Z", a comma, unix time): the slow way answers those
    for body in (record_with(opened_at=text), payment_with(paid_at=text), record_with(closed_at=text)):
        fast, _ = fast_and_wire(body)
        assert fast is None


def test_a_refused_timestamp_leaves_no_half_read_batch():
    # the second record's timestamp is refused after the first's were read: nothing is returned
    def change(body, record):
        second = dict(record, opened_at="2026-02-30T00:00:00Z")
        body["trade_records"] = [record, second]

    assert fast_and_wire(with_change(change))[0] is None


@pytest.mark.parametrize(("currency", "exponent"), [("JPY", 0), ("USD", 2), ("KWD", 3), ("CLF", 4)])
def test_amounts_are_confirmed_at_exactly_the_exponents_places(currency, exponent):
    body = orjson.dumps(batch_body(currency, exponent))
    assert assert_agrees(body, exponent) is not None
    assert fast_and_wire(body, exponent + 1)[0] is None
    longer = orjson.dumps(batch_body(currency, exponent, price_delta="1." + "0" * (exponent + 1)))
    assert fast_and_wire(longer, exponent)[0] is None


# --- what reads the records ------------------------------------------------------------------------------


def test_data_protection_walks_a_struct_as_its_dataclass():
    body = record_with(member_id="m@example.com", order_source="call 4111 1111 1111 1111")
    fast, wire = fast_and_wire(body)
    assert fast is not None and wire is not None
    record, wire_record = fast.trade_records[0], wire.trade_records[0]
    assert text_fields(record, "r") == text_fields(wire_record, "r") != []
    assert free_texts(record) == free_texts(wire_record)


def test_a_stored_document_has_the_bytes_pydantic_writes():
    text = "2026-11-20T12:00:00.1234567+09:00"
    fast = assert_agrees(record_with(opened_at=text, closed_at=None, member_id="Zoë 東京 😀"))
    assert '"opened_at":"2026-11-20T12:00:00.123456+09:00"' in document_json(fast.trade_records[0])
    assert '"closed_at":null' in document_json(fast.trade_records[0])


# Eight threads reading their first batch at once, in a fresh process each time (msgspec builds a Struct
# type's decoding information on its first use, without a lock: before record_structs built and used
# each Struct under its own lock, 12 of 60 such processes died with SIGSEGV).
_FIRST_USE_AT_ONCE = """
import sys, threading
from bench import generate
from ingest.one_parse import read_batch, validated_once
from ingest.wire.requests import TradeRecordsBatch
body = generate.batch_bodies(1, 20, seed=9, tag="X")[0]
barrier = threading.Barrier(8)
confirmed = []
def read():
    barrier.wait()
    decoded = read_batch(TradeRecordsBatch, body)
    confirmed.append(decoded is not None and validated_once(TradeRecordsBatch, body, decoded, 2) is not None)
threads = [threading.Thread(target=read) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
sys.exit(0 if confirmed == [True] * 8 else 1)
"""


def test_threads_reading_their_first_batch_at_once_do_not_crash_the_process():
    root = Path(__file__).resolve().parents[2]
    for _ in range(12):
        run = subprocess.run([sys.executable, "-c", _FIRST_USE_AT_ONCE], cwd=root, capture_output=True, timeout=120)
        assert run.returncode == 0, (run.returncode, run.stderr.decode()[-2000:])
