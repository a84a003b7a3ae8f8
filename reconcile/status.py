"""GET /daily-close/{store_id}/{business_date}: the reconciliation status of a store-day (spec 4.9)."""

from __future__ import annotations

import datetime as dt
import re

from core.clock import to_api_text
from core.errors import FieldProblem, invalid_payload
from core.ports import Partner, Storage
from ingest import access

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_business_date(text: str) -> dt.date:
    try:
        if _DATE.match(text):
            return dt.date.fromisoformat(text)
    except ValueError:
        pass
    raise invalid_payload([FieldProblem("business_date", "must be a date in the form YYYY-MM-DD")])


def daily_close_status(storage: Storage, partner: Partner, store_id: str, business_date_text: str) -> dict:
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
    return body
