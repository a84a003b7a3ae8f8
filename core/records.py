"""The data shapes the storage port carries: partners and keys, batch markers, master data, trade records
as stored (with their totals in minor units), a store-day's sums, closed days and their results, and the
queue's reconciliation request. Plain frozen dataclasses; the ports that move them are in core/ports.py."""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from core.kept_warnings import KeptWarning
from core.stored_json import JsonObject, MovedOut, RecordChangesJson, ResultDetails, ResultTotals
from core.versions import Version, trade_record_replaces


@dataclass(frozen=True)
class Partner:
    partner_id: str
    name: str
    active: bool
    created_at: dt.datetime
    # Requests a minute HQ allows this partner (`hq partner rate-limit`), sized to its stores; None: the
    # service's RATE_LIMIT_PER_MINUTE.
    rate_limit_per_minute: int | None = None


@dataclass(frozen=True)
class ApiKeyInfo:
    key_id: str
    partner_id: str
    created_at: dt.datetime
    revoked_at: dt.datetime | None
    last_used_at: dt.datetime | None = None  # the hour (UTC) of its last accepted request, see record_key_use


@dataclass(frozen=True)
class KeyOwner:
    """The result of looking up a key hash: its owner and whether key and partner are usable."""

    partner: Partner
    key_id: str
    key_hash: str
    revoked: bool
    last_used_at: dt.datetime | None = None


@dataclass(frozen=True)
class StoreDay:
    store_id: str
    business_date: dt.date

    def __str__(self) -> str:
        return f"{self.store_id} {self.business_date.isoformat()}"


@dataclass(frozen=True)
class RecordMove:
    """A trade record whose newer version lives in another store-day than the version it replaced."""

    trade_record_id: str
    left: StoreDay
    to: StoreDay


@dataclass(frozen=True)
class RecordChanges:
    """What a trade-records batch changed: how many of its records were newer than what was stored (those
    change the batch's own store-day), and which of them moved from another store-day (those change the day
    they left too). Kept in the batch's marker, so that a retry answered ALREADY_RECEIVED can finish what
    the first attempt left undone (see core.reconcile_reruns.reopen_changed_days)."""

    newer: int = 0
    moves: tuple[RecordMove, ...] = ()

    def days(self, batch_day: StoreDay) -> list[StoreDay]:
        """The store-days whose records changed: the batch's own when a record won, and each day left."""
        days = [batch_day] if self.newer else []
        for move in self.moves:
            if move.left not in days:
                days.append(move.left)
        return days

    def as_json(self) -> RecordChangesJson:
        return {
            "newer": self.newer,
            "moves": [
                [
                    move.trade_record_id,
                    move.left.store_id,
                    move.left.business_date.isoformat(),
                    move.to.store_id,
                    move.to.business_date.isoformat(),
                ]
                for move in self.moves
            ],
        }

    @classmethod
    def from_json(cls, data: RecordChangesJson | None) -> RecordChanges | None:
        if not data:
            return None
        return cls(
            data["newer"],
            tuple(
                RecordMove(
                    record_id,
                    StoreDay(left_store, dt.date.fromisoformat(left_date)),
                    StoreDay(to_store, dt.date.fromisoformat(to_date)),
                )
                for record_id, left_store, left_date, to_store, to_date in data["moves"]
            ),
        )


class StoredVersion(NamedTuple):
    """The latest stored version of a trade record, and the store-day it lives in."""

    version: Version
    day: StoreDay


def record_changes(rows: Iterable[TradeRecordRow], stored: dict[str, StoredVersion]) -> RecordChanges:
    """What writing `rows` over the `stored` versions changes: the rows the version rule lets win and the
    store-days they leave. Taken in order, as the writes are: rows of one batch may repeat a trade_record_id.
    A row with nothing to compare (its id neither stored nor repeated in the batch: the usual new record)
    wins without its Version being computed, which costs a datetime subtraction."""
    rows = list(rows)
    in_batch = Counter(row.trade_record_id for row in rows)
    latest = dict(stored)
    newer, moves = 0, []
    for row in rows:
        if in_batch[row.trade_record_id] == 1 and row.trade_record_id not in latest:
            newer += 1
            continue
        mine = StoredVersion(Version.of(row.version, row.last_modified_at), StoreDay(row.store_id, row.business_date))
        before = latest.get(row.trade_record_id)
        if not trade_record_replaces(mine.version, None if before is None else before.version):
            continue
        newer += 1
        if before is not None and before.day != mine.day:
            moves.append(RecordMove(row.trade_record_id, before.day, mine.day))
        latest[row.trade_record_id] = mine
    return RecordChanges(newer, tuple(moves))


# The warning a trade record batch answers for each record it moved from another store-day.
TRADE_RECORD_MOVED = "TRADE_RECORD_MOVED"


@dataclass(frozen=True)
class BatchMarker:
    partner_id: str
    batch_id: str
    kind: str  # stores | products | mappings | trade-records | daily-close
    record_count: int
    body_digest: str
    received_at: dt.datetime
    store_id: str | None = None
    business_date: dt.date | None = None
    batch_seq: int | None = None
    # Trade records only: what the batch changed (None before it was kept). Not part of the marker's identity.
    changes: RecordChanges | None = field(default=None, compare=False)
    # The warnings its answer carried, counted by code (HQ's dashboard shows them); empty for a marker
    # stored before they were kept. Not part of the marker's identity.
    warnings: dict[str, int] = field(default_factory=dict, compare=False)
    # The warnings of its first answer, each whole, which a resend answers again (a trade record batch's
    # TRADE_RECORD_MOVED aside: they follow from `changes`); None for a marker stored before they were kept.
    answer: tuple[KeptWarning, ...] | None = field(default=None, compare=False)
    # SHA-256 of what the body says (ingest/batches.py `meaning_digest`): a resend written otherwise (other
    # whitespace, member order) is the same body. None for a marker stored before it was kept.
    meaning_digest: str | None = field(default=None, compare=False)

    def with_changes(self, changes: RecordChanges) -> BatchMarker:
        """The marker of a trade record batch as kept: with what the batch changed, and its warnings counting
        the records that moved from another store-day (TRADE_RECORD_MOVED, which the answer gets only after
        the save: ingest.trade_batches.moved_warnings, one per move)."""
        return replace(self.with_moves(len(changes.moves)), changes=changes)

    def with_moves(self, moved: int) -> BatchMarker:
        """Its warnings counting `moved` records more that moved from another store-day."""
        warnings = {**self.warnings, TRADE_RECORD_MOVED: self.warnings.get(TRADE_RECORD_MOVED, 0) + moved}
        return replace(self, warnings=warnings if moved else dict(self.warnings))


@dataclass(frozen=True)
class SavedTradeRecords:
    """What save_trade_records did: `existing` is the marker already stored when the batch_id was known
    (nothing written), else None and `changes` says what this call changed."""

    existing: BatchMarker | None
    changes: RecordChanges = field(default_factory=RecordChanges)


@dataclass(frozen=True)
class StoreMaster:
    store_id: str
    currency: str
    country_code: str
    time_zone: str
    workday_start: str
    prices_include_tax: bool
    last_modified_at: dt.datetime
    document: JsonObject


@dataclass(frozen=True)
class ProductMaster:
    product_id: str
    store_id: str | None
    version: int
    last_modified_at: dt.datetime
    document: JsonObject


@dataclass(frozen=True)
class ModifierGroupMaster:
    group_id: str
    document: JsonObject


@dataclass(frozen=True)
class Mapping:
    batch_id: str | None
    updated_at: dt.datetime | None
    entries: list[JsonObject]  # as uploaded and answered: the wire's MappingEntry members, in upload order

    def standard_code_of(self) -> dict[str, str]:
        return {entry["source_code"]: entry["standard_code"] for entry in self.entries}


@dataclass
class TradeRecordRow:
    """One transaction as stored: identity, version and its totals in minor units.

    Reconciliation reads the sums of these narrow fields (StoreDayTotals); `document` holds the record
    as received. Not frozen, although nothing changes a row: a frozen dataclass sets each of its 15
    fields through object.__setattr__, which made building an accept's 500 rows six times slower (and a
    row was never hashable anyway: payments_minor is a dict).
    """

    trade_record_id: str
    version: int
    last_modified_at: dt.datetime
    store_id: str
    business_date: dt.date
    source_transaction_type: str
    item_rows: int
    payment_rows: int
    total_minor: int
    tax_minor: int
    tip_minor: int
    payments_minor: dict[str, int]  # payment_type -> sum of amounts, as sent (direction not applied)
    document_json: str = field(default="", compare=False)  # the record as received, serialised once
    # The record's codes that partner-wide reads look up: its payments' payment_ids, and its item lines
    # counted per product_id (every line, combo children and voided lines included).
    payment_ids: tuple[str, ...] = field(default=(), compare=False)
    product_lines: dict[str, int] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class SourceTypeTotals:
    """Sums over a store-day's latest records of one source_transaction_type (amounts in minor units)."""

    records: int
    item_rows: int
    payment_rows: int
    total_minor: int
    tax_minor: int
    tip_minor: int


@dataclass(frozen=True)
class StoreDayTotals:
    """What reconciliation needs of a store-day: its latest records summed per source code, and their
    payments per payment_type. Mapping and payment directions are applied by the domain, to groups."""

    by_source_type: dict[str, SourceTypeTotals]
    payments_minor: dict[str, int]  # payment_type -> sum of amounts, as sent (direction not applied)

    @classmethod
    def of_records(cls, records: Iterable[tuple[str, int, int, int, int, int, dict[str, int]]]) -> StoreDayTotals:
        """Sum records given as (source_type, item_rows, payment_rows, total, tax, tip, payments) tuples,
        for a store that cannot sum them itself (Cosmos DB: the emulator has no GROUP BY; SQLite beyond
        64 bits)."""
        sums: dict[str, list[int]] = {}
        payments: dict[str, int] = defaultdict(int)
        for source_type, item_rows, payment_rows, total, tax, tip, paid in records:
            group = sums.get(source_type)
            if group is None:
                group = sums[source_type] = [0, 0, 0, 0, 0, 0]
            group[0] += 1
            group[1] += item_rows
            group[2] += payment_rows
            group[3] += total
            group[4] += tax
            group[5] += tip
            for payment_type, amount in paid.items():
                payments[payment_type] += amount
        return cls({code: SourceTypeTotals(*group) for code, group in sums.items()}, dict(payments))


@dataclass(frozen=True)
class UnknownProduct:
    """A product_id that item lines of a store-day name but the product master does not hold (neither for
    that store nor for all stores): how many lines name it, in how many latest records."""

    product_id: str
    item_lines: int
    trade_records: int


@dataclass(frozen=True)
class ClosedDay:
    """A daily close and its reconciliation result, as stored for one store and business date."""

    store_id: str
    business_date: dt.date
    close_batch_id: str
    currency: str
    expected: JsonObject  # the close's totals as sent: ControlTotals' members and batch_count
    received_at: dt.datetime
    due_at: dt.datetime
    status: str  # RECEIVED | MATCHED | MISMATCHED
    checked_at: dt.datetime | None = None
    actual: ResultTotals | None = None
    differences: list[str] = field(default_factory=list)  # the TotalFields that differ beyond tolerance
    details: ResultDetails | None = None
    # Counts every change to the day's records after its close (reopen_day); a result is saved only if
    # it did not change during the run (save_result), so a run never keeps totals read before a change.
    revision: int = 0
    # The records that moved out of the day, the first MOVED_OUT_KEPT; kept whatever close replaces its close.
    moved_out: list[MovedOut] = field(default_factory=list)


def result_is_stale(closed: ClosedDay, checked_before: dt.datetime | None) -> bool:
    """Whether reopen_day drops the day's result: it has one (not RECEIVED) and it was checked before
    `checked_before` (None: whenever it was checked). A result without a check time is kept: no adapter
    stores one (reconcile.service always sets checked_at), and the SQLite and Cosmos DB adapters
    compared None with a time (a TypeError) before this rule was shared; the memory storage kept it."""
    if closed.status == "RECEIVED":
        return False
    if checked_before is None:
        return True
    return closed.checked_at is not None and closed.checked_at < checked_before


MOVED_OUT_KEPT = 100


def merge_moved_out(kept: list[MovedOut], day: StoreDay, moves: Iterable[RecordMove]) -> list[MovedOut]:
    """A day's list of records moved out after `moves`: those that left it are added (or updated), those
    that came back to it removed; the first MOVED_OUT_KEPT by time of arrival in the list."""
    entries = {entry["trade_record_id"]: entry for entry in kept}
    for move in moves:
        if move.left == day and move.to != day:
            entries[move.trade_record_id] = MovedOut(
                trade_record_id=move.trade_record_id,
                to_store_id=move.to.store_id,
                to_business_date=move.to.business_date.isoformat(),
            )
        elif move.to == day:
            entries.pop(move.trade_record_id, None)
    return list(entries.values())[:MOVED_OUT_KEPT]


@dataclass(frozen=True)
class ReconcileRequest:
    """The queue message of a daily close: which store-day, and which close was the latest."""

    partner_id: str
    store_id: str
    business_date: dt.date
    close_batch_id: str


@dataclass(frozen=True)
class ReceivedDay:
    """What a store-day received in trade record batches, summed from their markers (HQ's dashboard):
    `records` counts every record of every batch, a record resent in a new version included."""

    store_id: str
    business_date: dt.date
    batches: int
    records: int
    warnings: dict[str, int]  # by code, over the day's batches


@dataclass(frozen=True)
class DayStatus:
    """A closed store-day's state without its totals: what the dashboard's overview grid shows."""

    store_id: str
    business_date: dt.date
    status: str  # RECEIVED | MATCHED | MISMATCHED
    received_at: dt.datetime
    due_at: dt.datetime
    checked_at: dt.datetime | None
    differences: list[str]
