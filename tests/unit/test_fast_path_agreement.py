"""The fast path against the slow way, on bodies shaped like real partners' data (decision 0020).

`ingest.one_parse.validated_once` may only ever confirm: for any body it returns None (the slow way,
`ingest.parsing.parse`, then answers) or exactly what the slow way returns for a body it accepts. This
test does not look at how the fast path works, only at what it returns, so it guards any fast path
(pydantic-core's or msgspec's): records are compared field by field by name (the wire dataclasses' fields),
never by type or `==` on objects. Their stored documents and what the batch says follow from those values:
both readers hand the use case the same Structs (`read_slow_way`), which one encoder writes.

- `test_the_fast_path_confirms_only_what_the_slow_way_accepts`: a valid batch (bench/generate.py's) with one
  mutation (a value of the field's kind or another, a null, an absent, unknown, repeated or escaped member
  name, a list) in one layout (compact, spaced, ASCII-escaped, indented, tabs and CRLF), in USD, JPY and KWD.
- `test_a_valid_batch_in_each_partners_shape_is_confirmed`: .NET, Java, JavaScript, Python and PHP
  timestamps, non-Latin text and pretty-printing stay on the fast path (and agree).
- `test_a_..._is_never_confirmed`: bodies no correct fast path may confirm (repeated names, unknown members,
  0 or 501 records, values the slow way refuses or amounts at other places).
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import json
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from typing import Annotated, Any, Literal

import orjson
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from bench import generate
from core.errors import ApiError
from core.money import minor_units
from ingest.one_parse import read_batch, validated_once
from ingest.parsing import parse
from ingest.wire.requests import Payment, TaxLine, TradeItem, TradeModifier, TradeRecord, TradeRecordsBatch
from ingest.wire.scalars import MAX_NAME_LENGTH, MAX_SAFE_INT, DecimalString, EmptyAsAbsent, Money, Timestamp

# The store currencies: 2, 0 and 3 places.
EXPONENTS = {"USD": 2, "JPY": 0, "KWD": 3}
WIRE_CLASSES = (TradeRecord, TradeItem, TradeModifier, Payment, TaxLine)
# no example database (nothing written in the tree); no deadline (a shared machine)
PROFILE = settings(deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


# --- the property ------------------------------------------------------------------------------------


def fast_path(body: bytes, exponent: int) -> TradeRecordsBatch | None:
    """What ingest/trade_records.py gets from the fast path: None also when msgspec does not read the body."""
    read = read_batch(TradeRecordsBatch, body)
    return None if read is None else validated_once(TradeRecordsBatch, body, read, exponent)


def slow_way(body: bytes, exponent: int) -> TradeRecordsBatch | None:
    """The batch when the slow way accepts body with no warning about its members and every amount at
    exactly `exponent` places within range (what the service checks after `parse`), else None."""
    try:
        batch, unknown = parse(TradeRecordsBatch, body)
    except ApiError:
        return None
    if unknown:
        return None
    for record in batch.trade_records:
        for amount in amounts_of(record):
            minor = minor_units(amount, exponent)
            if minor is None or abs(minor) > MAX_SAFE_INT:
                return None
    return batch


def assert_agrees(body: bytes, exponent: int) -> TradeRecordsBatch | None:
    """The property: the fast path returns None, or the slow way accepts body and returns the same batch.
    Returns the fast path's batch."""
    fast = fast_path(body, exponent)
    if fast is None:
        return None
    slow = slow_way(body, exponent)
    assert slow is not None, "the fast path confirmed a body the slow way refuses or warns about"
    assert fast.model_fields_set == slow.model_fields_set
    for name in TradeRecordsBatch.model_fields:
        assert_same(getattr(fast, name), getattr(slow, name), name)
    return fast


def assert_same(fast: Any, slow: Any, path: str) -> None:
    """fast equals slow field by field (by the wire dataclasses' field names), with the same type for every
    value, and datetimes with the same offset and ISO text."""
    if dataclasses.is_dataclass(slow):
        for field in dataclasses.fields(slow):
            assert_same(getattr(fast, field.name), getattr(slow, field.name), f"{path}.{field.name}")
        return
    assert type(fast) is type(slow), f"{path}: {type(fast).__name__} vs {type(slow).__name__}"
    if isinstance(slow, list):
        assert len(fast) == len(slow), path
        for index, (mine, theirs) in enumerate(zip(fast, slow, strict=True)):
            assert_same(mine, theirs, f"{path}[{index}]")
    elif isinstance(slow, dt.datetime):
        assert (fast, fast.utcoffset(), fast.isoformat()) == (slow, slow.utcoffset(), slow.isoformat()), path
    else:
        assert fast == slow, f"{path}: {fast!r} vs {slow!r}"


# --- the wire classes' fields, by kind -----------------------------------------------------------------


def _without_none(hint: Any) -> Any:
    if typing.get_origin(hint) is Annotated and any(isinstance(meta, EmptyAsAbsent) for meta in hint.__metadata__):
        hint = typing.get_args(hint)[0]  # an optional field that reads "" as absent
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        others = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        return others[0] if len(others) == 1 else hint
    return hint


def kind_of(hint: Any) -> str:
    """timestamp, date, money, decimal, int, bool, enum, list, str."""
    hint = _without_none(hint)
    for kind, declared in (("timestamp", Timestamp), ("money", Money), ("decimal", DecimalString)):
        if hint == declared:
            return kind
    if hint is dt.date:
        return "date"
    if typing.get_origin(hint) is Annotated:
        hint = typing.get_args(hint)[0]
    if typing.get_origin(hint) is Literal:
        return "enum"
    if typing.get_origin(hint) is list:
        return "list"
    return {int: "int", bool: "bool", str: "str"}[hint]


FIELD_KINDS: dict[type, dict[str, str]] = {
    cls: {name: kind_of(hint) for name, hint in typing.get_type_hints(cls, include_extras=True).items()}
    for cls in WIRE_CLASSES
}
FIELD_KINDS[TradeRecordsBatch] = {
    name: kind_of(field.annotation) for name, field in TradeRecordsBatch.model_fields.items()
}
LITERALS: dict[tuple[type, str], tuple] = {
    (cls, name): typing.get_args(_without_none(hint))
    for cls in WIRE_CLASSES
    for name, hint in typing.get_type_hints(cls).items()
    if typing.get_origin(_without_none(hint)) is Literal
}
HELD = {("trade_records", TradeRecordsBatch): TradeRecord, ("items", TradeRecord): TradeItem}
HELD |= {("payments", TradeRecord): Payment, ("tax_lines", TradeRecord): TaxLine}
HELD |= {("modifiers", TradeItem): TradeModifier}


def amounts_of(part: Any) -> Iterator[str]:
    """Every Money value of a parsed record (or part of one), by field name."""
    for name, kind in FIELD_KINDS[type(part)].items():
        value = getattr(part, name)
        if kind == "money" and value is not None:
            yield value
        elif kind == "list":
            for held in value:
                yield from amounts_of(held)


def objects_of(document: dict) -> list[tuple[type, dict]]:
    """(class, object) of the batch and of every object it holds."""
    found: list[tuple[type, dict]] = []

    def walk(cls: type, value: dict) -> None:
        found.append((cls, value))
        for (name, holder), held in HELD.items():
            if holder is cls and isinstance(value.get(name), list):
                for entry in value[name]:
                    walk(held, entry)

    walk(TradeRecordsBatch, document)
    return found


# --- valid batches -------------------------------------------------------------------------------------


def _in_places(document: dict, exponent: int) -> dict:
    """A USD (2-place) batch with every amount at `exponent` places."""
    for cls, value in objects_of(document):
        for name, kind in FIELD_KINDS[cls].items():
            if kind == "money" and isinstance(value.get(name), str):
                whole, _, places = value[name].partition(".")
                value[name] = f"{whole}.{places:0<{exponent}}" if exponent else whole
    return document


def _valid_batch(currency: str) -> dict:
    """Three records of the benchmark's day (modifiers, several payments and tax lines, members absent and
    null); KWD is the USD batch with 3-place amounts."""
    records = generate.trade_records(3, start=3, currency="JPY" if currency == "JPY" else "USD")
    document = generate.trade_batch(records)
    if currency == "KWD":
        for record in document["trade_records"]:
            record["currency"] = "KWD"
        _in_places(document, 3)
    # an optional member absent, beside the builder's nulls
    del document["trade_records"][0]["member_id"]
    del document["trade_records"][1]["items"][0]["tax_category"]
    return document


VALID = {currency: _valid_batch(currency) for currency in EXPONENTS}


def test_the_valid_batches_are_confirmed_and_agree():
    for currency, exponent in EXPONENTS.items():
        assert any(item["modifiers"] for record in VALID[currency]["trade_records"] for item in record["items"])
        assert assert_agrees(orjson.dumps(VALID[currency]), exponent) is not None, currency


# --- writing a body ------------------------------------------------------------------------------------


class Raw(str):
    """JSON text put in the body as it is (a number written 2.0, an escape, a repeated name)."""


def body_of(document: dict, layout: str, raws: Mapping[str, str]) -> bytes:
    """document written in a layout, each placeholder of `raws` (a string or member name) then replaced
    by its raw JSON text."""
    text = {
        "orjson": lambda: orjson.dumps(document).decode(),
        "spaced": lambda: json.dumps(document, ensure_ascii=False),
        "ascii": lambda: json.dumps(document),  # every non-ASCII character escaped, astral as surrogate pairs
        "indent": lambda: orjson.dumps(document, option=orjson.OPT_INDENT_2).decode(),
        "tabs": lambda: json.dumps(document, indent="\t", separators=(" ,\r\n", " :  "), ensure_ascii=False),
    }[layout]()
    for placeholder, raw in raws.items():
        assert text.count(f'"{placeholder}"') == 1
        text = text.replace(f'"{placeholder}"', raw)
    return text.encode()


LAYOUTS = st.sampled_from(["orjson", "orjson", "spaced", "ascii", "indent", "tabs"])


def escaped_name(name: str, at: int) -> str:
    """name as JSON text with its character at `at` written as a \\u escape ("line\\u005fno")."""
    at %= len(name)
    return json.dumps(name[:at])[:-1] + f"\\u{ord(name[at]):04x}" + json.dumps(name[at + 1 :])[1:]


# --- values shaped like partners' data -----------------------------------------------------------------

SCRIPTS = {
    "latin": "abcXYZ09 -_éñøß",
    "arabic": "مرحبامتجرالقاهرة٠١٢٣",
    "cjk": "東京渋谷店珈琲拉麺臺北ｶﾀｶﾅ",
    "devanagari": "नमस्तेदिल्लीचाय",
    "thai": "กรุงเทพฯสวัสดีน้ำ",
    "hangul": "서울커피",
    "emoji": "😀🍔🍟🥤👨‍👩‍👧🇯🇵",
    "combining": "e\u0301a\u0308o\u0302\u0323\u200d\ufeff",
}
ALL_SCRIPTS = "".join(SCRIPTS.values())
CODES = ["FT A/123", "FV/2024/01/001", "#4411", "ABC/12-XL", "GST/HST", " P1 ", "0012", "1e5", "12.50", "-1"]
CODES += ["NIF 503 123 456", "INV:2026:000017", "T-00001\\", "領収書-0001", "फ़ाइल-7", "R" * 200]
CONTROL_TEXTS = ["a\x7fb", "a\x85b", "\x9f", "a\u2028b", "\u2029", "a\tb", "a\nb", "a\rb", "\x00", "a\x1bb", " "]
ESCAPED_TEXTS = [r'"a\u0000b"', r'"a\u007Fb"', r'"a\u007fb"', r'"a\tb"', r'"a\nb"', r'"a\u2028b"', r'"\u0085"']
ESCAPED_TEXTS += [r'"a\/b"', r'"\u0041BC"', r'"\ud83c\udf54"', r'"a\\u003ab"', r'"\u003a"', r'"a\u00e9"', '""']
TEXT_LENGTHS = [1, 2, 49, 50, 51, 199, 200, 201, 999, 1000, 1001]


@st.composite
def texts(draw: st.DrawFn) -> str:
    """Free text and codes: scripts at the lengths around the limits (code points), punctuation, numbers,
    control characters raw and escaped, empty."""
    choice = draw(st.integers(0, 9))
    if choice <= 4:
        alphabet = draw(st.sampled_from([*SCRIPTS.values(), ALL_SCRIPTS]))
        size = draw(st.sampled_from(TEXT_LENGTHS))
        return (draw(st.text(alphabet, min_size=1, max_size=8)) * size)[:size]  # cheaper than size draws
    if choice <= 6:
        return draw(st.sampled_from(CODES))
    if choice == 7:
        return draw(st.sampled_from(CONTROL_TEXTS))
    if choice == 8:
        return Raw(draw(st.sampled_from(ESCAPED_TEXTS)))
    return draw(st.text(min_size=0, max_size=8))  # any code point hypothesis likes


def mostly(draw: st.DrawFn, usual: list, odd: list) -> Any:
    """One of `usual` four times in five, else one of `odd`: most values stay readable, so that most
    mutated batches are still valid and the values compared."""
    return draw(st.sampled_from(usual if draw(st.integers(0, 4)) else odd))


OFFSETS = ["Z", "+00:00", "+09:00", "+05:30", "-05:00", "+0900", "-0330", "+14:00", "-12:00", "+01:00"]
ODD_OFFSETS = ["z", "-00:00", "+09", "", "+24:00", "+09:60", " +09:00", "UTC", "+23:59", "-23:59", "+1400"]
FRACTIONS = ["", ".1", ".123", ".123456", ".1234567", ".12345678", ".123456789"]
ODD_FRACTIONS = [",5", ".", ".1234567890", ".9999995", ".9999999", ".0000005", ".0000000"]
ODD_TIMESTAMPS = [
    "2026-11-20T23:59:60Z",
    "2026-11-20T24:00:00Z",
    "1700000000",
    "20261120T120000Z",
    "2026-02-29T00:00:00Z",
]
ODD_TIMESTAMPS += [
    "2024-02-29T12:00:00+09:00",
    "0001-12-31T23:59:59Z",
    "0002-01-01T00:00:00Z",
    "0002-01-01T00:00:00+01:00",
]
ODD_TIMESTAMPS += ["0002-01-01T00:00:00-01:00", "9998-12-31T23:59:59.9999999Z", "9999-01-01T00:00:00Z"]
ODD_TIMESTAMPS += ["9998-12-31T23:59:59-01:00", "9998-12-31T23:59:59+01:00", "2026-11-20T12:00:00.1234567+09:00 "]
ODD_TIMESTAMPS += ["2026-11-20", "2026-11-20T12", "2026-11-20T12:00:00.123456+00:00Z", "１２:00"]


@st.composite
def timestamps(draw: st.DrawFn) -> Any:
    """RFC 3339-ish date-times: separators, seconds or none, 0 to 10 fractional digits (random), offsets,
    years at the bounds; mostly readable, and odd ones."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from([*ODD_TIMESTAMPS, Raw("1700000000"), Raw("1.7e9")]))
    year = mostly(draw, [2026, 2026, 2000, 2099], [1, 2, 1970, 9998, 9999])
    day = draw(st.dates(dt.date(2000, 1, 1), dt.date(2000, 12, 31)))  # a leap year: 02-29 on a common one too
    separator = mostly(draw, ["T"], ["t", " ", "_", "TT"])
    hour, minute = mostly(draw, list(range(24)), [24, 99]), draw(st.integers(0, 59))
    second = mostly(draw, [*range(60), None], [60, 61])
    clock = f"{hour:02d}:{minute:02d}" + ("" if second is None else f":{second:02d}")
    fraction = mostly(draw, FRACTIONS, ODD_FRACTIONS) if second is not None else ""
    if fraction[1:].isdigit() and draw(st.booleans()):
        fraction = fraction[0] + draw(st.text("0123456789", min_size=len(fraction) - 1, max_size=len(fraction) - 1))
    return f"{year:04d}-{day:%m-%d}{separator}{clock}{fraction}{mostly(draw, OFFSETS, ODD_OFFSETS)}"


DATES = ["2026-11-20", "2026-11-21", "2024-02-29", "2026-02-29", "0001-01-01", "9999-12-31", "2026-11-20T00:00:00Z"]
DATES += ["20261120", "2026-11-20 ", " 2026-11-20", "2026-W47-5", "2026-11-20Z", "2026-324", "２０２６-11-20"]


@st.composite
def amounts(draw: st.DrawFn, exponent: int) -> Any:
    """Amounts at the currency's places (1 to 16 digits, signs), at other places, and odd forms."""
    choice = draw(st.integers(0, 5))
    if choice == 0:
        odd = ["-0.00", "+1.00", " 1.00", "1.00 ", "1e2", "1E2", "0x10", "１.００", "١٢.٥٠", "1,00", ".50", "1."]
        odd += ["-", "", "00.00", "-0", "0", "1.0000000", "1.00000000", "1.000000000"]
        return draw(st.sampled_from([*odd, Raw("1.00"), Raw("100"), Raw("true"), Raw("null")]))
    places = exponent if choice <= 3 else draw(st.integers(0, 9))
    digits = draw(st.integers(1, 17))
    number = draw(st.text("0123456789", min_size=digits, max_size=digits))
    number = number if len(number) > places else number.rjust(places + 1, "0")
    sign = draw(st.sampled_from(["", "", "-"]))
    return sign + (f"{number[:-places]}.{number[-places:]}" if places else number)


INTS = [Raw("2.0"), Raw("true"), Raw("false"), Raw('"2"'), Raw("1e2"), Raw("2E0"), Raw("-0"), Raw("1.5")]
INTS += [Raw(str(2**53)), Raw(str(2**53 - 1)), Raw("-1"), Raw("0"), Raw("100000"), Raw("100001"), Raw("2")]
BOOLS = [Raw("1"), Raw("0"), Raw('"true"'), Raw("True"), True, False]


def values_of(kind: str, literals: tuple, exponent: int) -> st.SearchStrategy:
    """Values for a field of this kind, mostly shaped like it."""
    if kind == "timestamp":
        return timestamps()
    if kind == "date":
        return st.sampled_from([*DATES, Raw("20261120")])
    if kind in ("money", "decimal"):
        return amounts(exponent)
    if kind == "int":
        return st.one_of(st.sampled_from(INTS), st.integers(-(2**70), 2**70).map(lambda number: Raw(str(number))))
    if kind == "bool":
        return st.sampled_from(BOOLS)
    if kind == "enum":
        choices = list(literals) + [text.lower() for text in literals[:2]] + [f" {literals[0]}", ""]
        return st.sampled_from(choices)
    if kind == "list":
        return st.sampled_from([[], Raw("{}"), Raw("null"), "[]"])
    return texts()


ANY_KIND = ["timestamp", "date", "money", "int", "bool", "str", "list"]


# --- one mutation of a valid batch ---------------------------------------------------------------------


@dataclasses.dataclass
class Mutation:
    draw: st.DrawFn
    document: dict
    exponent: int
    raws: dict[str, str] = dataclasses.field(default_factory=dict)

    def raw(self, text: str) -> str:
        """A placeholder for raw JSON text (a value or a member name)."""
        placeholder = f"@@raw{len(self.raws)}@@"
        self.raws[placeholder] = text
        return placeholder

    def value(self, value: Any) -> Any:
        return self.raw(value) if isinstance(value, Raw) else value

    def some_object(self) -> tuple[type, dict]:
        return self.draw(st.sampled_from(objects_of(self.document)))

    def some_field(self) -> tuple[type, dict, str]:
        cls, target = self.some_object()
        return cls, target, self.draw(st.sampled_from(sorted(FIELD_KINDS[cls])))


def set_value(change: Mutation) -> str:
    """A field of a kind (every kind as likely: a batch has many more strings than dates) gets a value."""
    fields = [(cls, target, name) for cls, target in objects_of(change.document) for name in FIELD_KINDS[cls]]
    kind = change.draw(st.sampled_from(sorted({FIELD_KINDS[cls][name] for cls, _, name in fields})))
    cls, target, name = change.draw(
        st.sampled_from([found for found in fields if FIELD_KINDS[found[0]][found[2]] == kind])
    )
    if change.draw(st.integers(0, 9)) == 0:  # another kind's value
        kind = change.draw(st.sampled_from(ANY_KIND))
    target[name] = change.value(change.draw(values_of(kind, LITERALS.get((cls, name), ("X",)), change.exponent)))
    return f"{kind} {cls.__name__}.{name} = {target[name]!r}"


def null_or_absent(change: Mutation) -> str:
    cls, target, name = change.some_field()
    if change.draw(st.booleans()):
        target[name] = None
        return f"{cls.__name__}.{name} = null"
    target.pop(name, None)
    return f"{cls.__name__}.{name} absent"


UNKNOWN_NAMES = ["x_note", "extension", "Line_no", "lineNo", "trade_record_id ", "", "名前", "@type", "items2"]


def unknown_member(change: Mutation) -> str:
    cls, target = change.some_object()
    name = change.draw(st.sampled_from(UNKNOWN_NAMES))
    target[name] = change.value(change.draw(st.one_of(texts(), st.none(), st.just({"a": [1]}), st.integers(-9, 9))))
    return f"{cls.__name__}: unknown member {name!r}"


def repeated_name(change: Mutation) -> str:
    """A member written twice: its name raw or escaped, with the same or another value, before or after."""
    cls, target = change.some_object()
    name = change.draw(st.sampled_from(sorted(target)))
    written = json.dumps(name) if change.draw(st.booleans()) else escaped_name(name, change.draw(st.integers(0, 99)))
    kind = FIELD_KINDS[cls].get(name, "str")
    again = target[name] if change.draw(st.booleans()) else change.draw(values_of(kind, ("X",), change.exponent))
    placeholder = change.raw(written)
    members = list(target.items())
    at = change.draw(st.integers(0, len(members)))
    target.clear()
    target.update([*members[:at], (placeholder, change.value(again)), *members[at:]])
    return f"{cls.__name__}: {written} twice"


def escaped_member_name(change: Mutation) -> str:
    """A member's name written with an escape, once: the same member."""
    cls, target = change.some_object()
    name = change.draw(st.sampled_from(sorted(target)))
    written = escaped_name(name, change.draw(st.integers(0, 99)))
    members = [(change.raw(written) if key == name else key, value) for key, value in target.items()]
    target.clear()
    target.update(members)
    return f"{cls.__name__}: {written}"


def list_change(change: Mutation) -> str:
    cls, target = change.draw(
        st.sampled_from(
            [(c, o) for c, o in objects_of(change.document) if c in (TradeRecordsBatch, TradeRecord, TradeItem)]
        )
    )
    names = [name for (name, holder) in HELD if holder is cls]
    name = change.draw(st.sampled_from(names))
    how = change.draw(st.sampled_from(["empty", "twice", "first only"]))
    target[name] = {"empty": [], "twice": target[name] * 2, "first only": target[name][:1]}[how]
    return f"{cls.__name__}.{name}: {how}"


Mutate = Callable[[Mutation], str]
MUTATIONS: list[Mutate] = [
    *[set_value] * 6,
    null_or_absent,
    unknown_member,
    repeated_name,
    escaped_member_name,
    list_change,
]


@st.composite
def mutated_batches(draw: st.DrawFn) -> tuple[str, int, bytes]:
    currency = draw(st.sampled_from(sorted(EXPONENTS)))
    # now and then a store whose currency has other places than the records' (a 400 from the slow way)
    exponent = mostly(draw, [EXPONENTS[currency]], sorted(set(EXPONENTS.values()) - {EXPONENTS[currency]}))
    change = Mutation(draw, copy.deepcopy(VALID[currency]), exponent)
    mutate = draw(st.sampled_from(MUTATIONS))
    told = mutate(change)
    layout = draw(LAYOUTS)
    return (
        f"{currency} {layout} {mutate.__name__}: {told}",
        change.exponent,
        body_of(change.document, layout, change.raws),
    )


@settings(PROFILE, max_examples=700)
@given(mutated=mutated_batches())
def test_the_fast_path_confirms_only_what_the_slow_way_accepts(mutated):
    told, exponent, body = mutated
    currency, _layout, mutation = told.split(":")[0].split(" ")
    if mutation == "set_value":
        mutation += " " + told.split(": ")[1].split(" ")[0]  # the field's kind
    confirmed = assert_agrees(body, exponent) is not None
    event(f"{mutation} {'confirmed' if confirmed else 'not confirmed'}")
    event(f"{currency} {'confirmed' if confirmed else 'not confirmed'}")


# --- real partners stay on the fast path ---------------------------------------------------------------


def _offset(moment: dt.datetime, colon: bool = True, utc: str = "Z") -> str:
    seconds = int(moment.utcoffset().total_seconds())  # type: ignore[union-attr]
    if seconds == 0 and utc:
        return utc
    sign, seconds = ("-" if seconds < 0 else "+"), abs(seconds)
    return f"{sign}{seconds // 3600:02d}{':' if colon else ''}{seconds % 3600 // 60:02d}"


def dotnet(moment: dt.datetime, digit: str) -> str:
    """DateTimeOffset.ToString("o"): 7 fractional digits, "+09:00" (or "Z" for a UTC DateTime)."""
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{moment.microsecond:06d}{digit}{_offset(moment)}"


def java(moment: dt.datetime, digit: str) -> str:
    """OffsetDateTime/Instant.toString(): seconds left out when they and the fraction are zero, the fraction
    in groups of 3 digits (millis, micros or nanos, as many as needed), "Z" for UTC."""
    fraction = f"{moment.microsecond:06d}" + ("" if digit in "0123456" else f"{digit}{digit}{digit}")
    while fraction.endswith("000"):
        fraction = fraction[:-3]
    clock = f"{moment:%H:%M}" + ("" if moment.second == 0 and not fraction else f":{moment:%S}")
    return f"{moment:%Y-%m-%d}T{clock}{'.' + fraction if fraction else ''}{_offset(moment)}"


def javascript(moment: dt.datetime, digit: str) -> str:
    """Date.prototype.toISOString(): always milliseconds, always UTC "Z"."""
    utc = moment.astimezone(dt.UTC)
    return f"{utc:%Y-%m-%dT%H:%M:%S}.{utc.microsecond // 1000:03d}Z"


def python(moment: dt.datetime, digit: str) -> str:
    """datetime.isoformat(): microseconds unless zero, "+00:00" for UTC."""
    return moment.isoformat()


def php(moment: dt.datetime, digit: str) -> str:
    """date(DATE_ISO8601): no fraction, "+0900"."""
    return f"{moment:%Y-%m-%dT%H:%M:%S}{_offset(moment, colon=False, utc='')}"


TIMESTAMP_SHAPES = {"dotnet": dotnet, "java": java, "javascript": javascript, "python": python, "php": php}
PARTNER_OFFSETS = [0, 9 * 60, 5 * 60 + 30, -5 * 60, 14 * 60, -(9 * 60 + 30), 3 * 60, 1 * 60]
NON_LATIN_FIELDS = {"product_name", "option_name", "order_source_detail", "payment_method_detail", "product_id"}
NON_LATIN_FIELDS |= {"trade_record_id", "employee_id", "fiscal_document_no", "source_transaction_type", "member_id"}


@st.composite
def moments(draw: st.DrawFn) -> dt.datetime:
    naive = draw(st.datetimes(dt.datetime(2000, 1, 1), dt.datetime(2099, 12, 31)))
    if draw(st.booleans()):  # whole seconds or minutes, which some writers shorten
        naive = naive.replace(
            second=draw(st.sampled_from([0, naive.second])), microsecond=draw(st.sampled_from([0, 123000]))
        )
    offset = dt.timezone(dt.timedelta(minutes=draw(st.sampled_from(PARTNER_OFFSETS))))
    return naive.replace(tzinfo=offset)


@st.composite
def partner_batches(draw: st.DrawFn, shape: str) -> tuple[int, bytes]:
    """A valid batch with every timestamp in one partner's shape, or its text in non-Latin scripts, or laid
    out with whitespace."""
    currency = draw(st.sampled_from(sorted(EXPONENTS)))
    document = copy.deepcopy(VALID[currency])
    for cls, target in objects_of(document):
        for name, kind in FIELD_KINDS[cls].items():
            if shape in TIMESTAMP_SHAPES and kind == "timestamp" and target.get(name) is not None:
                target[name] = TIMESTAMP_SHAPES[shape](draw(moments()), draw(st.sampled_from("0123456789")))
            if shape == "non-latin" and name in NON_LATIN_FIELDS and cls is not TradeRecordsBatch:
                limit = 50 if name in ("order_source_detail", "payment_method_detail", "member_id") else 200
                limit = MAX_NAME_LENGTH if name in ("product_name", "option_name") else limit
                alphabet = draw(st.sampled_from([*SCRIPTS.values(), ALL_SCRIPTS]))
                size = draw(st.sampled_from([1, 2, 7, limit]))
                target[name] = (draw(st.text(alphabet, min_size=1, max_size=8)) * size)[:size]
    layout = draw(st.sampled_from(["spaced", "ascii", "indent", "tabs"])) if shape == "pretty" else "orjson"
    if shape == "non-latin":
        layout = draw(st.sampled_from(["orjson", "ascii"]))
    return EXPONENTS[currency], body_of(document, layout, {})


@pytest.mark.parametrize("shape", [*TIMESTAMP_SHAPES, "non-latin", "pretty"])
@settings(PROFILE, max_examples=25)
@given(data=st.data())
def test_a_valid_batch_in_each_partners_shape_is_confirmed(shape, data):
    exponent, body = data.draw(partner_batches(shape))
    # main's fast path (pydantic-core over orjson's values) confirms every one of these shapes
    assert assert_agrees(body, exponent) is not None, f"a valid {shape} batch left the fast path"


# --- never confirmed -----------------------------------------------------------------------------------


def _record(document: dict) -> dict:
    return document["trade_records"][1]


def _item(document: dict) -> dict:
    return next(item for record in document["trade_records"] for item in record["items"] if item["modifiers"])


LEVELS: dict[str, Callable[[dict], dict]] = {
    "batch": lambda document: document,
    "record": _record,
    "item": _item,
    "modifier": lambda document: _item(document)["modifiers"][0],
    "payment": lambda document: _record(document)["payments"][0],
    "tax_line": lambda document: _record(document)["tax_lines"][0],
}


def assert_never_confirmed(body: bytes, exponent: int) -> None:
    assert isinstance(orjson.loads(body), dict)  # a JSON object: the fast path is asked
    assert fast_path(body, exponent) is None


@pytest.mark.parametrize("escaped", [False, True])
@pytest.mark.parametrize("level", LEVELS)
def test_a_repeated_name_is_never_confirmed(level, escaped):
    document = copy.deepcopy(VALID["USD"])
    target = LEVELS[level](document)
    name, value = next(iter(target.items()))  # the first member again, last, with the same value
    target["@@again@@"] = value
    written = escaped_name(name, 1) if escaped else json.dumps(name)
    assert_never_confirmed(body_of(document, "orjson", {"@@again@@": written}), 2)


@pytest.mark.parametrize("level", LEVELS)
def test_an_unknown_member_is_never_confirmed(level):
    document = copy.deepcopy(VALID["USD"])
    LEVELS[level](document)["x_note"] = "hi"
    assert_never_confirmed(orjson.dumps(document), 2)


@pytest.mark.parametrize("count", [0, 501])
def test_a_batch_of_0_or_501_records_is_never_confirmed(count):
    records = generate.trade_records(count) if count else []
    assert_never_confirmed(orjson.dumps({**VALID["USD"], "trade_records": records}), 2)


# (currency, level, field, value): a Raw value is put in the body as JSON text
NEVER_CONFIRMED_VALUES: list[tuple[str, str, str, Any]] = [
    ("USD", "payment", "amount", "5.0000000"),  # a 7th place
    ("USD", "record", "tip_amount", "0.000"),
    ("USD", "record", "tip_amount", "0.0"),
    ("JPY", "record", "tip_amount", "0.00"),
    ("KWD", "record", "tip_amount", "0.00"),
    ("KWD", "modifier", "price_delta", "1"),
    ("USD", "record", "tip_amount", "12345678901234.00"),  # 16 digits
    ("USD", "record", "tip_amount", "+1.00"),
    ("USD", "record", "tip_amount", " 1.00"),
    ("USD", "record", "tip_amount", "1e2"),
    ("USD", "record", "tip_amount", Raw("1.00")),
    ("USD", "record", "version", Raw("2.0")),
    ("USD", "record", "version", Raw("true")),
    ("USD", "record", "version", Raw('"2"')),
    ("USD", "record", "version", Raw(str(2**53))),
    ("USD", "record", "version", Raw("0")),
    ("USD", "item", "line_no", Raw("-1")),
    ("USD", "item", "is_voided", Raw("1")),
    ("USD", "record", "status", None),  # null for a required member
    ("USD", "record", "items", []),
    ("USD", "item", "product_id", "😀" * 201),  # code points, not UTF-16 units or bytes
    ("USD", "item", "product_name", "東" * (MAX_NAME_LENGTH + 1)),
    ("USD", "payment", "payment_type", "ก" * 51),
    ("USD", "item", "product_id", ""),
    ("USD", "item", "product_id", "P\x7f1"),
    ("USD", "item", "product_id", "P\x851"),
    ("USD", "item", "product_id", "P\u20281"),
    ("USD", "item", "product_name", Raw(r'"a\u0000b"')),
    ("USD", "item", "product_name", Raw(r'"a\u007fb"')),
    ("USD", "item", "product_id", Raw(r'"a\tb"')),
    ("USD", "record", "opened_at", "0001-01-01T00:00:00Z"),
    ("USD", "record", "opened_at", "9999-01-01T00:00:00Z"),
    ("USD", "record", "opened_at", "0002-01-01T00:00:00+01:00"),  # before 0002 in UTC
    ("USD", "record", "opened_at", "2026-11-20T23:59:60Z"),
    ("USD", "record", "opened_at", "2026-11-20T24:00:00Z"),
    ("USD", "record", "opened_at", "2026-11-20T12:00:00"),
    ("USD", "record", "business_date", "2026-11-20T00:00:00Z"),
    ("USD", "record", "order_type", "dine_in"),
]


@pytest.mark.parametrize(
    ("currency", "level", "name", "value"),
    NEVER_CONFIRMED_VALUES,
    ids=[f"{currency} {level}.{name}={value!r:.24}" for currency, level, name, value in NEVER_CONFIRMED_VALUES],
)
def test_a_value_the_slow_way_refuses_is_never_confirmed(currency, level, name, value):
    document = copy.deepcopy(VALID[currency])
    raws = {"@@value@@": value} if isinstance(value, Raw) else {}
    LEVELS[level](document)[name] = "@@value@@" if raws else value
    assert_never_confirmed(body_of(document, "orjson", raws), EXPONENTS[currency])


# Optional fields sent as "" (decision 0018): the fast path reads "" as absent in free strings and codes, as the
# slow way does; a value of a given form sent as "" (the slow way warns) is left to the slow way.
EMPTY_AS_ABSENT = [
    ("record", "order_source"),
    ("record", "order_source_detail"),
    ("record", "member_id"),
    ("record", "employee_id"),
    ("record", "fiscal_document_no"),
    ("record", "original_trade_record_id"),
    ("payment", "payment_method_detail"),
    ("payment", "original_payment_id"),
    ("modifier", "option_name"),
]
EMPTY_WARNED = [("record", "closed_at"), ("payment", "tip_amount"), ("payment", "card_last4"), ("item", "tax_category")]
_LEVEL_CLASSES = {"record": TradeRecord, "item": TradeItem, "payment": Payment, "modifier": TradeModifier}


def _with_empty(level: str, name: str) -> bytes:
    document = copy.deepcopy(VALID["USD"])
    for cls, target in objects_of(document):
        if cls is _LEVEL_CLASSES[level]:
            target[name] = ""
    return body_of(document, "orjson", {})


@pytest.mark.parametrize(("level", "name"), EMPTY_AS_ABSENT)
def test_an_empty_free_string_is_confirmed_as_absent(level, name):
    batch = assert_agrees(_with_empty(level, name), 2)
    assert batch is not None
    records = batch.trade_records
    held = {
        "record": records,
        "item": [item for record in records for item in record.items],
        "payment": [payment for record in records for payment in record.payments],
        "modifier": [modifier for record in records for item in record.items for modifier in item.modifiers],
    }[level]
    assert held and all(getattr(part, name) is None for part in held)  # every one of them read as None


@pytest.mark.parametrize(("level", "name"), EMPTY_WARNED)
def test_an_empty_value_of_a_form_is_left_to_the_slow_way(level, name):
    body = _with_empty(level, name)
    assert fast_path(body, 2) is None and parse(TradeRecordsBatch, body)[0] is not None
