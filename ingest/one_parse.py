"""A valid batch read with one parse: msgspec decodes the body once, straight into Structs generated
from the wire model (ingest/wire/record_structs.py), and the resend key, the I-JSON check and the validation
all work from them, where the slow way (ingest/parsing.py `parse`) parses the same bytes three times.

It only ever confirms. A body msgspec refuses (not JSON, a member no model knows, a value of another type),
one in which a member name may be repeated, and one the bulk checks refuse (an amount with other places than
the store's currency, a timestamp in another form) all go the slow way, whose answer is the service's:
every 400 and warning stays the same.

- `read_batch`: the body decoded, not yet confirmed, or None.
- `validated_once`: the batch, when the bulk checks pass and no member name repeats. Its records are the
  Structs, not the wire dataclasses: same field names, types and values (tests/unit/test_record_structs.py).
- `no_repeated_names`: whether no object of the body has a member name twice, by counting colons.
- `may_hold_control_characters`: whether a string of the body may hold a control character; when none can,
  the Structs skip the patterns that refuse only those.

Why two readers: docs/decisions/0020-two-readers-of-the-wire-format.md.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import operator
import re
from collections.abc import Collection, Iterable, Iterator
from itertools import chain
from typing import Any, NamedTuple, TypeVar

import msgspec
from pydantic import BaseModel

from ingest.data_protection import any_card_number_candidate, plain_free_text_fields
from ingest.parsing import Salvage, parse
from ingest.problem_words import Location
from ingest.wire.record_structs import (
    BULK_CHECKS,
    TIMESTAMP_TEXT,
    WIRE_CLASS_OF,
    decimal_pattern,
    decode,
    struct_of,
    within_bounds,
)

Model = TypeVar("Model", bound=BaseModel)


@dataclasses.dataclass(slots=True)
class Read:
    """A body decoded into the Structs of a wire model, not yet confirmed (`validated_once`)."""

    struct: Any  # a msgspec.Struct of ingest/wire/record_structs.py
    left_out: int  # how many fields of its objects the body left out (each has its default)
    # Set by `validated_once`: whether a free text of the objects the batch holds (its records...) may hold
    # a card number (ingest/data_protection.py `may_hold_card_numbers`); None: not known, search them.
    card_number_candidates: bool | None = None

    def values(self, names: Iterable[str]) -> dict[str, Any]:
        """Its top-level values of those names (the resend key's, ingest/batches.py `resend_key`)."""
        return {name: getattr(self.struct, name) for name in names}


def read_batch(model: type[BaseModel], body: bytes) -> Read | None:
    """body decoded into model's Structs, or None when msgspec refuses it. msgspec is at least as strict as the
    model's parser: it also refuses NaN, a byte order mark, lone surrogates and text that is not UTF-8
    (tests/unit/test_one_parse.py). The Structs take less memory than the slow way's validation, so a body
    of any size is read so (the largest, 5 MiB, peaks at about 4 times its size: docs/performance.md)."""
    decoded = decode(model, body, may_hold_control_characters(body))
    return None if decoded is None else Read(*decoded)


def validated_once(model: type[Model], body: bytes, read: Read, exponent: int) -> Model | None:
    """The batch read from body as model when every amount has exactly `exponent` places and at most 15
    digits, every other bulk check passes and no member name repeats (I-JSON); None when anything is not
    confirmed. The model's fields hold msgspec Structs (ingest/wire/record_structs.py)."""
    checked = bulk_checks(read.struct, exponent)
    if checked is None or not no_repeated_names(body, checked.colons - read.left_out):
        return None
    read.card_number_candidates = checked.card_number_candidates
    # the model's fields are all required (the Struct refuses a body without one): all are set, as pydantic
    # would set them
    return model.model_construct(None, **{name: getattr(read.struct, name) for name in model.model_fields})


def read_slow_way(model: type[Model], body: bytes, salvage: Salvage | None = None) -> tuple[Model, list[Location]]:
    """The batch read the slow way (ingest/parsing.py `parse`: every problem of a refused body), its wire
    dataclasses copied into the Structs the fast path decodes into, so that code downstream meets one type
    whichever reader read the body (decision 0020)."""
    batch, unknown = parse(model, body, salvage)
    return model.model_construct(
        None, **{name: as_structs(getattr(batch, name)) for name in model.model_fields}
    ), unknown


def as_structs(value: Any) -> Any:
    """value with each wire dataclass in it (lists included) copied into its Struct, field for field."""
    if isinstance(value, list):
        return [as_structs(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {field.name: as_structs(getattr(value, field.name)) for field in dataclasses.fields(value)}
        return struct_of(type(value))(**fields)
    return value


def no_repeated_names(body: bytes, colons_kept: int) -> bool:
    """True only when no object of body has a member name twice (I-JSON, RFC 7493), given the colons the
    decoded Structs account for: one for each member they kept, and those of the strings they kept.

    body has a colon for each member it wrote and the colons of its strings, written as they are or as the
    escape \\u003a. Every member msgspec dropped (the first of two with the same name) took at least its own
    colon with it, so the counts are equal only when none was dropped. The escapes are counted as text,
    which can only count too many (an escaped backslash followed by "u003a"): then the counts differ and the
    caller takes the slow way, which says whether a name repeats."""
    escaped_colons = body.count(b"\\u003a") + body.count(b"\\u003A") if b"\\" in body else 0
    return body.count(b":") + escaped_colons == colons_kept


class BulkChecked(NamedTuple):
    """What the bulk checks found of a batch that passed them (`bulk_checks`)."""

    colons: int
    card_number_candidates: bool | None  # None: some free text is in a shape the checks do not read


def bulk_checks(read: msgspec.Struct, exponent: int) -> BulkChecked | None:
    """None unless the checks the Structs leave to the whole batch pass (record_structs.BulkChecks): every
    amount at exactly `exponent` places and at most 15 digits, every other decimal string a decimal, each
    after-validator (once per distinct value), and every timestamp, which is then replaced by its datetime.
    When they pass: the colons of the batch as the body would write it, one per member (every field of every
    Struct, the left out ones included: the caller takes those away) and those of its strings (the amounts'
    and decimals' have none: they matched the decimal patterns); and whether the free texts of the objects
    it holds may hold a card number, read from the same texts. The Structs are visited class by class, all
    the records, then all their items..., as ingest/data_protection.py walks them."""
    # distinct: a batch of 500 records has about 900 amounts in 10,000 (menu prices, zeros); with the None of
    # each optional one not sent until the end
    amounts: set[Any] = set()
    decimals: set[Any] = set()
    timestamps: list[tuple[list[msgspec.Struct], str]] = []  # (the Structs, the name of one of their timestamps)
    colons = 0
    # the free texts data protection searches, sliced out of each class's texts (the batch's own have none
    # it searches): about 4,000, in place of a walk of their own (decision 0120)
    free_texts: list[str | None] | None = []
    level: list[tuple[type[msgspec.Struct], list[msgspec.Struct]]] = [(type(read), [read])]
    while level:
        held_level = []
        for struct, objects in level:
            checks = BULK_CHECKS[struct]
            colons += len(objects) * len(struct.__struct_fields__)
            texts = _values(objects, checks.texts)
            colons += "\n".join(filter(None, texts)).count(":")  # "" and None have none
            if free_texts is not None and struct is not type(read):
                slots = _free_text_slots(struct)
                if slots is None:
                    free_texts = None
                else:
                    for slot in slots:  # texts holds each object's text fields in turn
                        free_texts += texts[slot :: len(checks.texts)]
            if checks.empties and "" in texts:  # an optional field sent as "": absent (ingest/wire/scalars.py)
                _empty_as_absent(objects, checks.empties)
            amounts.update(_each_value(objects, checks.money))  # no list between: 0.4 ms of 2.7 (decision 0120)
            decimals.update(_each_value(objects, checks.decimals))
            timestamps += [(objects, name) for name in checks.timestamps]
            for name, validator in checks.validated:
                if not _all_valid(validator, set(_values(objects, [name])) - {None}):
                    return None
            for name, held, is_list in checks.held:
                values = list(filter(_is_value, _values(objects, [name])))
                held_level.append((held, list(chain.from_iterable(values)) if is_list else values))
        level = held_level
    amounts.discard(None)
    decimals.discard(None)
    if not _all_match(_exact_money(exponent), amounts) or not _all_match(_decimal(), decimals):
        return None
    timestamp_colons = _timestamps_read(timestamps)
    if timestamp_colons is None:
        return None
    return BulkChecked(colons + timestamp_colons, None if free_texts is None else any_card_number_candidate(free_texts))


@functools.cache
def _free_text_slots(struct: type[msgspec.Struct]) -> tuple[int, ...] | None:
    """Where the free texts data protection searches are among the struct's text fields (BulkChecks.texts);
    None when it holds free text in another shape (ingest/data_protection.py `plain_free_text_fields`)."""
    names, texts = plain_free_text_fields(WIRE_CLASS_OF[struct]), BULK_CHECKS[struct].texts
    if names is None or not set(names) <= set(texts):
        return None
    return tuple(texts.index(name) for name in names)


_is_value = functools.partial(operator.is_not, None)


def _empty_as_absent(objects: list[msgspec.Struct], names: list[str]) -> None:
    """Each of the fields names that holds "" in objects set to None, as the slow way reads it."""
    for name in names:
        for item in objects:
            if getattr(item, name) == "":
                setattr(item, name, None)


def _values(objects: list[msgspec.Struct], names: list[str]) -> list[Any]:
    """The values of the fields names of objects, None for an optional field not sent included, read with
    attrgetter and map: no Python call per value (a batch of 500 records has about 20,000 of them; leaving
    the Nones to the caller's set, which drops them once, saved ~1.3 ms of ~6.5 against a filter)."""
    return list(_each_value(objects, names))


def _each_value(objects: list[msgspec.Struct], names: list[str]) -> Iterator[Any]:
    """`_values` as they are read, for a caller that keeps no list of them."""
    if len(names) > 1:
        return chain.from_iterable(map(operator.attrgetter(*names), objects))
    return map(operator.attrgetter(*names), objects) if names else iter(())


def _timestamps_read(fields: list[tuple[list[msgspec.Struct], str]]) -> int | None:
    """The colons of the timestamps' texts, when every timestamp of the fields is in the form TIMESTAMP_TEXT
    and within the wire's bounds, else None; each is then a datetime in place of its text (the Structs are
    the fast path's own, seen by no one yet)."""
    texts = [list(map(operator.attrgetter(name), objects)) for objects, name in fields]
    present = [text for group in texts for text in group if text is not None]
    joined = "\n".join(present)  # once, for the pattern and the case (decision 0120)
    if not _all_lines_match(_timestamp_lines(), joined, len(present)):
        return None
    # fromisoformat wants "T" and "Z" in upper case, which pydantic reads in either
    read = _upper_case_read if "t" in joined or "z" in joined else dt.datetime.fromisoformat
    # the text starts with its 4-digit year: when the least and greatest years are 0003-9997, every
    # timestamp is within the bounds whatever its offset, and none needs the comparison of datetimes
    years_inside = bool(present) and min(present)[:4] >= "0003" and max(present)[:4] <= "9997"
    try:
        for (objects, name), group in zip(fields, texts, strict=True):
            # a required timestamp has no None: map, without a test per value
            if None in group:
                read_group = [None if text is None else read(text) for text in group]
            else:
                read_group = list(map(read, group))
            if not years_inside and not all(within_bounds(t) for t in read_group if t is not None):
                return None
            for item, timestamp in zip(objects, read_group, strict=True):
                setattr(item, name, timestamp)  # None stays None
    except ValueError:  # a day its month does not have
        return None
    return joined.count(":")


def _upper_case_read(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.upper())


def _all_valid(validator: Any, values: set[Any]) -> bool:
    for value in values:
        try:
            validator(value)
        except (ValueError, AssertionError):  # what pydantic turns into a validation error
            return False
    return True


def _all_match(pattern: re.Pattern[str], values: Collection[str]) -> bool:
    """Whether every value matches the line pattern: one match over all of them, each followed by a newline
    (about 3.5 ms for a batch's 13,800 amounts, where a pattern per value in msgspec costs 15 ms more). A
    value with a newline of its own would read as two lines: the count of newlines refuses it."""
    return _all_lines_match(pattern, "\n".join(values), len(values))


def _all_lines_match(pattern: re.Pattern[str], joined: str, count: int) -> bool:
    """`_all_match` of `count` values already joined with newlines."""
    text = joined + "\n" if count else ""
    return text.count("\n") == count and pattern.fullmatch(text) is not None


def exact_money_pattern(exponent: int) -> str:
    """A Money string with exactly `exponent` places and at most 15 digits (below 2**53 - 1, so the range
    holds too)."""
    if exponent == 0:
        return r"^-?[0-9]{1,15}$"
    return rf"^-?[0-9]{{1,{15 - exponent}}}\.[0-9]{{{exponent}}}$"


def _lines_of(anchored: str) -> re.Pattern[str]:
    """A pattern ^...$ as one for any number of lines, each a match followed by a newline."""
    return re.compile(f"(?:{anchored[1:-1]}\n)*")


@functools.cache
def _exact_money(exponent: int) -> re.Pattern[str]:
    return _lines_of(exact_money_pattern(exponent))


@functools.cache
def _timestamp_lines() -> re.Pattern[str]:
    return _lines_of(f"^{TIMESTAMP_TEXT}$")


@functools.cache
def _decimal() -> re.Pattern[str]:
    return _lines_of(decimal_pattern())


# The ways a JSON string can hold a character of CONTROL_CHARACTER_PATTERNS: raw in UTF-8 (DEL 7F, C1 C2 80-9F,
# U+2028 E2 80 A8, U+2029 E2 80 A9; a raw C0 control is not JSON, msgspec refuses it), or as an escape (JSON's
# are \b \f \n \r \t and \u with a lower-case u; an escaped backslash followed by such text is matched too,
# which only costs the patterns). tests/unit/test_one_parse.py checks it against msgspec's reading.
# Each regex runs only when its first byte is in the body (`in` with one byte is a memchr, ~0.03 ms a MB,
# where a regex takes ~0.5 ms, an alternation of the raw forms 8 ms and `in` with 3 bytes 1.4 ms).
_RAW_C1 = re.compile(rb"\xc2[\x80-\x9f]")
_RAW_LINE_SEPARATOR = re.compile(rb"\xe2\x80[\xa8\xa9]")
_CONTROL_ESCAPE = re.compile(rb"\\(?:[bfnrt]|u00[01]|u007[fF]|u00[89]|u202[89])")


def may_hold_control_characters(body: bytes) -> bool:
    """False only when no string of body (JSON) holds a control character or line separator."""
    return (
        b"\x7f" in body
        or (b"\xc2" in body and _RAW_C1.search(body) is not None)
        or (b"\xe2" in body and _RAW_LINE_SEPARATOR.search(body) is not None)
        or (b"\\" in body and _CONTROL_ESCAPE.search(body) is not None)
    )
