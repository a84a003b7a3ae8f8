"""Reading `hq`'s argument values that argparse takes as plain text: batch ids, dates, payment types.

A value that does not read is refused like any refusal (AdminError, exit 1), naming the argument.
"""

from __future__ import annotations

import argparse
import datetime as dt
import uuid
from typing import TypeAlias

from core.ports import AdminError

# What each command group's `add_group` is given: argparse's subcommands action (argparse names no public
# type for it, so the alias is text, read only by the type checker).
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def batch_id(text: str) -> str:
    """Batch ids are UUIDs, stored in their canonical form (lower case, with hyphens)."""
    try:
        return str(uuid.UUID(text))
    except ValueError:
        raise AdminError(f"batch id {text!r} is not a UUID (the batch_id the partner sent)") from None


def business_date(text: str, what: str = "business date") -> dt.date:
    from ingest.daily_close_status import parse_business_date

    try:
        return parse_business_date(text)
    except Exception:
        raise AdminError(f"{what} {text!r} is not a date in the form YYYY-MM-DD") from None


def payment_type(code: str) -> str:
    from pydantic import TypeAdapter, ValidationError

    from ingest.wire.scalars import FreeString50

    try:
        return TypeAdapter(FreeString50).validate_python(code)
    except ValidationError:
        raise AdminError(
            f"invalid payment type {code!r}: 1 to 50 characters, exactly as the partner sends it "
            "in payments[].payment_type"
        ) from None
