"""GET /daily-close/{store_id}/{business_date}: the reconciliation status of a store-day (spec 4.9)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Protocol

from pydantic import TypeAdapter, ValidationError

from core.clock import UTC
from core.errors import ApiError, FieldProblem, invalid_payload
from core.ports import Admission, Reconciliations
from core.records import ClosedDay, Partner
from core.stored_json import JsonObject
from ingest import access
from ingest.wire.responses import DailyCloseStatus, answer
from ingest.wire.scalars import StoreId

# [0-9], not \d: \d also matches other scripts' digits, which fromisoformat refuses.
_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
_STORE_ID = TypeAdapter(StoreId)


class CloseStatusStorage(Admission, Reconciliations, Protocol):
    """What GET /daily-close/{store_id}/{business_date} uses of storage."""


def parse_business_date(text: str) -> dt.date:
    try:
        if _DATE.match(text):
            return dt.date.fromisoformat(text)
    except ValueError:
        pass
    raise invalid_payload([FieldProblem("business_date", "must be a date in the form YYYY-MM-DD")])


def store_day_problems(store_id: str, business_date_text: str) -> list[FieldProblem]:
    """A store_id no store could have (too long, control characters, / \\ ? #) is refused as a body's
    would be, without echoing it; any other unknown one is answered 403 by the registration check."""
    problems = []
    try:
        _STORE_ID.validate_python(store_id)
    except ValidationError:
        problems.append(
            FieldProblem(
                "store_id", "must be a store code of 1 to 100 characters, without / \\ ? # or control characters"
            )
        )
    try:
        parse_business_date(business_date_text)
    except ApiError as error:
        problems += error.errors
    return problems


def daily_close_status(
    storage: CloseStatusStorage, partner: Partner, store_id: str, business_date_text: str
) -> JsonObject:
    problems = store_day_problems(store_id, business_date_text)
    if problems:
        raise invalid_payload(problems)
    business_date = parse_business_date(business_date_text)
    access.require_registered(storage, partner.partner_id, [store_id])
    return status_answer(store_id, business_date, storage.get_closed_day(partner.partner_id, store_id, business_date))


def status_answer(store_id: str, business_date: dt.date, day: ClosedDay | None) -> JsonObject:
    """The DailyCloseStatus body of a store-day (day None: no close received)."""
    if day is None:
        return answer(
            DailyCloseStatus,
            {
                "store_id": store_id,
                "business_date": business_date,
                "status": "NOT_RECEIVED",
                "checked_at": None,
                "expected": None,
                "actual": None,
                "differences": [],
            },
        )
    # The stored expected totals also hold batch_count, which ControlTotals does not answer (extra members
    # are ignored); details is absent until a result has them.
    return answer(
        DailyCloseStatus,
        {
            "store_id": store_id,
            "business_date": business_date,
            "status": day.status,
            "checked_at": None if day.checked_at is None else day.checked_at.astimezone(UTC),
            "expected": day.expected,
            "actual": day.actual,
            "differences": day.differences,
            "details": day.details,
            # tells a partner (and examples/push_day.py) why there is no result yet
            "reconciliation_due_at": day.due_at.astimezone(UTC) if day.status == "RECEIVED" else None,
        },
    )
