"""Writing the trade records of a batch whose entries in the record index exist already (later versions,
resends under a new batch_id, retries): the partner-wide version rule, item by item and in transactional
batches. trade_records.py decides which rows come here; record_index.py holds the entries.

The rule is the one of decisions 0034 and 0054: an entry only moves forward
by conditional writes (created when absent, replaced on the ETag read), so of concurrent writers exactly one
moves it at a time; a record that moved leaves a tombstone where it was, listed in the entry ("dirty"); the
record is then written in its store-day with the same rule. The tombstones go first, so the record of the
entry's version in its day tells that they are done and no write clears the list (decision 0116); a crash in
between is completed by the retry or by the next version."""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import orjson
from azure.cosmos import ContainerProxy

from backends.cosmos.connection import WriterPool
from backends.cosmos.day_sums import SUMS_FIELDS, Rider, Write, in_day_batches, write_of
from backends.cosmos.day_sums import write_if_replaces as write_with_day
from backends.cosmos.expiry import DayExpiry
from backends.cosmos.items import chunks, query, stored_version
from backends.cosmos.keys import day_key, record_id
from backends.cosmos.record_index import RecordIndex, entry_of
from backends.cosmos.record_items import record_item, stored_bytes, tombstone
from backends.cosmos.saves import Saved, entry_day, saved
from backends.cosmos.transactional import BatchOperation, in_batches
from core import faults
from core.records import TradeRecordRow
from core.stored_json import JsonObject
from core.versions import Version, trade_record_replaces

# Set on an entry whose writers bury its "dirty" days before they write its record (decision 0116).
BURIED_FIRST = "buried_first"
DAYS_PER_QUERY = 16  # store-days one read of records names: a move's two in one request (decision 0121)

RiderOf = Callable[[int], Rider]  # the batch entry's rider (day_sums.py), counting this many moved records


def moved_forward(
    entry: JsonObject, mine: Version, current: JsonObject | None, settled: bool = False
) -> JsonObject | None:
    """The entry to write over `current` (None: it stays): this version's, with the store-days to bury.
    `settled`: current's own days to bury are known done (`buried`), so only the day it leaves is listed."""
    if current is None:
        return entry
    if not trade_record_replaces(mine, stored_version(current)):
        return None
    return _forward({**entry}, current, settled)  # a copy: `entry` is decided again on what a lost race left


def _forward(entry: JsonObject, current: JsonObject, settled: bool) -> JsonObject:
    """moved_forward's entry, once this version is known to replace current's: `entry`, changed in place."""
    here, there = entry_day(entry), entry_day(current)
    if settled or not current["dirty"]:  # nearly always: only the day it leaves, if it leaves one
        dirty = [] if there == here else [there]
    else:
        dirty = [list(day) for day in sorted({tuple(day) for day in current["dirty"] + [there] if day != here})]
    # An entry stays in the partition it was created in (decision 0092).
    entry["pk"] = current["pk"]
    entry["previous"] = there
    entry["dirty"] = dirty
    if dirty:
        entry[BURIED_FIRST] = True
    return entry


def holds(entry: JsonObject, item: JsonObject | None) -> bool:
    """Whether `item` (in the entry's store-day) is the record of the entry's version."""
    return item is not None and item.get("type") == "record" and stored_version(item) == stored_version(entry)


def buried(entry: JsonObject, item: JsonObject | None) -> bool:
    """Whether the entry's days to bury are done, `item` being what its store-day holds under the record's id:
    a writer buries them before it writes the record (decision 0116). An entry of the earlier code (no
    BURIED_FIRST) wrote its record first: its days are buried again, which the version rule makes harmless."""
    return not entry["dirty"] or (bool(entry.get(BURIED_FIRST)) and holds(entry, item))


@dataclass(eq=False, slots=True)  # compared and hashed as itself; no __dict__ (decision 0126)
class _Known:
    """A row whose entry was read: what was decided for it, step by step."""

    row: TradeRecordRow
    entry: JsonObject  # this version's entry
    stored: JsonObject | None  # the entry as read
    days: list[str]  # the partition keys of its own store-day, then of the stored entry's
    item_id: str  # of its record (and tombstones) in a store-day
    mine: Version  # the row's version
    theirs: Version | None  # the stored entry's version, read once (decision 0127)
    wanted: JsonObject | None = None  # the entry to write over it
    written: JsonObject | None = None  # the entry holding this version, once moved forward (or found so)
    result: Saved | None = None

    @property
    def was_here(self) -> bool:
        return self.stored is not None and entry_day(self.stored) == entry_day(self.entry)


# What the store-days involved hold, read before anything is written: partition key -> item id -> the item,
# or None when the day holds none under that id.
Held = dict[str, dict[str, JsonObject | None]]
_NONE: dict[str, JsonObject | None] = {}


class RecordWrites:
    def __init__(self, container: ContainerProxy, writers: WriterPool, index: RecordIndex, expiry: DayExpiry) -> None:
        self._trades = container
        self._writers = writers
        self._index = index
        self._expiry = expiry

    def _record_item(
        self, partner_id: str, row: TradeRecordRow, mine: Version, keys: tuple[str, str] | None = None
    ) -> JsonObject:
        return record_item(partner_id, row, mine, self._expiry.ttl(row.business_date), keys)

    def _entry_of(
        self, partner_id: str, batch_id: str, row: TradeRecordRow, mine: Version, entry_id: str | None = None
    ) -> JsonObject:
        return entry_of(partner_id, batch_id, row, mine, self._expiry.ttl(row.business_date), entry_id)

    # -- in transactional batches -----------------------------------------------------------------

    def create_records(
        self, partner_id: str, rows: list[TradeRecordRow], rider: Rider | None = None
    ) -> list[TradeRecordRow]:
        """Create the records in transactional batches per store-day (`rider` with the last of its day's); the
        rows of a refused batch are returned."""
        work: list[tuple[TradeRecordRow, BatchOperation, int, Write]] = [
            (row, ("create", (item,)), stored_bytes(item), (item, None, item.get("ttl")))
            for row in rows
            for item in (self._record_item(partner_id, row, _version(row)),)
        ]
        done = in_day_batches(self._trades, self._writers, work, "cosmos.record", rider)
        return [row for row, answer in done if answer is None]

    def save_known(
        self, partner_id: str, batch_id: str, rows: list[TradeRecordRow], rider: RiderOf | None = None
    ) -> list[Saved]:
        """Rows whose entry most likely exists, in transactional batches: the entries read in one query, and
        what their store-days hold under the records' ids (a query a day); the entries moved forward per
        index bucket; then, for records that move, tombstones in the store-days they left; last, the records
        per store-day (decision 0116). A refused batch's rows go item by item (`save_one`, or `_complete`
        once their entry is written). Results in the order of `rows`."""
        stored = self._index.entries(partner_id, [row.trade_record_id for row in rows])
        day_of = functools.cache(lambda store_id, business_date: day_key(partner_id, store_id, business_date))
        known = [self._known(partner_id, batch_id, row, stored.get(row.trade_record_id), day_of) for row in rows]
        held = self._read({}, [(pk, one.item_id) for one in known if one.result is None for pk in one.days])
        for one in known:
            if one.result is None:
                self._decide(one, held, batch_id)
        to_write = [one for one in known if one.result is None and one.written is None]
        writes: list[tuple[_Known, BatchOperation, int]] = [
            (one, _entry_write(one), len(orjson.dumps(_wanted(one)))) for one in to_write if one.stored is not None
        ]
        answered = in_batches(self._trades, self._writers, writes, "cosmos.version_entry")
        # Entries found nowhere: created in their leaf with its count (decision 0092).
        answered += self._index.create(partner_id, [(one, _wanted(one)) for one in to_write if one.stored is None])
        for one, answer in answered:
            if answer is not None:  # else its batch was refused: decided item by item (save_one)
                # In place: the entry was sent, and nothing else holds it (decision 0130).
                one.written = _wanted(one)
                one.written["_etag"] = answer["eTag"]
        written = [one for one in known if one.written is not None and one.result is None]
        # What each tells once its writes are done, made once: the rider's batch entry counts the moves.
        told = {one: saved(_written(one), batch_id, one.row) for one in written}
        tombstones = [
            (
                one,
                tombstone(partner_id, one.item_id, store_id, business_date, one.mine),
                self._expiry.ttl_of_day(business_date),
            )
            for one in written
            for store_id, business_date in _written(one)["dirty"]
        ]
        refused = self._write_with_rule(tombstones, held, "cosmos.tombstone")
        records = [
            (one, self._record_item(partner_id, one.row, one.mine, (one.item_id, one.days[0])), None)
            for one in written
            if one not in refused
        ]
        moved = None if rider is None else _moves_told(known, told)  # what the rider's batch entry counts
        ridden = None if rider is None or moved is None else rider(moved)
        refused |= self._write_with_rule(records, held, "cosmos.record", ridden)
        for one in written:
            if one not in refused:
                one.result = told[one]
        rest = [one for one in known if one.result is None]
        outcomes = self._writers.each(lambda one: self._one_by_one(partner_id, batch_id, one), rest)
        for one, outcome in zip(rest, outcomes, strict=True):
            one.result = outcome
        return [_result(one) for one in known]

    def _known(
        self,
        partner_id: str,
        batch_id: str,
        row: TradeRecordRow,
        stored: JsonObject | None,
        day_of: Callable[[str, str], str],
    ) -> _Known:
        """The row with its entry; decided at once when a later version (or this one, first received in
        another store-day) is stored: it stays."""
        mine = _version(row)
        item_id = record_id(row.trade_record_id)
        entry = self._entry_of(partner_id, batch_id, row, mine, None if stored is None else stored["id"])
        days = [day_of(row.store_id, entry["business_date"])]
        theirs = None
        if stored is not None:
            days.append(day_of(*entry_day(stored)))
            theirs = stored_version(stored)
        one = _Known(row, entry, stored, days, item_id, mine, theirs)
        if theirs is not None and not trade_record_replaces(mine, theirs):
            if theirs != mine or not one.was_here:
                one.result = (0, None)
        return one

    def _decide(self, one: _Known, held: Held, batch_id: str) -> None:
        """The entry to write (its days to bury settled by what the store-day of the stored one holds), or,
        for a resend or a retry, the stored entry, whose writes are done when its record is in its day."""
        stored = one.stored
        there = None if stored is None else held.get(one.days[-1], _NONE).get(one.item_id)  # in its store-day
        if stored is None or trade_record_replaces(one.mine, one.theirs):
            # In place: this version's entry, made for this row alone (decision 0130).
            one.wanted = one.entry if stored is None else _forward(one.entry, stored, buried(stored, there))
            return
        one.written = stored  # a resend or a retry: complete what it may have left undone
        if holds(stored, there) and buried(stored, there):
            one.result = saved(stored, batch_id, one.row)

    def _read(self, read: Held, wanted: list[tuple[str, str]]) -> Held:
        """`read`, completed in place with the items of `wanted` (partition key, item id) it lacks: a move's
        two days in one query. In place: a batch's later writes find what its first read found, unread again
        and uncopied (decision 0127); nothing it writes is read back from it."""
        ids: dict[str, set[str]] = defaultdict(set)
        for pk, item_id in wanted:
            day = read.get(pk)
            if day is None:
                day = read[pk] = {}
            if item_id not in day:
                ids[pk].add(item_id)
                day[item_id] = None  # not stored, unless found below
        days = sorted(ids)
        groups = [days[start : start + DAYS_PER_QUERY] for start in range(0, len(days), DAYS_PER_QUERY)]
        for items in self._writers.each(
            lambda days: self._stored_records(days, {i for d in days for i in ids[d]}), groups
        ):
            for item in items:
                read.setdefault(item["pk"], {})[item["id"]] = item
        return read

    def _one_by_one(self, partner_id: str, batch_id: str, one: _Known) -> Saved:
        if one.written is None:
            return self.save_one(partner_id, batch_id, one.row)
        return self._complete(partner_id, batch_id, one.row, one.written, one.was_here)

    def _write_with_rule(
        self, items: Sequence[tuple[_Known, JsonObject, int | None]], held: Held, point: str, rider: Rider | None = None
    ) -> set[_Known]:
        """Records or tombstones (of a row's version) written in transactional batches per store-day with the
        version rule: created when absent, replaced on the ETag read when older, left when newer or equal;
        each batch with its day's sums item (the day's ttl given for a tombstone). What a day holds is taken
        from `held`, else read. Returns the rows of refused batches, for the item-by-item path."""
        unread = [(item["pk"], item["id"]) for _, item, _ in items if item["id"] not in held.get(item["pk"], _NONE)]
        if unread:  # else every item's day was read with the entries (a record or a day it leaves)
            self._read(held, unread)
        # In the order given: in_day_batches groups them by store-day.
        work: list[tuple[_Known, BatchOperation, int, Write]] = []
        for one, item, ttl in items:
            current = held[item["pk"]].get(item["id"])
            if current is None:
                operation: BatchOperation = ("create", (item,))
            elif trade_record_replaces(one.mine, stored_version(current)):
                operation = ("replace", (item["id"], item), {"if_match_etag": current["_etag"]})
            else:
                continue  # a newer one stays
            change = write_of(item, current, item.get("ttl") if ttl is None else ttl)
            work.append((one, operation, stored_bytes(item), change))
        done = in_day_batches(self._trades, self._writers, work, point, rider)
        return {one for one, answer in done if answer is None}

    def _stored_records(self, pks: list[str], ids: set[str]) -> list[JsonObject]:
        """The items of these ids in these store-days: one partition's query, or one across the few named."""
        keys = {f"k{number}": pk for number, pk in enumerate(pks)}
        where = "c.pk = @k0" if len(pks) == 1 else "c.pk IN (" + ", ".join(f"@{name}" for name in keys) + ")"
        found: list[JsonObject] = []
        for some in chunks(sorted(ids)):
            found += query(
                self._trades,
                f"SELECT c.id, c.pk, c.type, c.version, c.last_modified_us, c._etag, {SUMS_FIELDS} FROM c "
                f"WHERE {where} AND ARRAY_CONTAINS(@ids, c.id)",
                pks[0] if len(pks) == 1 else None,
                ids=some,
                **keys,
            )
        return found

    # -- item by item -----------------------------------------------------------------------------

    def save_one(self, partner_id: str, batch_id: str, row: TradeRecordRow) -> Saved:
        """Keep the latest version of a trade record for the whole partner, one request at a time: the entry
        read, decided and written on its ETag (again on what a concurrent writer left), then the record."""
        mine = _version(row)
        entry = self._entry_of(partner_id, batch_id, row, mine)
        update = self._index.update_entry(
            partner_id, row.trade_record_id, lambda current: moved_forward(entry, mine, current)
        )
        before = update.before
        was_here = before is not None and entry_day(before) == entry_day(entry)
        if update.after is not None:
            faults.point("cosmos.version_entry")
            return self._complete(partner_id, batch_id, row, update.after, was_here)
        if before is not None and stored_version(before) == mine and was_here:
            return self._complete(partner_id, batch_id, row, before, True)  # a resend or a retry
        return 0, None  # a later version (or the same version first received elsewhere) stays

    def _complete(
        self, partner_id: str, batch_id: str, row: TradeRecordRow, written: JsonObject, was_here: bool
    ) -> Saved:
        """The store-days an entry that holds this version left, buried, then its record (decision 0116)."""
        mine = _version(row)
        for store_id, business_date in written["dirty"]:
            self.bury(partner_id, row.trade_record_id, store_id, business_date, mine)
            faults.point("cosmos.tombstone")
        self.put_record(partner_id, row, mine, expected=was_here)
        faults.point("cosmos.record")
        return saved(written, batch_id, row)

    def put_new_record(self, partner_id: str, row: TradeRecordRow) -> None:
        self.put_record(partner_id, row, _version(row), expected=False)

    def put_record(self, partner_id: str, row: TradeRecordRow, mine: Version, expected: bool) -> None:
        item = self._record_item(partner_id, row, mine)
        write_with_day(self._trades, item, mine, item.get("ttl"), create_first=not expected)

    def bury(self, partner_id: str, trade_record_id: str, store_id: str, business_date: str, mine: Version) -> None:
        item = tombstone(partner_id, record_id(trade_record_id), store_id, business_date, mine)
        write_with_day(self._trades, item, mine, self._expiry.ttl_of_day(business_date))


def _result(one: _Known) -> Saved:
    assert one.result is not None  # every row is decided by the batches or item by item
    return one.result


def _moves_told(known: list[_Known], told: dict[_Known, Saved]) -> int | None:
    """How many rows moved, once each is decided or its entry written (`told`: what `saved` reads in it);
    else None."""
    if any(one.result is None and one.written is None for one in known):
        return None
    return sum((told[one] if one.result is None else one.result)[1] is not None for one in known)


def _written(one: _Known) -> JsonObject:
    assert one.written is not None
    return one.written


def _version(row: TradeRecordRow) -> Version:
    return Version.of(row.version, row.last_modified_at)


def _wanted(one: _Known) -> JsonObject:
    assert one.wanted is not None
    return one.wanted


def _entry_write(one: _Known) -> BatchOperation:
    wanted = _wanted(one)
    assert one.stored is not None  # a new entry is created by the record index, in its leaf
    return ("replace", (wanted["id"], wanted), {"if_match_etag": one.stored["_etag"]})
