"""A write for a store-day the hot store no longer holds (TRADE_RECORD_RETENTION_DAYS): refused whole with
a problem at its business_date, before anything is stored (decision 0086). POST
/trade-records and POST /daily-close add these problems to their own 400."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

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


@dataclass(frozen=True, slots=True)
class HeldDays:
    """Which store-days the hot store holds as of `today` (UTC): what a store-day's write reads for its check."""

    today: dt.date
    retention_days: int  # 0: every one

    def problems(self, business_date: dt.date) -> list[FieldProblem]:
        return retention_problems(business_date, self.today, self.retention_days)


EVERY_DAY_HELD = HeldDays(dt.date.min, 0)  # no retention


def held_days(storage: Retention) -> HeldDays:
    """The retention the storage keeps, as of today (UTC)."""
    return HeldDays(utc_now().date(), storage.retention_days)
