"""A write for a store-day the hot store no longer holds (TRADE_RECORD_RETENTION_DAYS): refused whole with
a problem at its business_date, before anything is stored (decision: Retention of trade records). POST
/trade-records and POST /daily-close add these problems to their own 400."""

from __future__ import annotations

import datetime as dt

from core.clock import utc_now
from core.errors import FieldProblem
from core.retention import Retention, first_kept_date, is_retired


def retention_problems(business_date: dt.date, today: dt.date, retention_days: int) -> list[FieldProblem]:
    """The problem of a business date past the retention, as of `today` (UTC); none within it or when off."""
    if not is_retired(business_date, today, retention_days):
        return []
    return [
        FieldProblem(
            "business_date",
            f"{business_date.isoformat()} is past HQ's retention of {retention_days} days (the oldest business "
            f"date accepted is {first_kept_date(today, retention_days)}): this store-day is no longer accepted",
        )
    ]


def retired_day_problems(storage: Retention, business_date: dt.date) -> list[FieldProblem]:
    """retention_problems for today (UTC), with the retention the storage keeps."""
    return retention_problems(business_date, utc_now().date(), storage.retention_days)
