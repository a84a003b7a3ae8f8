"""Optional fields sent as "" where the answer warns (decision 0018): a value of a given form (a timestamp, an
amount, a listed code, card_last4) sent as "" is read as absent (ingest/wire/scalars.py EmptyAsAbsent), and
the answer says so at the record, as the partner's export likely writes "" where it meant a value. Free
strings and codes read "" as absent without a word."""

from __future__ import annotations

import functools
from typing import Any

from ingest.batches import EMPTY_VALUE_READ_AS_ABSENT, MAX_UNKNOWN_MEMBER_WARNINGS, record_location
from ingest.parsing import json_path, member_fields, raw_object
from ingest.problem_words import Location, hints
from ingest.wire.responses import BatchWarning
from ingest.wire.scalars import EmptyAsAbsent


def warned_empty_values(model: type, body: bytes) -> list[Location]:
    """The location of each member of a valid body (read as `model`) sent as "" in a field that reads it
    as absent with a warning (ingest/wire/scalars.py EmptyAsAbsent), in the order of the body. A body
    without two quotes in a row has none, and is not read again."""
    if b'""' not in body:
        return []
    found: list[Location] = []
    _walk_empty_values(raw_object(body), model, (), found)
    return found


def _walk_empty_values(raw: Any, model: type, location: Location, found: list[Location]) -> None:
    if not isinstance(raw, dict):
        return
    fields, warned = member_fields(model), _warned_when_empty(model)
    for name, value in raw.items():
        if value == "" and name in warned:
            found.append((*location, name))
        elif (held := fields.get(name)) is not None:
            if isinstance(value, list):
                for index, entry in enumerate(value):
                    _walk_empty_values(entry, held, (*location, name, index), found)
            else:
                _walk_empty_values(value, held, (*location, name), found)


@functools.cache
def _warned_when_empty(model: type) -> frozenset[str]:
    """The fields of model that read "" as absent with a warning."""
    return frozenset(
        name
        for name, annotation in hints(model).items()
        if any(isinstance(meta, EmptyAsAbsent) and meta.warned for meta in getattr(annotation, "__metadata__", ()))
    )


def empty_value_warnings(locations: list[Location]) -> list[BatchWarning]:
    """EMPTY_VALUE_READ_AS_ABSENT for each member location (ingest/parsing.py `warned_empty_values`), at most
    MAX_UNKNOWN_MEMBER_WARNINGS of them, then one that counts the others: an export that writes "" for a
    missing timestamp writes it in every record."""
    warnings = []
    for location in locations[:MAX_UNKNOWN_MEMBER_WARNINGS]:
        path, inside = record_location(location)
        field = json_path((*inside, location[-1]))
        warnings.append(
            BatchWarning(
                EMPTY_VALUE_READ_AS_ABSENT,
                path,
                f'{location[-1]} was sent as an empty string (""), which is not a value of its form; it was read '
                "as absent, as if omitted. Send null or leave the member out when there is no value.",
                field=field,
            )
        )
    if len(locations) > MAX_UNKNOWN_MEMBER_WARNINGS:
        warnings.append(
            BatchWarning(
                EMPTY_VALUE_READ_AS_ABSENT,
                "$",
                f"{len(locations) - MAX_UNKNOWN_MEMBER_WARNINGS} more values sent as empty strings were read as "
                f"absent; only the first {MAX_UNKNOWN_MEMBER_WARNINGS} are listed",
            )
        )
    return warnings
