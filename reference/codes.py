"""The standard code lists: one JSON data file per code type, each with its version date.

Editing a list means editing its file and bumping its "version"; partners compare that version
with the one they stored to notice changes (spec 4.3, 9).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NotRequired, TypedDict

DATA_DIR = Path(__file__).resolve().parent / "data"

TRANSACTION_TYPES = "transaction-types"
# The code types served by GET /reference/{code_type}; transaction-types has its own route.
CODE_TYPES = ("order-types", "order-sources", "payment-methods", "payment-types", "tax-categories")


class CodeEntry(TypedDict):
    """An entry of a code list's data file."""

    code: str
    name: dict[str, str]  # by language
    direction: NotRequired[int]  # payment-types only (HQ-internal): +1, -1 or 0
    is_revenue: NotRequired[bool]  # transaction-types only, as the next two
    amount_sign: NotRequired[int | None]
    description: NotRequired[str]


EntryField = Literal["code", "name", "direction", "is_revenue", "amount_sign", "description"]

# Fields of each entry that partners see; anything else in a data file is HQ-internal
# (for example the direction of a payment type).
_PUBLIC_FIELDS: dict[str, tuple[EntryField, ...]] = {
    TRANSACTION_TYPES: ("code", "name", "is_revenue", "amount_sign", "description"),
}
_DEFAULT_PUBLIC_FIELDS: tuple[EntryField, ...] = ("code", "name")


class CodeListView(TypedDict):
    """A code list as GET /reference/... answers it: its version and each entry's public fields."""

    version: str
    data: list[dict[str, object]]


@dataclass(frozen=True)
class CodeList:
    code_type: str
    version: str
    entries: tuple[CodeEntry, ...]

    @functools.cached_property
    def codes(self) -> tuple[str, ...]:
        return tuple(entry["code"] for entry in self.entries)

    @functools.cached_property
    def by_code(self) -> dict[str, CodeEntry]:
        return {entry["code"]: entry for entry in self.entries}

    def public_view(self) -> CodeListView:
        fields = _PUBLIC_FIELDS.get(self.code_type, _DEFAULT_PUBLIC_FIELDS)
        return {
            "version": self.version,
            "data": [{field: entry[field] for field in fields} for entry in self.entries],
        }


@functools.cache
def code_list(code_type: str) -> CodeList:
    """The code list of `code_type`; KeyError when there is no such list."""
    if code_type not in CODE_TYPES and code_type != TRANSACTION_TYPES:
        raise KeyError(code_type)
    document = json.loads((DATA_DIR / f"{code_type}.json").read_text(encoding="utf-8"))
    return CodeList(code_type, document["version"], tuple(document["data"]))


def standard_transaction_type(code: str) -> CodeEntry | None:
    return code_list(TRANSACTION_TYPES).by_code.get(code)


def payment_directions_in_effect(partner_directions: dict[str, int]) -> dict[str, int]:
    """+1, -1 or 0 (not counted) per payment_type: the suggested list's directions, overridden or extended
    by the partner's own (`hq payment-type set`). A payment_type in neither has no direction yet."""
    suggested = {entry["code"]: entry["direction"] for entry in code_list("payment-types").entries}
    return {**suggested, **partner_directions}
