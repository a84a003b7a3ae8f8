"""Time in UTC: one clock for the service, and the text forms it stores and returns."""

from __future__ import annotations

import datetime as dt

UTC = dt.UTC
EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)  # made once: epoch_micros runs for every record written


def utc_now() -> dt.datetime:
    return dt.datetime.now(UTC)


def to_utc_text(moment: dt.datetime) -> str:
    """Fixed-width UTC text ('2026-11-22T02:08:18.000000Z'): sorts in time order as text."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def from_utc_text(text: str) -> dt.datetime:
    """The moment to_utc_text wrote. fromisoformat reads that fixed form about 40x faster than strptime,
    which mattered where a page reads thousands of stored times (HQ's dashboard overview)."""
    return dt.datetime.fromisoformat(text).astimezone(UTC)


def to_api_text(moment: dt.datetime) -> str:
    """How timestamps are returned to partners: UTC with a Z, to the second unless finer."""
    text = moment.astimezone(UTC).isoformat()
    return text.replace("+00:00", "Z")


def epoch_micros(moment: dt.datetime) -> int:
    delta = moment - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_epoch_micros(micros: int) -> dt.datetime:
    # Integer arithmetic: a float division loses microseconds and can overflow near year 9999.
    return EPOCH + dt.timedelta(microseconds=micros)


def to_utc_text_or_none(moment: dt.datetime | None) -> str | None:
    return None if moment is None else to_utc_text(moment)


def from_utc_text_or_none(text: str | None) -> dt.datetime | None:
    return None if text is None else from_utc_text(text)
