"""A valid batch read with one parse (issue 20): orjson reads the body once into plain values, and the
resend key, the I-JSON check and the validation all work from those values, where the slow way
(ingest/parsing.py `parse`) parses the same bytes three times.

It only ever confirms. A body orjson refuses, one in which a member name may be repeated, and one the
fast validator refuses (a value, a member no model knows, an amount with other places than the store's
currency) all go the slow way, whose answer is the service's: every 400 and warning stays the same.

- `read_object`: the body as plain values, or None.
- `no_repeated_names`: whether no object of the body has a member name twice, by counting colons.
- `validated_once`: the batch, validated by the wire model's own core schema adapted to plain values, with
  every amount at exactly the store currency's places and no member the models do not know.
- `may_hold_control_characters`: whether a string of the body may hold a control character; when none can,
  the validator skips the patterns that refuse only those.
"""

from __future__ import annotations

import functools
import re
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError
from pydantic_core import SchemaValidator

from ingest.amounts import amount_fields
from ingest.wire.scalars import CONTROL_CHARACTER_PATTERNS

Model = TypeVar("Model", bound=BaseModel)


# Plain values take about 16 times the body's size in memory (orjson's objects), where validating straight
# from the bytes takes about 4: a body over this size is read the lean way, so that the largest (5 MiB)
# stays within 10 times its size (docs/performance.md, "5 MB body").
ONE_PARSE_MAX_BYTES = 2 * 1024 * 1024


def read_object(body: bytes) -> dict | None:
    """body as plain JSON values when orjson reads it as an object, else None; None too for a body over
    ONE_PARSE_MAX_BYTES. orjson is at least as strict as the model's parser: it also refuses NaN, numbers
    beyond a double and lone surrogates (tests/unit/test_one_parse.py)."""
    if len(body) > ONE_PARSE_MAX_BYTES:
        return None
    try:
        raw = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    return raw if isinstance(raw, dict) else None


def no_repeated_names(body: bytes, raw: dict) -> bool:
    """True only when no object of body (read as raw) has a member name twice (I-JSON, RFC 7493).

    raw keeps one member per name, the last. Written again by orjson, it has a colon for each member it
    kept and the colons of its strings, which orjson writes as they are; body has a colon for each member
    it wrote and the colons of the same strings, written as they are or as the escape \\u003a. Every member
    raw dropped took at least its own colon with it, so the counts are equal only when none was dropped.
    The escapes are counted as text, which can only count too many (an escaped backslash followed by
    "u003a"): then the counts differ and the caller takes the slow way, which says whether a name repeats.
    """
    written = orjson.dumps(raw)
    if written == body:  # compact JSON as orjson writes it, which never repeats a name: nothing to count
        return True
    escaped_colons = body.count(b"\\u003a") + body.count(b"\\u003A") if b"\\" in body else 0
    return written.count(b":") == body.count(b":") + escaped_colons


def validated_once(model: type[Model], body: bytes, raw: dict, exponent: int) -> Model | None:
    """body (read as raw) validated as model when it is I-JSON, has only members the models know, and every
    amount has exactly `exponent` places and at most 15 digits; None when anything is not confirmed."""
    validator = batch_validator(model, exponent, may_hold_control_characters(body))
    try:
        fields, _extra, fields_set = validator.validate_python(raw)
    except ValidationError:
        return None
    if not no_repeated_names(body, raw):
        return None
    return model.model_construct(fields_set, **fields)


# The ways a JSON string can hold a character of CONTROL_CHARACTER_PATTERNS: raw in UTF-8 (DEL 7F, C1 C2 80-9F,
# U+2028 E2 80 A8, U+2029 E2 80 A9; a raw C0 control is not JSON, orjson refuses it), or as an escape (JSON's
# are \b \f \n \r \t and \u with a lower-case u; an escaped backslash followed by such text is matched too,
# which only costs the patterns). tests/unit/test_one_parse.py checks it against orjson's reading.
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


# --- the validator -------------------------------------------------------------------------------------
# The wire model's core schema, changed in four ways, each covered by tests/unit/test_one_parse.py:
# 1. amounts: each Money field's pattern narrowed to exactly the exponent's places and at most 15 digits
#    (below 2**53 - 1, so the range holds too);
# 2. plain values in place of JSON: a dataclass accepts a dict (strict, it wants an instance), and a
#    date-time or a date accepts a string only, parsed as in JSON (strict, it wants a datetime object);
# 3. no member the models do not know (they ignore one, with a warning: the slow way finds them);
# 4. for a body that holds no control character, no CONTROL_CHARACTER_PATTERNS (they cost 7-10 % of the
#    validation: a Rust regex per code and name); min_length still refuses an empty string.
# pydantic-core reuses a class's own validator for a model or dataclass met in a schema ("prebuilt"),
# which would undo the changes: the root is the model's fields (the caller builds the model from them),
# and each dataclass is marked as its own generic origin, which turns that reuse off.


def exact_money_pattern(exponent: int) -> str:
    """A Money string with exactly `exponent` places and at most 15 digits."""
    if exponent == 0:
        return r"^-?[0-9]{1,15}$"
    return rf"^-?[0-9]{{1,{15 - exponent}}}\.[0-9]{{{exponent}}}$"


# A date as JSON's strict mode reads it: the lax mode of plain values would also take a date-time at
# midnight ("2026-11-24T00:00:00Z"), which is never sent as a business_date.
_DATE_TEXT = r"^[0-9-]+$"


@functools.cache
def batch_validator(model: type[BaseModel], exponent: int, control_characters: bool = True) -> SchemaValidator:
    """The adapted validator; with control_characters False, for a body that holds none (change 4)."""
    schema = model.__pydantic_core_schema__
    if schema["type"] != "model" or any(kind == "amount" for _, kind, _ in amount_fields(model)):
        raise TypeError(f"{model.__name__}: only amounts of the dataclasses a model holds are narrowed")
    adapted = _adapted(schema["schema"], exact_money_pattern(exponent), control_characters)
    return SchemaValidator(adapted, schema.get("config"))


def _adapted(schema: Any, pattern: str, control_characters: bool) -> Any:
    """A copy of a core schema changed as the comment above says."""
    if isinstance(schema, list):
        return [_adapted(part, pattern, control_characters) for part in schema]
    if not isinstance(schema, dict):
        return schema
    copy = {key: _adapted(value, pattern, control_characters) for key, value in schema.items()}
    kind = copy.get("type")
    if kind == "str" and not control_characters and copy.get("pattern") in CONTROL_CHARACTER_PATTERNS:
        if copy.get("min_length", 0) < 1:  # the pattern's "+" would be lost
            raise TypeError("a control-character pattern without min_length 1")
        del copy["pattern"]
    if kind == "model":  # its prebuilt validator would be used, unchanged
        raise TypeError(f"{copy['cls'].__name__}: a model inside a model is not adapted")
    if kind == "dataclass":
        amounts = {name for name, held, _ in amount_fields(copy["cls"]) if held == "amount"}
        arguments = copy["schema"]
        arguments["fields"] = [
            _with_pattern(field, pattern) if field["name"] in amounts else field for field in arguments["fields"]
        ]
        copy["generic_origin"] = copy["cls"]
        copy["strict"] = False
    if kind in ("dataclass-args", "model-fields"):
        copy["extra_behavior"] = "forbid"
    if kind in ("datetime", "date"):
        text = {"type": "str", "strict": True, **({"pattern": _DATE_TEXT} if kind == "date" else {})}
        return {"type": "chain", "steps": [text, {**copy, "strict": False}]}
    return copy


def _with_pattern(schema: dict, pattern: str) -> dict:
    """schema (a field, possibly optional or with a default) with its string's pattern replaced."""
    if schema.get("type") == "str":
        return {**schema, "pattern": pattern}
    return {key: _with_pattern(value, pattern) if key == "schema" else value for key, value in schema.items()}
