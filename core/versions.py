"""Which version of a record wins (specification 4.7 and 9): the higher version; with equal versions,
the later last_modified_at. The one statement of the rule: the SQLite upserts mirror it in SQL and a test
checks that both agree on the same cases; the Cosmos DB and in-memory adapters call it."""

from __future__ import annotations

import datetime as dt
from typing import NamedTuple

from core.clock import epoch_micros


class Version(NamedTuple):
    """A record's place in its history; compares in the rule's order (tuples compare field by field)."""

    number: int  # the record's version (stores, which have none, use 0)
    modified_us: int  # last_modified_at in microseconds since the epoch

    @classmethod
    def of(cls, number: int, last_modified_at: dt.datetime) -> Version:
        return cls(number, epoch_micros(last_modified_at))


def trade_record_replaces(incoming: Version, stored: Version | None) -> bool:
    """A trade record is replaced only by a newer one: the same version sent again changes nothing."""
    return stored is None or incoming > stored


def master_replaces(incoming: Version, stored: Version | None) -> bool:
    """Master data (stores, products) is written again by an equal version: the latest send of it wins."""
    return stored is None or incoming >= stored
