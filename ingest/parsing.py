"""Request bodies to wire models, and every validation problem to a {path, message} list.

A body must be I-JSON (RFC 7493) as well as valid for its model: UTF-8, no member name twice in an
object, no NaN or Infinity, numbers within the range of a double. A partner's batch must mean one
thing: with a duplicate name, JSON parsers disagree on which value counts (most keep the last, some the
first), so the partner's own parser and ours could read two different batches under one batch_id.

Why two readers (this one, and ingest/one_parse.py's): docs/decisions/0020-two-readers-of-the-wire-format.md.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from core import errors
from core.errors import FieldProblem
from core.stored_json import JsonObject
from ingest.problem_words import Location, declared_type, field_names, held_model, is_model, words
from ingest.wire.scalars import BATCH_LIMIT, EMPTY_BRANCH, VALUE_BRANCH

Model = TypeVar("Model", bound=BaseModel)


# Object keys sent by the partner (language tags of names) appear in paths only when they look like an
# attempt at a language tag; anything else (a card number, an e-mail address, a long or odd string) is
# not echoed, and the path stops at the object. Field names always pass.
_PLAIN_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9 _.-]{0,34}$")


def json_path(location: Location) -> str:
    """('trade_records', 3, 'items', 0, 'unit_price') -> 'trade_records[3].items[0].unit_price'."""
    path = ""
    for part in location:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part == "[key]" or not _PLAIN_KEY.match(str(part)):
            continue
        else:
            path += f".{part}" if path else str(part)
    return path or "$"


def problems_of(error: ValidationError, model: type[BaseModel]) -> list[FieldProblem]:
    """Pydantic's errors in a partner's words (ingest/problem_words.py); the input is read for its JSON
    type only, never quoted."""
    return [
        FieldProblem(json_path(item["loc"]), words(item, model))
        for item in untagged(error.errors(include_url=False, include_input=True, include_context=True))
    ]


def untagged(items: list[ErrorDetails]) -> list[ErrorDetails]:
    """pydantic's errors without those of the "" branch of an optional field (ingest/wire/scalars.py
    EmptyAsAbsent: a value that is not "" is refused by its own type alone), and without the tag of the
    value's branch in their locations."""
    return [
        {**item, "loc": tuple(part for part in item["loc"] if part != VALUE_BRANCH)}
        for item in items
        if EMPTY_BRANCH not in item["loc"]
    ]


# The checks a use case can still run on a body its model refused, on the parts that are readable (see
# `Refused`); they return their problems, which the 400 lists beside pydantic's.
Salvage = Callable[["Refused"], list[FieldProblem]]


def parse(model: type[Model], body: bytes, salvage: Salvage | None = None) -> tuple[Model, list[Location]]:
    """Validate the whole body; 400 BATCH_TOO_LARGE if a batch list is over its limit, else
    400 INVALID_PAYLOAD listing every problem found: pydantic's, and those `salvage` finds in the parts
    of the body that can be read. A valid body costs nothing more: the salvage runs on refusals only.
    (A valid batch of trade records is mostly read with one parse instead: ingest/one_parse.py.)

    Returns the model and the locations of the members it ignored because no model knows their name
    (`unknown_members`), for the use case's warnings."""
    try:
        parsed = model.model_validate_json(body)
    except ValidationError as error:
        for item in error.errors(include_url=False, include_input=False):
            if item["type"] == "too_long" and len(item["loc"]) == 1:
                raise errors.batch_too_large(str(item["loc"][0]), BATCH_LIMIT, item["ctx"]["actual_length"]) from None
        raise errors.invalid_payload(_refusal_problems(model, body, error, salvage)) from None
    # The model's parser has checked the syntax, UTF-8 and the nesting depth (at most 200 levels), and
    # keeps the last of two equal names; this second pass refuses what it lets through. It runs only on
    # bodies that are otherwise valid, and builds no values (the hooks return None). The same pass tells
    # whether an object has a member name that no model of the body knows; only then is the body walked
    # again to locate it.
    problem, unknown_names = i_json_and_names(model, body)
    if problem:
        raise errors.invalid_payload([FieldProblem("$", problem)])
    return parsed, (unknown_members(model, raw_object(body)) if unknown_names else [])


def _refusal_problems(
    model: type[BaseModel], body: bytes, error: ValidationError, salvage: Salvage | None
) -> list[FieldProblem]:
    problems = problems_of(error, model)
    raw = raw_object(body)
    if raw is None:  # not JSON, or not an object: pydantic's one problem at $ says it all
        return problems
    if salvage is not None:
        problems += salvage(Refused(raw, [item["loc"] for item in untagged(error.errors(include_url=False))]))
    # Repeated names only: pydantic already reports a NaN or an out-of-range number read by a field (at
    # that field), and the same number twice would be one problem told twice.
    if problem := i_json_problem(body, numbers=False):
        problems.append(FieldProblem("$", problem))
    return in_document_order(problems, raw)


def raw_object(body: bytes) -> JsonObject | None:
    """The body as plain JSON values when it is a JSON object, else None (only read on refusals)."""
    try:
        raw = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return raw if isinstance(raw, dict) else None


@dataclass
class Refused:
    """A body its model refused: the raw JSON object, and the locations of pydantic's problems. An entry
    of a list with no problem in it is valid on its own, and is built as its model for the use case's own
    checks; the other entries can still have their readable parts checked."""

    raw: JsonObject
    locations: list[Location]

    def __post_init__(self) -> None:
        # Every location and the places that hold it: a refused 500-record batch can have thousands.
        self._failed = {found[:length] for found in self.locations for length in range(len(found) + 1)}

    def failed(self, *location: int | str) -> bool:
        """Whether pydantic found a problem at location or inside it."""
        return location in self._failed

    def entries(self, name: str) -> list[Any]:
        value = self.raw.get(name)
        return value if isinstance(value, list) else []

    def readable_values(self, name: str, member: str, kind: type = str) -> list[Any]:
        """The member of each entry of the list `name`, as `readable` makes it (for `duplicates`)."""
        return [
            readable(entry.get(member), kind) if isinstance(entry, dict) else object() for entry in self.entries(name)
        ]

    def valid_entries(self, name: str, kind: type) -> Iterator[tuple[int, Any]]:
        """(index, model) of each entry of the list `name` that has no problem."""
        adapter = _adapter(kind)
        for index, entry in enumerate(self.entries(name)):
            if not self.failed(name, index):
                try:  # through JSON text, so that it is validated exactly as in the body
                    yield index, adapter.validate_json(json.dumps(entry))
                except (ValidationError, ValueError):
                    continue

    def refused_entries(self, name: str) -> Iterator[tuple[int, JsonObject]]:
        """(index, raw object) of each entry of the list `name` that has a problem and is an object."""
        for index, entry in enumerate(self.entries(name)):
            if isinstance(entry, dict) and self.failed(name, index):
                yield index, entry


@functools.cache
def _adapter(kind: type) -> TypeAdapter[Any]:
    return TypeAdapter(kind)


def readable(value: Any, kind: type = str) -> Any:
    """value, when it is of kind (a non-empty string by default) and so can be compared with others; else
    a fresh object that equals nothing, so that `duplicates` skips what cannot be read."""
    if isinstance(value, kind) and not isinstance(value, bool) and value != "":
        return value
    return object()


# --- problems in the order of the document --------------------------------------------------------

_STEP = re.compile(r"\[(\d+)\]|\.?([^.\[]+)")


def in_document_order(problems: list[FieldProblem], raw: JsonObject | None) -> list[FieldProblem]:
    """The problems without repeats, in the order their places have in the body as sent (members in the
    order written, list entries by index; a missing member after those present, in the model's order)."""
    unique = list(dict.fromkeys(problems))
    if raw is None:
        return unique
    orders: dict[int, dict[str, int]] = {}  # the members' places of each object met, by id
    return sorted(unique, key=lambda problem: _position(raw, problem.path, orders))


def _position(raw: Any, path: str, orders: dict[int, dict[str, int]]) -> tuple[int, ...]:
    if path == "$":
        return ()
    position = []
    node = raw
    for index, name in _STEP.findall(path):
        if index:
            step = int(index)
            node = node[step] if isinstance(node, list) and step < len(node) else None
        elif isinstance(node, dict):
            order = orders.get(id(node))
            if order is None:
                order = orders[id(node)] = {member: place for place, member in enumerate(node)}
            step = order.get(name, len(order))
            node = node.get(name)
        else:
            step, node = 0, None
        position.append(step)
    return tuple(position)


class _NotIJson(ValueError):
    pass


_REPEATED_NAME = "an object has the same member name twice; send each name once"


def _object(pairs: list[tuple[str, Any]]) -> None:
    # dict() drops repeated names in C, so no Python loop over the pairs; returning None builds no objects.
    if len(pairs) > 1 and len(dict(pairs)) != len(pairs):
        raise _NotIJson(_REPEATED_NAME)


class _NameCheck:
    """The object hook of a valid body's I-JSON pass: refuses a repeated name, as `_object` does, and
    notes whether some object has a name that no model of the body knows (`found`). Per object, one
    comparison of its names with a frozenset, in C. An object none of whose names is known and whose
    values are all strings is taken for a localized text (names by language tag), not noted: every
    model has a required member, so an object of a model always has a known name."""

    __slots__ = ("known", "found")

    def __init__(self, known: frozenset[str]) -> None:
        self.known = known
        self.found = False

    def __call__(self, pairs: list[tuple[str, Any]]) -> None:
        names = dict(pairs)
        if len(names) != len(pairs):
            raise _NotIJson(_REPEATED_NAME)
        if self.found or names.keys() <= self.known:
            return
        if names.keys().isdisjoint(self.known) and all(type(value) is str for value in names.values()):
            return
        self.found = True


def _number(text: str) -> None:
    if math.isinf(float(text)):
        raise _NotIJson("a number is beyond the range of a double (I-JSON, RFC 7493)")


def _constant(name: str) -> None:
    raise _NotIJson("NaN and Infinity are not JSON numbers")


def i_json_problem(body: bytes, numbers: bool = True) -> str | None:
    """Why a syntactically valid JSON body is not I-JSON, or None. Checks the whole body, fields the
    models ignore included; the numbers too unless numbers is False (then only repeated names)."""
    return _i_json_pass(body, numbers, _object)


def i_json_and_names(model: type, body: bytes) -> tuple[str | None, bool]:
    """What `i_json_problem` says of a body valid for model, and whether one of its objects has a member
    name that no model of the body knows (see `_NameCheck`)."""
    names = _NameCheck(member_names(model))
    return _i_json_pass(body, True, names), names.found


def _i_json_pass(body: bytes, numbers: bool, object_hook: Callable[[list[tuple[str, Any]]], None]) -> str | None:
    try:  # a hook of None is json's default
        json.loads(
            body.decode("utf-8"),
            object_pairs_hook=object_hook,
            parse_float=_number if numbers else None,
            parse_int=_number if numbers else None,
            parse_constant=_constant if numbers else None,
        )
    except _NotIJson as problem:
        return str(problem)
    except RecursionError:
        return "the body is nested too deeply"
    except ValueError:  # UnicodeDecodeError, JSONDecodeError: the model's parser refuses those first
        return "the body is not valid JSON"
    return None


# --- members the models do not know ----------------------------------------------------------------
# The models ignore a member they do not know (a partner on a later minor version may send more), so a
# misspelled optional field ("tip_amout") would lose its value without a word: the use cases warn.


def unknown_members(model: type, raw: Any) -> list[Location]:
    """The location of each member of raw (the body read as `model`) whose name no model of the body
    knows, in the order of the body: ("trade_records", 3, "items", 0, "tip_amout"). Localized texts hold
    language tags, not members, and members not known are not looked into.

    A name known to another model of the body (`amount` in a record) is not reported: the check that
    finds names cheaply (`i_json_and_names`) cannot tell it, and the same body must always get the same
    warnings, whatever else it holds."""
    found: list[Location] = []
    _walk_members(raw, model, (), member_names(model), found)
    return found


def _walk_members(raw: Any, model: type, location: Location, known: frozenset[str], found: list[Location]) -> None:
    if not isinstance(raw, dict):
        return
    fields = member_fields(model)
    for name, value in raw.items():
        if name not in fields:
            if name not in known:
                found.append((*location, name))
        elif (held := fields[name]) is not None:
            if isinstance(value, list):
                for index, entry in enumerate(value):
                    _walk_members(entry, held, (*location, name, index), known, found)
            else:
                _walk_members(value, held, (*location, name), known, found)


@functools.cache
def member_fields(model: type) -> dict[str, type | None]:
    """Each member name of model, with the model it holds (alone or in a list), or None."""
    fields = {}
    for name in field_names(model):
        held = held_model(declared_type(model, (name,)))
        if not is_model(held):
            held = held_model(declared_type(model, (name, 0)))
        fields[name] = held if is_model(held) else None
    return fields


@functools.cache
def member_names(model: type) -> frozenset[str]:
    """Every member name of model and of the models it holds, at any depth."""
    names = set()
    for name, held in member_fields(model).items():
        names.add(name)
        if held is not None:
            names |= member_names(held)
    return frozenset(names)


def list_member(raw: JsonObject, name: str) -> list[Any]:
    """raw[name] if it is an array, else an empty list: a refused body's members may be anything."""
    value = raw.get(name)
    return value if isinstance(value, list) else []


def duplicates(values: list[Any], array: str, field: str) -> list[FieldProblem]:
    """A problem for every repeat of a value that must be unique within the request: values[i] is the
    `field` of element i of the request's `array` (both paths as the problem names them)."""

    if len(set(values)) == len(values):  # the usual case, told by one set
        return []

    def path_of(index: int) -> str:
        return f"{array}[{index}].{field}"

    seen: dict[Any, int] = {}
    found = []
    for index, value in enumerate(values):
        if value in seen:
            found.append(FieldProblem(path_of(index), f"duplicate of {path_of(seen[value])}"))
        else:
            seen[value] = index
    return found


def raise_if_any(problems: list[FieldProblem], body: bytes | None = None) -> None:
    """400 INVALID_PAYLOAD listing problems, if any; in the body's order when the body is given."""
    if problems:
        raise errors.invalid_payload(problems if body is None else in_document_order(problems, raw_object(body)))
