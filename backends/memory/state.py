"""The memory storage's tables: dicts behind one re-entrant lock, which every call holds (MemoryState),
and the key record they store."""

from __future__ import annotations

import dataclasses
import datetime as dt
import threading
from collections import defaultdict

from core.clients import ClientInfo
from core.records import (
    BatchMarker,
    ClosedDay,
    Mapping,
    ModifierGroupMaster,
    Partner,
    ProductMaster,
    StoreDay,
    StoredVersion,
    StoreMaster,
    TradeRecordRow,
)
from core.versions import Version


@dataclasses.dataclass
class StoredKey:
    """An API key as stored (ApiKeyInfo and KeyOwner are built from it)."""

    key_id: str
    partner_id: str
    key_hash: str
    created_at: dt.datetime
    revoked_at: dt.datetime | None = None
    last_used_at: dt.datetime | None = None


def cleared(day: ClosedDay) -> ClosedDay:
    """The day without a result: what a new close or a reopening leaves."""
    return dataclasses.replace(day, checked_at=None, actual=None, differences=[], details=None)


class MemoryState:
    """The tables every part of the memory storage reads and writes, under `_lock`."""

    def __init__(self, retention_days: int = 0) -> None:
        self.retention_days = retention_days  # core/retention.py: the store-days this store keeps
        self._lock = threading.RLock()
        self._partners: dict[str, Partner] = {}
        self._keys: dict[str, StoredKey] = {}  # by key_hash
        self._clients: dict[tuple[str, str], ClientInfo] = {}  # by issuer and client_id
        self._stores_registered: dict[str, dict[str, dt.datetime]] = defaultdict(dict)
        self._directions: dict[str, dict[str, int]] = defaultdict(dict)
        self._request_counts: dict[tuple[str, int], int] = {}
        self._batches: dict[tuple[str, str], BatchMarker] = {}
        self._stores: dict[tuple[str, str], StoreMaster] = {}
        self._products: dict[tuple[str, str, str], ProductMaster] = {}  # store "" = all stores
        self._groups: dict[tuple[str, str], ModifierGroupMaster] = {}
        self._mappings: dict[str, Mapping] = {}
        self._records: dict[str, dict[str, TradeRecordRow]] = defaultdict(dict)  # partner -> trade_record_id
        self._record_batches: dict[tuple[str, str], str] = {}  # the batch_id of each stored version
        self._days: dict[tuple[str, str, dt.date], ClosedDay] = {}  # partner's store-day
        # Every close a store-day received and every mapping a partner uploaded, kept whatever becomes of
        # their markers: the marker of a resend is rebuilt from them.
        self._close_receipts: dict[tuple[str, str, dt.date, str], BatchMarker] = {}
        self._mapping_receipts: dict[tuple[str, str], BatchMarker] = {}
        self._last_sweep: dt.datetime | None = None


def stored_version_of(row: TradeRecordRow) -> StoredVersion:
    return StoredVersion(Version.of(row.version, row.last_modified_at), StoreDay(row.store_id, row.business_date))
