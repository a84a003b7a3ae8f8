"""msgspec Structs generated field for field from a wire model of plain values and the pydantic dataclasses
it holds (for TradeRecordsBatch: TradeRecord, TradeItem, TradeModifier, Payment, TaxLine), for the one-parse
fast path (ingest/one_parse.py): msgspec decodes a body straight into them (`decode`) in about a fifth of
the time pydantic-core takes.

A batch the fast path confirms therefore holds these Structs where its annotations say the dataclasses:
same names, same order, same defaults, and values of the same types and equal to what pydantic reads
(tests/unit/test_record_structs.py checks the mirror; ingest/data_protection.py walks a Struct by its
dataclass, `WIRE_CLASS_OF`). Each constraint of the wire's annotations becomes a msgspec.Meta, or a check
done afterwards in bulk over the whole batch (`BulkChecks`), as msgspec does some differently:
- Money and decimal strings: their patterns would call Python's `re` per value (+15 ms a batch); checked
  instead by one `re.fullmatch` over each kind's values joined by newlines.
- After-validators (the currency's and batch_id's checks): run once per distinct value.
- Timestamps: msgspec's datetime rounds fractions beyond 6 digits where pydantic truncates (.NET writes 7)
  and takes years the wire's bounds refuse. A Struct reads a timestamp as its text; the bulk checks match
  every one against TIMESTAMP_TEXT at once, then put in its place `datetime.fromisoformat`'s value (which
  truncates), within the wire's bounds. So a confirmed batch's timestamps are datetimes, as the dataclasses
  declare. Other forms pydantic accepts (a comma fraction, unix time) are refused: the slow way answers.
- Patterns end in `\\Z` where pydantic's `$` (a Rust regex) means the end of the text: Python's `$` also
  matches before a final newline.
- Repeated member names: msgspec keeps the last, as every JSON reader does. So that one_parse can tell, a field
  a body leaves out gets its default from a factory that also counts it (`decode` returns the count), and
  the bulk checks know every text field (`BulkChecks.texts`) to count the colons of the strings.
Anything in an annotation the generator does not know raises at build time, never skipped.

Why two readers: docs/decisions/0020-two-readers-of-the-wire-format.md.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import threading
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
import msgspec
from pydantic import AfterValidator, AwareDatetime, BaseModel, StringConstraints
from pydantic.fields import FieldInfo

from ingest.wire.scalars import CONTROL_CHARACTER_PATTERNS, DecimalString, EmptyAsAbsent, Money, StringKind

# A timestamp the fast path reads (RFC 3339 as partners write it: .NET's 7 digits, Java's and JavaScript's
# milliseconds, Java's "12:00Z" without its zero seconds, PHP's +0900), which `datetime.fromisoformat` reads
# as pydantic does: fractions beyond 6 digits truncated, the offset kept (tests/unit/test_record_structs.py).
# Other forms go the slow way.
TIMESTAMP_TEXT = (
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ](?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\.[0-9]{1,9})?)?"
    r"(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):?[0-5][0-9])"
)
# The wire's bounds (ingest/wire/scalars.py Timestamp), which the generator checks are still these.
EARLIEST, BEYOND = dt.datetime(2, 1, 1, tzinfo=dt.UTC), dt.datetime(9999, 1, 1, tzinfo=dt.UTC)


def within_bounds(timestamp: dt.datetime) -> bool:
    """Whether timestamp is within the wire's bounds; by its year alone when that is enough (an aware
    comparison costs 40 times as much)."""
    return 3 <= timestamp.year <= 9997 or EARLIEST <= timestamp < BEYOND


@dataclasses.dataclass
class BulkChecks:
    """What a Struct class leaves to checks over a whole batch: the names of its Money fields, of its other
    decimal strings, of its timestamps (read as text, replaced by their datetimes), of its fields with
    after-validators (with them), and of the fields holding Structs (in a list or not)."""

    money: list[str] = dataclasses.field(default_factory=list)
    decimals: list[str] = dataclasses.field(default_factory=list)
    timestamps: list[str] = dataclasses.field(default_factory=list)
    validated: list[tuple[str, Callable[..., Any]]] = dataclasses.field(default_factory=list)
    held: list[tuple[str, type, bool]] = dataclasses.field(default_factory=list)  # name, Struct, in a list
    texts: list[str] = dataclasses.field(default_factory=list)  # fields of text (not timestamps or amounts)
    empties: list[str] = dataclasses.field(default_factory=list)  # text fields that read "" as absent (None)


# The Struct generated from each wire class, and back; the bulk checks of each Struct class.
WIRE_CLASS_OF: dict[type, type] = {}
BULK_CHECKS: dict[type, BulkChecks] = {}


# msgspec builds a Struct type's decoding information on its first use, without a lock: two threads
# converting into a new Struct type at once crashed the process (SIGSEGV, 12 of 60 runs of 8 threads; the
# chaos run met it when a restarted host took concurrent batches). So the Structs and their decoders (whose
# making builds that information) are made under this lock (tests/unit/test_record_structs.py). Decoding takes
# it too, for the count of the fields left out (`decode`); msgspec holds the GIL while it decodes, so the lock
# costs no parallelism.
_LOCK = threading.Lock()
# One entry per field a decoded body left out, appended by the fields' default factories (`_counted`).
_LEFT_OUT: list[None] = []


def struct_of(wire: type, control_characters: bool = True) -> type[msgspec.Struct]:
    """The Struct of a wire model or pydantic dataclass; with control_characters False, without the
    patterns that refuse only control characters (for a body that holds none: min_length still refuses
    an empty string). Safe to call from any thread."""
    with _LOCK:
        return _struct_of(wire, control_characters)[0]


def decode(wire: type, body: bytes, control_characters: bool = True) -> tuple[msgspec.Struct, int] | None:
    """body (JSON) decoded into the Struct of wire, and the number of fields it left out (each given its
    default), or None when msgspec refuses it: not JSON, not UTF-8, a member the Structs do not know, a value
    of another type or outside a Meta's constraints."""
    with _LOCK:
        decoder = _struct_of(wire, control_characters)[1]
        _LEFT_OUT.clear()
        try:
            return decoder.decode(body), len(_LEFT_OUT)
        except ValueError:  # msgspec.DecodeError and ValidationError, UnicodeDecodeError
            return None


@functools.cache
def _struct_of(wire: type, control_characters: bool) -> tuple[type[msgspec.Struct], msgspec.json.Decoder[Any]]:
    fields: list[tuple[str, Any, Any]]  # name, annotation, FieldInfo or dataclasses.Field
    if isinstance(wire, type) and issubclass(wire, BaseModel):
        # pydantic keeps a model field's annotation without its outer metadata, and that in the FieldInfo
        fields = [(name, info.annotation, info) for name, info in wire.model_fields.items()]
    elif dataclasses.is_dataclass(wire) and hasattr(wire, "__pydantic_fields__"):
        hints = typing.get_type_hints(wire, include_extras=True)
        fields = [(field.name, hints[field.name], field) for field in dataclasses.fields(wire)]
    else:
        raise TypeError(f"{wire!r}: not a wire model or pydantic dataclass")
    checks = BulkChecks()
    struct_fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    for name, annotation, info in fields:
        extra = list(info.metadata) if isinstance(info, FieldInfo) else []  # a model's field
        kind = _struct_type(annotation, extra, name, checks, control_characters)
        default = _default_of(info)
        struct_fields.append((name, kind) if default is _REQUIRED else (name, kind, default))
    struct = msgspec.defstruct(
        wire.__name__, struct_fields, kw_only=True, forbid_unknown_fields=True, gc=False, module=__name__
    )
    WIRE_CLASS_OF[struct] = wire
    BULK_CHECKS[struct] = checks
    return struct, msgspec.json.Decoder(struct)


_REQUIRED = object()
# The default of an optional field that counts it as left out (`decode`): list.append returns None, the
# default, and no Python code runs per field.
_NONE_COUNTED = msgspec.field(default_factory=functools.partial(_LEFT_OUT.append, None))


def _default_of(info: Any) -> Any:
    """A field's default as msgspec takes it, msgspec.field(default_factory=...) that also counts the field as
    left out (`decode`), or _REQUIRED."""
    default, factory = info.default, info.default_factory
    if factory not in (None, dataclasses.MISSING):
        return msgspec.field(default_factory=functools.partial(_counted, factory))
    if default in (dataclasses.MISSING, Ellipsis) or type(default).__name__ == "PydanticUndefinedType":
        return _REQUIRED
    if isinstance(default, FieldInfo):  # a pydantic dataclass's field(default=...) seen through FieldInfo
        return _default_of(default)
    if default is None:
        return _NONE_COUNTED
    if not isinstance(default, (bool, int, str)):  # shared by every Struct: immutable values only
        raise TypeError(f"{default!r}: a default that is not generated")
    return msgspec.field(default_factory=functools.partial(_counted, functools.partial(_same, default)))


def _counted(factory: Callable[[], Any]) -> Any:
    _LEFT_OUT.append(None)
    return factory()


def _same(value: Any) -> Any:
    return value


def _struct_type(
    annotation: Any, metadata: list[Any], name: str, checks: BulkChecks, control: bool, may_be_empty: bool = False
) -> Any:
    """annotation (with the metadata of the levels above it) as a msgspec type; the checks msgspec does not
    make go to checks under the field's name. may_be_empty: a string that may also be "" (read as absent)."""
    if annotation in (Money, DecimalString) and not metadata:  # checked in bulk (see the module's docstring)
        (checks.money if annotation == Money else checks.decimals).append(name)
        return str
    origin = get_origin(annotation)
    if origin is Annotated:
        merged = [*metadata, *annotation.__metadata__]
        return _struct_type(annotation.__origin__, merged, name, checks, control, may_be_empty)
    if annotation is AwareDatetime:
        if _bounds(metadata) != {"ge": EARLIEST, "lt": BEYOND}:
            raise TypeError(f"{name}: a timestamp with other bounds than the wire's")
        checks.timestamps.append(name)
        return str
    if origin in (Union, types.UnionType):
        kinds = [argument for argument in get_args(annotation) if argument is not type(None)]
        empty = [meta for meta in metadata if isinstance(meta, EmptyAsAbsent)]
        if len(kinds) != 1 or _constraints([meta for meta in metadata if not isinstance(meta, EmptyAsAbsent)]):
            raise TypeError(f"{name}: only `X | None` is generated")
        if empty and not empty[0].warned:  # "" read as None by the bulk checks (`BulkChecks.empties`)
            kind = _struct_type(kinds[0], [], name, checks, control, may_be_empty=True)
            checks.empties.append(name)
            return kind | None
        # "" in a field that warns is refused here: the slow way reads it as absent, and warns
        return _struct_type(kinds[0], [], name, checks, control) | None
    if origin is list:
        (element,) = get_args(annotation)
        held = _struct_type(element, [], name, checks, control)
        if checks.texts and checks.texts[-1] == name:  # one_parse counts the colons of text fields, not lists
            raise TypeError(f"{name}: a list of text is not generated")
        if checks.held and checks.held[-1][:2] == (name, held):  # a list of Structs
            checks.held[-1] = (name, held, True)
        return _with_meta(list[held], _lengths(metadata))  # type: ignore[valid-type]
    if isinstance(annotation, type) and hasattr(annotation, "__pydantic_fields__") and not metadata:
        held = _struct_of(annotation, control)[0]
        checks.held.append((name, held, False))
        return held
    if origin is Literal and not _constraints(metadata):  # codes of the spec's, without a colon
        return annotation
    if annotation in (bool, dt.date) and not _constraints(metadata):
        return annotation
    if annotation is int:
        return _with_meta(int, _bounds(metadata))
    if annotation is str:
        checks.texts.append(name)
        return _string_type(metadata, name, checks, control, may_be_empty)
    if may_be_empty:
        raise TypeError(f"{name}: only a string reads an empty string as absent")
    raise TypeError(f"{name}: {annotation!r} is not generated")


def _string_type(metadata: list[Any], name: str, checks: BulkChecks, control: bool, may_be_empty: bool) -> Any:
    constraints = _constraints(metadata)
    validators = [meta.func for meta in metadata if isinstance(meta, AfterValidator)]
    pattern = constraints.pop("pattern", None)
    if validators:
        checks.validated += [(name, validator) for validator in validators]
    only_control = pattern in CONTROL_CHARACTER_PATTERNS  # refuses nothing but control characters
    if may_be_empty:  # "" too, which the bulk checks then read as None
        if validators or constraints.get("min_length") != 1 or (pattern is not None and not pattern.endswith("]+$")):
            raise TypeError(f"{name}: only a string of one character or more (a class repeated) may be empty")
        del constraints["min_length"]
        pattern = None if pattern is None else pattern[:-2] + "*$"
    if pattern is not None and (control or not only_control):
        if not pattern.startswith("^") or not pattern.endswith("$"):
            raise TypeError(f"{name}: a pattern not anchored at both ends")
        constraints["pattern"] = pattern[:-1] + r"\Z"
    elif pattern is not None and constraints.get("min_length", 0) < 1 and not may_be_empty:
        raise TypeError(f"{name}: a control-character pattern without min_length 1")  # the pattern's "+" is lost
    return _with_meta(str, constraints)


def _with_meta(kind: Any, constraints: dict[str, Any]) -> Any:
    return Annotated[kind, msgspec.Meta(**constraints)] if constraints else kind


def decimal_pattern() -> str:
    """The pattern of DecimalString (and of Money, which the fast path narrows to the store's places)."""
    pattern = next(meta.pattern for meta in get_args(DecimalString)[1:] if isinstance(meta, StringConstraints))
    assert isinstance(pattern, str)
    return pattern


# The metadata the generator reads; any other raises. Descriptions, examples and StringKind are the
# document's and data protection's, not constraints.
_BOUNDS = {annotated_types.Ge: "ge", annotated_types.Le: "le", annotated_types.Lt: "lt", annotated_types.Gt: "gt"}
_LENGTHS = {annotated_types.MinLen: "min_length", annotated_types.MaxLen: "max_length"}
# Field's arguments: the document's, or constraints (which pydantic also puts in its metadata, read here).
_FIELD_ARGUMENTS = {"description", "examples", "json_schema_extra", "title", *_BOUNDS.values(), *_LENGTHS.values()}


def _constraints(metadata: list[Any]) -> dict[str, Any]:
    """min_length, max_length, pattern, ge, gt, le, lt of the metadata (pydantic's forms of them)."""
    found: dict[str, Any] = {}
    for meta in metadata:
        if isinstance(meta, StringConstraints):
            found.update(_string_constraints(meta))
        elif isinstance(meta, FieldInfo):
            for key in meta._attributes_set:
                if key not in _FIELD_ARGUMENTS:
                    raise TypeError(f"Field({key}=...) is not generated")
            found.update(_constraints(meta.metadata))
        elif type(meta) in _BOUNDS:
            key = _BOUNDS[type(meta)]
            found[key] = getattr(meta, key)
        elif type(meta) in _LENGTHS:
            key = _LENGTHS[type(meta)]
            found[key] = getattr(meta, key)
        elif not isinstance(meta, (StringKind, AfterValidator)):
            raise TypeError(f"{meta!r} is not generated")
    return found


def _string_constraints(meta: StringConstraints) -> dict[str, Any]:
    known = {"min_length", "max_length", "pattern"}
    for key, value in dataclasses.asdict(meta).items():
        if key not in known and value is not None:
            raise TypeError(f"StringConstraints({key}=...) is not generated")
    return {key: getattr(meta, key) for key in known if getattr(meta, key) is not None}


def _bounds(metadata: list[Any]) -> dict[str, Any]:
    found = _constraints(metadata)
    if set(found) - {"ge", "gt", "le", "lt"}:
        raise TypeError(f"{found}: not bounds")
    return found


def _lengths(metadata: list[Any]) -> dict[str, Any]:
    found = _constraints(metadata)
    if set(found) - {"min_length", "max_length"}:
        raise TypeError(f"{found}: not lengths")
    return found
