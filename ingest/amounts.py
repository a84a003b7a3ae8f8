"""Amounts of one currency: exactly its minor-unit places (spec 1) and within the range storage holds,
in a parsed body (`MoneyReader`, `money_problems`) and in the readable parts of a refused one
(`raw_money_problems`), so that a refused batch lists its amount problems with pydantic's own. The
narrowed validator that checks both in pydantic-core is in ingest/one_parse.py.
"""

from __future__ import annotations

import functools
import re
import typing
from typing import Any

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
    (`ingest.one_parse.validated_once`); for a currency of that exponent the reader then only converts (`checked`),
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


def _walk_amounts(raw: Any, model: type, path: str, reader: MoneyReader | None, problems: list[FieldProblem]) -> None:
    if not isinstance(raw, dict):
        return
    fields = amount_fields(model)
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
def amount_fields(model: type) -> tuple[tuple[str, str, type | None], ...]:
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
