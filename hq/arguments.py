"""Reading `hq`'s argument values that argparse takes as plain text: batch ids, dates, payment types.

A value that does not read is refused like any refusal (AdminError, exit 1), naming the argument.
"""

from __future__ import annotations

import datetime as dt
import uuid

from core.ports import AdminError


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
