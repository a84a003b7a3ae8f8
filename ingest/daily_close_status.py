"""GET /daily-close/{store_id}/{business_date}: the reconciliation status of a store-day (spec 4.9)."""

from __future__ import annotations

import datetime as dt
import re

from pydantic import TypeAdapter, ValidationError

from core.clock import to_api_text
from core.errors import ApiError, FieldProblem, invalid_payload
from core.ports import Partner, Storage
from ingest import access
from ingest.wire import StoreId

# [0-9], not \d: \d also matches other scripts' digits, which fromisoformat refuses.
_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
_STORE_ID = TypeAdapter(StoreId)


def parse_business_date(text: str) -> dt.date:
    try:
        if _DATE.match(text):
            return dt.date.fromisoformat(text)
    except ValueError:
        pass
    raise invalid_payload([FieldProblem("business_date", "must be a date in the form YYYY-MM-DD")])


def _path_problems(store_id: str, business_date_text: str) -> list[FieldProblem]:
    """A store_id no store could have (too long, control characters, / \\ ? #) is refused as a body's
    would be, without echoing it; any other unknown one is answered 403 by the registration check."""
    problems = []
    try:
        _STORE_ID.validate_python(store_id)
    except ValidationError:
        problems.append(FieldProblem("store_id", "must be a store code of 1 to 100 characters, without / \\ ? # "
                                                 "or control characters"))
    try:
        parse_business_date(business_date_text)
    except ApiError as error:
        problems += error.errors
    return problems


def daily_close_status(storage: Storage, partner: Partner, store_id: str, business_date_text: str) -> dict:
    problems = _path_problems(store_id, business_date_text)
    if problems:
        raise invalid_payload(problems)
    business_date = parse_business_date(business_date_text)
    access.require_registered(storage, partner.partner_id, [store_id])
    day = storage.get_closed_day(partner.partner_id, store_id, business_date)
    if day is None:
        return {"store_id": store_id, "business_date": business_date.isoformat(), "status": "NOT_RECEIVED",
                "checked_at": None, "expected": None, "actual": None, "differences": []}
    expected = {name: value for name, value in day.expected.items() if name != "batch_count"}
    body = {
        "store_id": store_id,
        "business_date": business_date.isoformat(),
        "status": day.status,
        "checked_at": None if day.checked_at is None else to_api_text(day.checked_at),
        "expected": expected,
        "actual": day.actual,
        "differences": day.differences,
    }
    if day.details is not None:
        body["details"] = day.details
    if day.status == "RECEIVED":  # tells a partner (and examples/push_day.py) why there is no result yet
        body["reconciliation_due_at"] = to_api_text(day.due_at)
    return body
