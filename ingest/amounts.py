"""Amounts of one currency: exactly its minor-unit places (spec 1) and within the range storage holds,
in a parsed body (`MoneyReader`, `money_problems`) and in the readable parts of a refused one
(`raw_money_problems`), so that a refused batch lists its amount problems with pydantic's own; and a
validator that checks both in pydantic-core for one exponent (`exact_money_validator`), so that a batch in
its store's currency needs no Python per amount.
"""

from __future__ import annotations

import functools
import re
import typing
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import SchemaValidator

from core.errors import FieldProblem
from core.money import currency_exponent, format_minor_units, minor_units, places_message
from ingest.problem_words import declared_type, field_names, held_model, hints, is_model, without_none
from ingest.wire.scalars import MAX_SAFE_INT, Money


class MoneyReader:
    """Reads amounts of one currency into integer minor units, and notes a problem for each amount that
    does not carry exactly the currency's minor-unit places (spec 1) or whose minor units are beyond an
    exact integer of I-JSON (2**53 - 1): they are stored as integers, which SQLite holds in 64 bits and
    Cosmos DB as doubles. That is 90 trillion dollars, but a 15-digit amount in a 4-place currency (CLF)
    overflowed SQLite (a 500) before this check.

    An amount with a problem reads as 0, so that sums built from it add no second problem.

    checked_exponent: the places and range of the amounts were checked in pydantic-core for this exponent
    (`validated_exact_money`); for a currency of that exponent the reader then only converts (`checked`),
    and the amounts read only to be checked are skipped."""

    def __init__(self, currency: str, checked_exponent: int | None = None):
        self.currency = currency
        self.exponent = currency_exponent(currency)  # None: an invalid currency, reported on its own field
        self.checked = self.exponent is not None and self.exponent == checked_exponent
        self.problems: list[FieldProblem] = []

    def read(self, amount: str | None, path: str, name: str | None = None) -> int:
        """The minor units of amount (0 when None); its path is `path`, or `path.name` (only built for a
        problem: most amounts have none)."""
        if amount is None or self.exponent is None:
            return 0
        if self.checked:
            return int(amount.replace(".", "")) if self.exponent else int(amount)
        minor = minor_units(amount, self.exponent)
        if minor is None:
            self.problem(path, name, places_message(self.currency, self.exponent))
        elif abs(minor) > MAX_SAFE_INT:
            self.problem(path, name, f"must be at most {self.largest()} in absolute value")
        else:
            return minor
        return 0

    def largest(self) -> str:
        return f"{format_minor_units(MAX_SAFE_INT, self.exponent or 0)} {self.currency}"

    def problem(self, path: str, name: str | None, message: str) -> None:
        self.problems.append(FieldProblem(path if name is None else f"{path}.{name}", message))


def money_problems(amounts: list[tuple[str, str | None]], currency: str) -> list[FieldProblem]:
    """The problems of each (path, amount) of one currency (see MoneyReader)."""
    reader = MoneyReader(currency)
    for path, amount in amounts:
        reader.read(amount, path)
    return reader.problems


# --- amounts of a refused body --------------------------------------------------------------------

_DECIMAL = re.compile(next(meta.pattern for meta in typing.get_args(Money)[1:] if getattr(meta, "pattern", None)))


def raw_money_problems(raw: Any, model: type, path: str) -> list[FieldProblem]:
    """Places and range (MoneyReader) of every amount of a refused body's part `raw`, read as `model`,
    that is a decimal string, in each object whose currency is a valid code. Amounts pydantic refused
    (not decimal strings) and those of an invalid currency are left to pydantic's own problems."""
    problems: list[FieldProblem] = []
    _walk_amounts(raw, model, path, None, problems)
    return problems


def _walk_amounts(raw: Any, model: type, path: str, reader: MoneyReader | None, problems: list) -> None:
    if not isinstance(raw, dict):
        return
    fields = _amount_fields(model)
    if "currency" in hints(model):
        currency = raw.get("currency")
        reader = None
        if isinstance(currency, str) and currency_exponent(currency) is not None:
            reader = MoneyReader(currency)
            reader.problems = problems  # one list for the object and the parts it holds
    for name, kind, inner in fields:
        value = raw.get(name)
        at = f"{path}.{name}" if path else name
        if kind == "amount":
            if reader is not None and isinstance(value, str) and _DECIMAL.match(value):
                reader.read(value, at)
        elif inner is None:
            continue  # not reached: "object" and "list" fields name the model they hold
        elif kind == "object":
            _walk_amounts(value, inner, at, reader, problems)
        elif isinstance(value, list):
            for index, entry in enumerate(value):
                _walk_amounts(entry, inner, f"{at}[{index}]", reader, problems)


@functools.cache
def _amount_fields(model: type) -> tuple[tuple[str, str, type | None], ...]:
    """(name, "amount" | "object" | "list", model held) of the fields of model that are amounts or hold
    models."""
    found = []
    for name in field_names(model):
        held = declared_type(model, (name,))
        if without_none(held) == Money:
            found.append((name, "amount", None))
        elif is_model(inner := held_model(held)):
            found.append((name, "object", inner))
        elif is_model(inner := held_model(declared_type(model, (name, 0)))):
            found.append((name, "list", inner))
    return tuple(found)


# --- the places and range in pydantic-core --------------------------------------------------------
# Money accepts any decimal string: the places depend on the currency, which the model cannot see while it
# reads an amount. For one exponent, the same core schema with each Money field's pattern narrowed to
# exactly those places and at most 15 digits (below 2**53 - 1, so the range holds too) checks them in Rust.
# It only ever confirms: a body it refuses is validated again by the wire model, whose problems are the
# answer, so every 400 stays the wire model's.


def exact_money_pattern(exponent: int) -> str:
    """A Money string with exactly `exponent` places and at most 15 digits."""
    if exponent == 0:
        return r"^-?[0-9]{1,15}$"
    return rf"^-?[0-9]{{1,{15 - exponent}}}\.[0-9]{{{exponent}}}$"


Model = TypeVar("Model", bound=BaseModel)


def validated_exact_money(model: type[Model], body: bytes, exponent: int) -> Model | None:
    """body validated as model with every amount at exactly `exponent` places and at most 15 digits, or
    None when anything is refused (the model's own validation then says why)."""
    try:
        fields, _extra, fields_set = _exact_money_validator(model, exponent).validate_json(body)
    except ValidationError:
        return None
    return model.model_construct(fields_set, **fields)


@functools.cache
def _exact_money_validator(model: type[BaseModel], exponent: int) -> SchemaValidator:
    # pydantic-core reuses a class's own validator for a model or dataclass met in a schema ("prebuilt"),
    # which would drop the narrowed patterns: the root is the model's fields (the caller builds the model
    # from them), and each dataclass is marked as its own generic origin, which turns that reuse off.
    schema = model.__pydantic_core_schema__
    if schema["type"] != "model" or any(kind == "amount" for _, kind, _ in _amount_fields(model)):
        raise TypeError(f"{model.__name__}: only amounts of the dataclasses a model holds are narrowed")
    return SchemaValidator(_narrowed(schema["schema"], exact_money_pattern(exponent)), schema.get("config"))


def _narrowed(schema: Any, pattern: str) -> Any:
    """A copy of a core schema in which the Money fields of every dataclass (found by their declared
    type, as `raw_money_problems` finds them) have `pattern`."""
    if isinstance(schema, list):
        return [_narrowed(part, pattern) for part in schema]
    if not isinstance(schema, dict):
        return schema
    copy = {key: _narrowed(value, pattern) for key, value in schema.items()}
    if copy.get("type") == "model":  # its prebuilt validator would be used, with amounts not narrowed
        raise TypeError(f"{copy['cls'].__name__}: a model inside a model is not narrowed")
    if copy.get("type") == "dataclass":
        amounts = {name for name, kind, _ in _amount_fields(copy["cls"]) if kind == "amount"}
        arguments = copy["schema"]
        arguments["fields"] = [
            _with_pattern(field, pattern) if field["name"] in amounts else field for field in arguments["fields"]
        ]
        copy["generic_origin"] = copy["cls"]
    return copy


def _with_pattern(schema: dict, pattern: str) -> dict:
    """schema (a field, possibly optional or with a default) with its string's pattern replaced."""
    if schema.get("type") == "str":
        return {**schema, "pattern": pattern}
    return {key: _with_pattern(value, pattern) if key == "schema" else value for key, value in schema.items()}
