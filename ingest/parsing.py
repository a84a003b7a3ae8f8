"""Request bodies to wire models, and every validation problem to a {path, message} list.

A body must be I-JSON (RFC 7493) as well as valid for its model: UTF-8, no member name twice in an
object, no NaN or Infinity, numbers within the range of a double. A partner's batch must mean one
thing: with a duplicate name, JSON parsers disagree on which value counts (most keep the last, some the
first), so the partner's own parser and ours could read two different batches under one batch_id.
"""

from __future__ import annotations

import json
import math
import re
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from core import errors
from core.errors import FieldProblem
from core.money import currency_exponent, format_minor_units, minor_units, places_message
from ingest.wire import BATCH_LIMIT, MAX_SAFE_INT

Model = TypeVar("Model", bound=BaseModel)


# Object keys sent by the partner (language tags of names) appear in paths only when they look like an
# attempt at a language tag; anything else (a card number, an e-mail address, a long or odd string) is
# not echoed, and the path stops at the object. Field names always pass.
_PLAIN_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9 _.-]{0,34}$")


def json_path(location: tuple) -> str:
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


def problems_of(error: ValidationError) -> list[FieldProblem]:
    return [FieldProblem(json_path(item["loc"]), item["msg"])
            for item in error.errors(include_url=False, include_input=False, include_context=False)]


def parse(model: type[Model], body: bytes) -> Model:
    """Validate the whole body; 400 BATCH_TOO_LARGE if a batch list is over its limit, else
    400 INVALID_PAYLOAD listing every problem found."""
    try:
        parsed = model.model_validate_json(body)
    except ValidationError as error:
        for item in error.errors(include_url=False, include_input=False):
            if item["type"] == "too_long" and len(item["loc"]) == 1:
                raise errors.batch_too_large(str(item["loc"][0]), BATCH_LIMIT, item["ctx"]["actual_length"]) from None
        raise errors.invalid_payload(problems_of(error)) from None
    # The model's parser has checked the syntax, UTF-8 and the nesting depth (at most 200 levels), and
    # keeps the last of two equal names; this second pass refuses what it lets through. It runs only on
    # bodies that are otherwise valid, and builds no values (the hooks return None).
    problem = i_json_problem(body)
    if problem:
        raise errors.invalid_payload([FieldProblem("$", problem)])
    return parsed


class _NotIJson(ValueError):
    pass


def _object(pairs: list) -> None:
    # dict() drops repeated names in C, so no Python loop over the pairs; returning None builds no objects.
    if len(pairs) > 1 and len(dict(pairs)) != len(pairs):
        raise _NotIJson("an object has the same member name twice; send each name once")


def _number(text: str) -> None:
    if math.isinf(float(text)):
        raise _NotIJson("a number is beyond the range of a double (I-JSON, RFC 7493)")


def _constant(name: str) -> None:
    raise _NotIJson("NaN and Infinity are not JSON numbers")


def i_json_problem(body: bytes) -> str | None:
    """Why a syntactically valid JSON body is not I-JSON, or None. Checks the whole body, fields the
    models ignore included."""
    try:
        json.loads(body.decode("utf-8"), object_pairs_hook=_object, parse_float=_number, parse_int=_number,
                   parse_constant=_constant)
    except _NotIJson as problem:
        return str(problem)
    except RecursionError:
        return "the body is nested too deeply"
    except ValueError:  # UnicodeDecodeError, JSONDecodeError: the model's parser refuses those first
        return "the body is not valid JSON"
    return None


def duplicates(values: list, path_of) -> list[FieldProblem]:
    """A problem for every repeat of a value that must be unique within the request."""
    seen: dict = {}
    found = []
    for index, value in enumerate(values):
        if value in seen:
            found.append(FieldProblem(path_of(index), f"duplicate of {path_of(seen[value])}"))
        else:
            seen[value] = index
    return found


def raise_if_any(problems: list[FieldProblem]) -> None:
    if problems:
        raise errors.invalid_payload(problems)


class MoneyReader:
    """Reads amounts of one currency into integer minor units, and notes a problem for each amount that
    does not carry exactly the currency's minor-unit places (spec 1) or whose minor units are beyond an
    exact integer of I-JSON (2**53 - 1): they are stored as integers, which SQLite holds in 64 bits and
    Cosmos DB as doubles. That is 90 trillion dollars, but a 15-digit amount in a 4-place currency (CLF)
    overflowed SQLite (a 500) before this check.

    An amount with a problem reads as 0, so that sums built from it add no second problem."""

    def __init__(self, currency: str):
        self.currency = currency
        self.exponent = currency_exponent(currency)  # None: an invalid currency, reported on its own field
        self.problems: list[FieldProblem] = []

    def read(self, amount: str | None, path: str, name: str | None = None) -> int:
        """The minor units of amount (0 when None); its path is `path`, or `path.name` (only built for a
        problem: most amounts have none)."""
        if amount is None or self.exponent is None:
            return 0
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
