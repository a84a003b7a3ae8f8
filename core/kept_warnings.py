"""The warnings of a batch's first answer as its marker keeps them (decision 0030): a resend of the batch is
answered with them, as the first answer is often the one a timeout lost."""

from __future__ import annotations

from typing import Any, NamedTuple


class KeptWarning(NamedTuple):
    """A warning of a batch's first answer as its marker keeps it: a resend is answered with it."""

    code: str
    path: str
    message: str
    field: str | None = None


# A kept warning as storage keeps it: [code, path, message, field] (its items are a KeptWarning's).
KeptWarningJson = list[Any]


def kept_warnings_json(kept: tuple[KeptWarning, ...] | None) -> list[KeptWarningJson] | None:
    """The warnings as storage keeps them (JSON): [code, path, message, field] each; None: not kept."""
    return None if kept is None else [list(warning) for warning in kept]


def kept_warnings_of(data: list[KeptWarningJson] | None) -> tuple[KeptWarning, ...] | None:
    return None if data is None else tuple(KeptWarning(*warning) for warning in data)
