"""Request bodies to wire models, and every validation problem to a {path, message} list."""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel, ValidationError

from core import errors
from core.errors import FieldProblem
from core.money import currency_exponent, places_message, places_of
from ingest.wire import BATCH_LIMIT

Model = TypeVar("Model", bound=BaseModel)


def json_path(location: tuple) -> str:
    """('trade_records', 3, 'items', 0, 'unit_price') -> 'trade_records[3].items[0].unit_price'."""
    path = ""
    for part in location:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part == "[key]":
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
        return model.model_validate_json(body)
    except ValidationError as error:
        for item in error.errors(include_url=False, include_input=False):
            if item["type"] == "too_long" and len(item["loc"]) == 1:
                raise errors.batch_too_large(str(item["loc"][0]), BATCH_LIMIT, item["ctx"]["actual_length"]) from None
        raise errors.invalid_payload(problems_of(error)) from None


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


def money_problems(amounts: list[tuple[str, str | None]], currency: str) -> list[FieldProblem]:
    """Each (path, amount) must carry exactly the currency's minor-unit places (spec 1)."""
    exponent = currency_exponent(currency)
    if exponent is None:  # an invalid currency is reported on its own field
        return []
    return [FieldProblem(path, places_message(currency, exponent))
            for path, amount in amounts if amount is not None and places_of(amount) != exponent]
