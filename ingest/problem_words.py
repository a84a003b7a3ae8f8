"""Pydantic's validation errors in words a partner understands, in one place.

Pydantic says "Input should be a valid string" when an amount is sent as a JSON number; a partner needs
to hear that amounts are decimal strings. Each error is worded from its type, the field's declared type
in ingest/wire/ (found by walking the model along the error's location) and the JSON type of what was
sent. The value sent is never quoted: it may be personal or card data (only its JSON type is named).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import types
import typing
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Union, get_args, get_origin
from uuid import UUID

from pydantic import AwareDatetime, BaseModel

from ingest.wire import scalars
from ingest.wire.scalars import UUID_EXAMPLE

_AMOUNT_EXAMPLE = 'a decimal string such as "10.32"'
_TIMESTAMP_FORM = "an RFC 3339 date-time with a UTC offset, such as 2024-05-01T12:30:00+09:00 or 2024-05-01T03:30:00Z"
_DATE_FORM = "a date written YYYY-MM-DD, such as 2024-05-01"
_UUID_FORM = f'a UUID string such as "{UUID_EXAMPLE}"'

# What each string type of the wire format holds, and what its pattern asks for (the pattern itself
# means little to a partner).
_EXPECTED = {
    "Money": (
        _AMOUNT_EXAMPLE,
        "must be " + _AMOUNT_EXAMPLE + ": digits, an optional leading minus sign and "
        "decimal point, at most 15 digits before the point and 8 after",
    ),
    "DecimalString": (
        'a decimal string such as "2" or "0.5"',
        'must be a decimal string such as "2" or "0.5": '
        "digits, an optional leading minus sign and decimal point, at most 15 digits before the "
        "point and 8 after",
    ),
    "Code": (
        'a string (codes and ids are JSON strings, also when they are numbers, such as "1042")',
        "must not contain control characters (tab, line breaks and line separators included)",
    ),
    "StoreId": (
        'a string (store codes are JSON strings, also when they are numbers, such as "1042")',
        "must not contain / \\ ? #, control characters or line separators (store_id travels in a URL path)",
    ),
    "Text": ("a string", "must not contain control characters (tab and line breaks aside)"),
    "FreeString50": ("a string", "must not contain control characters (tab and line breaks aside)"),
    "BatchId": (_UUID_FORM, None),
    "CurrencyCode": ('an ISO 4217 currency code string such as "USD"', None),
    "CountryCode": ('an ISO 3166-1 alpha-2 country code string such as "US"', None),
    "TimeZone": ('an IANA time zone string such as "America/New_York"', None),
    "LanguageTag": ('a BCP 47 language tag string such as "en-US"', None),
    "ClockTime": (
        'a time of day string written HH:mm, such as "05:00"',
        "must be a time of day written HH:mm (00:00 to 23:59), such as 05:00",
    ),
}
_ALIASES = {name: getattr(scalars, name) for name in _EXPECTED}

# A pydantic error's `ctx` (what its message was made from) and `loc` (member names and list indexes).
ErrorContext = dict[str, Any]
Location = tuple[int | str, ...]


def words(item: Mapping[str, Any], model: type) -> str:
    """The partner's message for one pydantic error (an item of `ValidationError.errors()` with its
    input), for a body validated as `model`."""
    kind = item["type"]
    ctx = item.get("ctx") or {}
    declared = declared_type(model, item["loc"])
    sent = item.get("input")
    if kind == "missing":
        return "is required"
    if kind == "value_error":
        message = str(ctx.get("error", item["msg"])).removeprefix("Value error, ")
        return f"each member name {message}" if item["loc"][-1:] == ("[key]",) else message
    if kind == "literal_error":
        return _one_of(declared, ctx, sent)
    if kind == "json_invalid":
        return f"the body is not valid JSON ({ctx.get('error', 'syntax error')})"
    if kind in ("date_parsing", "date_from_datetime_parsing", "date_from_datetime_inexact"):
        return f"must be {_DATE_FORM}" + _detail(ctx)
    if kind in ("datetime_parsing", "datetime_from_date_parsing", "datetime_object_invalid"):
        return f"must be {_TIMESTAMP_FORM}" + _detail(ctx)
    if kind == "timezone_aware":
        return (
            "must carry a UTC offset (the offset is required: without it a date-time names no instant), "
            "such as 2024-05-01T12:30:00+09:00 or 2024-05-01T03:30:00Z"
        )
    if kind == "uuid_parsing":  # pydantic's detail quotes a character of the input: left out
        return f"must be {_UUID_FORM}"
    if kind == "string_pattern_mismatch":
        return _pattern_words(declared) or item["msg"]
    if kind in ("string_too_short", "too_short"):
        least = ctx.get("min_length", 1)
        unit = "characters" if kind == "string_too_short" else "items"
        return "must not be empty" if least == 1 else f"must have at least {least} {unit}"
    if kind in ("string_too_long", "too_long"):
        unit = "characters" if kind == "string_too_long" else "items"
        return f"must have at most {ctx.get('max_length')} {unit}"
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        return _bound_words(kind, ctx)
    if kind.endswith("_type") or kind in ("model_attributes_type", "dataclass_exact_type"):
        return _type_words(kind, declared, sent, item["loc"])
    return str(item["msg"])


def _detail(ctx: ErrorContext) -> str:
    # The date and time parser's details are fixed phrases ("month value is outside expected range of
    # 1-12"), never the input.
    return f" ({ctx['error']})" if ctx.get("error") else ""


def _one_of(declared: Any, ctx: ErrorContext, sent: Any) -> str:
    allowed = _literal_values(declared)
    listed = ", ".join(allowed) if allowed else str(ctx.get("expected", "")).replace("'", "")
    not_sent = "" if isinstance(sent, str) else f", not {json_kind(sent)}"
    return f"must be one of {listed} (case-sensitive){not_sent}"


def _bound_words(kind: str, ctx: ErrorContext) -> str:
    limit = next(iter(ctx.values()), None)
    if isinstance(limit, str):  # a timestamp bound, written by pydantic as 0002-01-01T00:00:00Z
        return f"must be on or after {limit}" if kind.startswith("greater") else f"must be before {limit}"
    return {
        "greater_than_equal": f"must be at least {limit}",
        "greater_than": f"must be more than {limit}",
        "less_than_equal": f"must be at most {limit}",
        "less_than": f"must be less than {limit}",
    }[kind]


def _type_words(kind: str, declared: Any, sent: Any, loc: Location) -> str:
    if not loc and kind in ("model_type", "dict_type"):
        return f"the body must be a JSON object, not {json_kind(sent)}"
    if kind == "int_type":
        if isinstance(sent, float):
            return "must be an integer written without a fraction or an exponent (2, not 2.0)"
        return f"must be an integer such as 2, not {json_kind(sent)}"
    if kind == "bool_type":
        return f"must be true or false, not {json_kind(sent)}"
    expected = _expectation(declared) or {
        "string_type": "a string",
        "uuid_type": _UUID_FORM,
        "date_type": f"a string holding {_DATE_FORM}",
        "datetime_type": f"a string holding {_TIMESTAMP_FORM}",
        "list_type": "an array",
    }.get(kind, "an object")
    return f"must be {expected}, not {json_kind(sent)}"


def _expectation(declared: Any) -> str | None:
    base = without_none(declared)
    for name, alias in _ALIASES.items():
        if base == alias:
            return _EXPECTED[name][0]
    base = bare(base)
    if base is UUID:
        return _UUID_FORM
    if base is dt.date:
        return f"a string holding {_DATE_FORM}"
    if base is dt.datetime or base is AwareDatetime:
        return f"a string holding {_TIMESTAMP_FORM}"
    if get_origin(base) is list:
        return "an array"
    if get_origin(base) is dict or is_model(base):
        return "an object"
    if base is str:
        return "a string"
    return None


def _pattern_words(declared: Any) -> str | None:
    base = without_none(declared)
    for name, alias in _ALIASES.items():
        if base == alias:
            return _EXPECTED[name][1]
    if base is not None and any(getattr(meta, "pattern", None) == r"^[0-9]{4}$" for meta in get_args(base)[1:]):
        return "must be exactly 4 digits"
    return None


def json_kind(value: Any) -> str:
    """The JSON type of what was sent, never the value itself."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean (true or false)"
    if isinstance(value, (int, float)):
        return "a JSON number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


# --- the declared type at an error's location ------------------------------------------------------


def declared_type(model: type, loc: Location) -> Any:
    """The annotation (Annotated aliases kept) of the field at loc in model, or None if not found."""
    try:  # every entry of a list has the same type: one cache entry for all of them
        return _declared_type(model, tuple(0 if isinstance(part, int) else part for part in loc))
    except TypeError:  # an unhashable part: never in pydantic's locations, but no reason to fail a 400
        return None


@functools.lru_cache(maxsize=1024)
def _declared_type(model: type, loc: Location) -> Any:
    current: Any = model
    for index, part in enumerate(loc):
        if part == "[key]":
            return get_args(bare(current))[0] if get_origin(bare(current)) is dict else None
        container = bare(current)
        if is_model(container) and isinstance(part, str):
            current = hints(container).get(part)
        elif get_origin(container) is list and isinstance(part, int):
            current = get_args(container)[0]
        elif get_origin(container) is dict and isinstance(part, str):
            is_key = loc[index + 1 : index + 2] == ("[key]",)
            current = get_args(container)[0 if is_key else 1]
            if is_key:
                return current
        else:
            return None
        if current is None:
            return None
    return current


@functools.cache
def hints(model: type) -> dict[str, Any]:
    # Each class's names resolve in its own module (scalars, requests, or a test's).
    return typing.get_type_hints(model, include_extras=True)


def is_model(kind: Any) -> bool:
    return isinstance(kind, type) and hasattr(kind, "__pydantic_fields__")


def field_names(model: type) -> list[str]:
    """The field names of a model of the wire format (a BaseModel or a pydantic dataclass), in order."""
    if dataclasses.is_dataclass(model):
        return [item.name for item in dataclasses.fields(model)]
    if issubclass(model, BaseModel):
        return list(model.model_fields)
    raise TypeError(f"{model.__name__} is not a model of the wire format")


def without_none(annotation: Any) -> Any:
    if get_origin(annotation) is Annotated and any(
        isinstance(meta, scalars.EmptyAsAbsent) for meta in annotation.__metadata__
    ):  # an optional field that reads "" as absent: the type is the one of its union
        annotation = get_args(annotation)[0]
    if get_origin(annotation) in (Union, types.UnionType):
        arms = [arm for arm in get_args(annotation) if arm is not type(None)]
        return arms[0] if len(arms) == 1 else annotation
    return annotation


def bare(annotation: Any) -> Any:
    """The type without None and without Annotated's metadata: what a location steps into."""
    annotation = without_none(annotation)
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return without_none(annotation)


def held_model(annotation: Any) -> Any:
    """The type a location steps into (see bare); None stays None (no such location)."""
    return None if annotation is None else bare(annotation)


def _literal_values(declared: Any) -> list[str]:
    base = bare(declared)
    return [str(value) for value in get_args(base)] if get_origin(base) is Literal else []
