"""Writing the trade records of a batch whose entries in the record index exist already (later versions,
resends under a new batch_id, retries): the partner-wide version rule, item by item and in transactional
batches. trade_records.py decides which rows come here; record_index.py holds the entries.

The rule is the one of decisions 0034 and 0054: an entry only moves forward
by conditional writes (created when absent, replaced on the ETag read), so of concurrent writers exactly one
moves it at a time; the record is then written in its store-day with the same rule; a record that moved
leaves a tombstone where it was, and the store-days still to bury stay listed in the entry ("dirty") until
that is done, so a crash in between is completed by the retry or by the next version."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass

import orjson
from azure.core import MatchConditions
from azure.cosmos import ContainerProxy
from azure.cosmos.exceptions import CosmosAccessConditionFailedError, CosmosResourceNotFoundError

from backends.cosmos.connection import WriterPool
from backends.cosmos.day_sums import SUMS_FIELDS, DayChange, in_day_batches
from backends.cosmos.day_sums import write_if_replaces as write_with_day
from backends.cosmos.expiry import DayExpiry, with_ttl
from backends.cosmos.items import chunks, json_safe_int, query, stored_version, without_system_properties
from backends.cosmos.keys import day_key, record_id
from backends.cosmos.record_index import RecordIndex, entry_of
from backends.cosmos.transactional import BatchOperation, in_batches
from core import faults
from core.records import RecordMove, StoreDay, TradeRecordRow
from core.stored_json import JsonObject
from core.versions import Version, trade_record_replaces

# A tombstone only has to outlive a write already in flight when its record moved (seconds to
# minutes); a day is far beyond any request or retry.
TOMBSTONE_TTL_SECONDS = 86_400

Saved = tuple[int, RecordMove | None]  # (1, its move or None) when the row was newer than what was stored


def record_item(partner_id: str, row: TradeRecordRow, mine: Version, ttl: int | None = None) -> JsonObject:
    # The narrow fields reconciliation reads are top-level properties (a projection reads them); the record
    # as received goes under "document", which no index covers. Its payment_ids are in its index entry, where
    # the partner's look-up finds them.
    item = {
        "id": record_id(row.trade_record_id),
        "pk": day_key(partner_id, row.store_id, row.business_date.isoformat()),
        "type": "record",
        "trade_record_id": row.trade_record_id,
        "version": row.version,
        "last_modified_us": json_safe_int(mine.modified_us),
        "source_type": row.source_transaction_type,
        "item_rows": row.item_rows,
        "payment_rows": row.payment_rows,
        "total_minor": json_safe_int(row.total_minor),
        "tax_minor": json_safe_int(row.tax_minor),
        "tip_minor": json_safe_int(row.tip_minor),
        "payments": {kind: json_safe_int(amount) for kind, amount in row.payments_minor.items()},
        "product_lines": row.product_lines,
        # Already JSON: written as it is by the SDK's orjson (sdk_json.py), never parsed and written again.
        "document": orjson.Fragment(row.document_json) if row.document_json else None,
    }
    return with_ttl(item, ttl)  # beside the document, which stays a fragment (expiry.py)


def stored_bytes(item: JsonObject) -> int:
    """The bytes of an item as sent (a batch request may carry 2 MB); a record's document is a fragment of
    JSON already, copied as it is."""
    return len(orjson.dumps(item))


def moved_forward(entry: JsonObject, mine: Version, current: JsonObject | None) -> JsonObject | None:
    """The entry to write over `current` (None: it stays): this version's, with the store-days to bury."""
    if current is None:
        return entry
    if not trade_record_replaces(mine, stored_version(current)):
        return None
    here = [entry["store_id"], entry["business_date"]]
    there = [current["store_id"], current["business_date"]]
    dirty = sorted({tuple(day) for day in current["dirty"] + [there] if day != here})
    # An entry stays in the partition it was created in (decision 0092).
    return {**entry, "pk": current["pk"], "previous": there, "dirty": [list(day) for day in dirty]}


def _here(entry: JsonObject) -> list[str]:
    return [entry["store_id"], entry["business_date"]]


def saved(written: JsonObject, batch_id: str, row: TradeRecordRow) -> Saved:
    """What the row changed, told by the entry that holds its version: the entry names the batch that wrote
    it and the store-day of the version it replaced, so a retry reports what its first attempt did."""
    if written.get("batch_id") != batch_id:
        return 0, None  # the same version, written by another batch: a resend under a new batch_id
    previous = written.get("previous")
    if previous is None or previous == _here(written):
        return 1, None
    return 1, RecordMove(
        row.trade_record_id,
        StoreDay(previous[0], dt.date.fromisoformat(previous[1])),
        StoreDay(row.store_id, row.business_date),
    )


@dataclass(eq=False)  # compared and hashed as itself
class _Known:
    """A row whose entry was read: what was decided for it, step by step."""

    row: TradeRecordRow
    entry: JsonObject  # this version's entry
    stored: JsonObject | None  # the entry as read
    wanted: JsonObject | None = None  # the entry to write over it
    written: JsonObject | None = None  # the entry holding this version, once moved forward (or found so)
    result: Saved | None = None

    @property
    def was_here(self) -> bool:
        return self.stored is not None and _here(self.stored) == _here(self.entry)


class RecordWrites:
    def __init__(self, container: ContainerProxy, writers: WriterPool, index: RecordIndex, expiry: DayExpiry) -> None:
        self._trades = container
        self._writers = writers
        self._index = index
        self._expiry = expiry

    def _record_item(self, partner_id: str, row: TradeRecordRow, mine: Version) -> JsonObject:
        return record_item(partner_id, row, mine, self._expiry.ttl(row.business_date))

    def _entry_of(self, partner_id: str, batch_id: str, row: TradeRecordRow, mine: Version) -> JsonObject:
        return entry_of(partner_id, batch_id, row, mine, self._expiry.ttl(row.business_date))

    # -- in transactional batches -----------------------------------------------------------------

    def create_records(self, partner_id: str, rows: list[TradeRecordRow]) -> list[TradeRecordRow]:
        """Create the records in transactional batches per store-day; the rows of a refused batch are returned."""
        work: list[tuple[TradeRecordRow, BatchOperation, int, DayChange]] = [
            (row, ("create", (item,)), stored_bytes(item), DayChange.of_write(item, None, item.get("ttl")))
            for row in rows
            for item in (self._record_item(partner_id, row, _version(row)),)
        ]
        done = in_day_batches(self._trades, self._writers, work, "cosmos.record")
        return [row for row, answer in done if answer is None]

    def save_known(self, partner_id: str, batch_id: str, rows: list[TradeRecordRow]) -> list[Saved]:
        """Rows whose entry most likely exists, in transactional batches: the entries read in one query and
        moved forward per index bucket; then the records written per store-day; then, for records that moved,
        tombstones in the store-days they left and, last, the entries' lists of days to bury cleared. A
        refused batch's rows go item by item (`save_one`, or `_complete` once their entry is written).
        Results in the order of `rows`."""
        stored = self._index.entries(partner_id, [row.trade_record_id for row in rows])
        known = [self._decided(partner_id, batch_id, row, stored.get(row.trade_record_id)) for row in rows]
        to_write = [one for one in known if one.result is None and one.written is None]
        writes: list[tuple[_Known, BatchOperation, int]] = [
            (one, _entry_write(one), len(orjson.dumps(_wanted(one)))) for one in to_write if one.stored is not None
        ]
        answered = in_batches(self._trades, self._writers, writes, "cosmos.version_entry")
        # Entries found nowhere: created in their leaf with its count (decision 0092).
        answered += self._index.create(partner_id, [(one, _wanted(one)) for one in to_write if one.stored is None])
        for one, answer in answered:
            if answer is not None:  # else its batch was refused: decided item by item (save_one)
                one.written = {**_wanted(one), "_etag": answer["eTag"]}
        written = [one for one in known if one.written is not None]
        by_item = self._write_with_rule(
            [(one, self._record_item(partner_id, one.row, _version(one.row)), None) for one in written], "cosmos.record"
        )
        moved = [one for one in written if one not in by_item and _written(one)["dirty"]]
        by_item |= self._write_with_rule(
            [
                (
                    one,
                    tombstone(partner_id, one.row.trade_record_id, store_id, business_date, _version(one.row)),
                    self._expiry.ttl(dt.date.fromisoformat(business_date)),
                )
                for one in moved
                for store_id, business_date in _written(one)["dirty"]
            ],
            "cosmos.tombstone",
        )
        self._clear_days_to_bury([one for one in moved if one not in by_item])
        for one in written:
            if one not in by_item:
                one.result = saved(_written(one), batch_id, one.row)
        rest = [one for one in known if one.result is None]
        outcomes = self._writers.each(lambda one: self._one_by_one(partner_id, batch_id, one), rest)
        for one, outcome in zip(rest, outcomes, strict=True):
            one.result = outcome
        return [_result(one) for one in known]

    def _decided(self, partner_id: str, batch_id: str, row: TradeRecordRow, stored: JsonObject | None) -> _Known:
        mine = _version(row)
        one = _Known(row, self._entry_of(partner_id, batch_id, row, mine), stored)
        one.wanted = moved_forward(one.entry, mine, stored)
        if one.wanted is not None:
            return one  # its entry is to be written
        if stored is not None and stored_version(stored) == mine and one.was_here:
            one.written = stored  # a resend or a retry: complete what it may have left undone
        else:
            one.result = (0, None)  # a later version (or this one, first received elsewhere) stays
        return one

    def _one_by_one(self, partner_id: str, batch_id: str, one: _Known) -> Saved:
        if one.written is None:
            return self.save_one(partner_id, batch_id, one.row)
        return self._complete(partner_id, batch_id, one.row, one.written, one.was_here)

    def _write_with_rule(self, items: list[tuple[_Known, JsonObject, int | None]], point: str) -> set[_Known]:
        """Records or tombstones (of a row's version) written in transactional batches per store-day with the
        version rule: created when absent, replaced on the ETag read when older, left when newer or equal;
        each batch with its day's sums item (the day's ttl given for a tombstone). Returns the rows of
        refused batches, for the item-by-item path."""
        by_day: dict[str, list[tuple[_Known, JsonObject, int | None]]] = defaultdict(list)
        for one, item, ttl in items:
            by_day[item["pk"]].append((one, item, item.get("ttl") if ttl is None else ttl))
        work: list[tuple[_Known, BatchOperation, int, DayChange]] = []
        for pk, some in by_day.items():
            stored = self._stored_records(pk, [item["id"] for _, item, _ in some])
            for one, item, ttl in some:
                current = stored.get(item["id"])
                size, change = stored_bytes(item), DayChange.of_write(item, current, ttl)
                if current is None:
                    work.append((one, ("create", (item,)), size, change))
                elif trade_record_replaces(_version(one.row), stored_version(current)):
                    replace = ("replace", (item["id"], item), {"if_match_etag": current["_etag"]})
                    work.append((one, replace, size, change))
        done = in_day_batches(self._trades, self._writers, work, point)
        return {one for one, answer in done if answer is None}

    def _clear_days_to_bury(self, moved: list[_Known]) -> None:
        """The entries' lists of store-days to bury emptied, on the ETag written: a newer version that took
        over in between keeps its own list (a refused batch: each entry tried alone, a refusal ignored)."""
        work: list[tuple[_Known, BatchOperation, int]] = []
        for one in moved:
            entry = _written(one)
            cleared = {**without_system_properties(entry), "dirty": []}
            operation = ("replace", (entry["id"], cleared), {"if_match_etag": entry["_etag"]})
            work.append((one, operation, len(orjson.dumps(cleared))))
        done = in_batches(self._trades, self._writers, work, "cosmos.cleanup")
        refused = [one for one, answer in done if answer is None]
        self._writers.each(lambda one: self._clear_one(_written(one)), refused)

    def _clear_one(self, written: JsonObject) -> None:
        try:
            self._trades.replace_item(
                written["id"],
                {**without_system_properties(written), "dirty": []},
                etag=written["_etag"],
                match_condition=MatchConditions.IfNotModified,
            )
        except (CosmosAccessConditionFailedError, CosmosResourceNotFoundError):
            pass  # a newer version took over, and with it the days still to bury

    def _stored_records(self, pk: str, ids: list[str]) -> dict[str, JsonObject]:
        found: dict[str, JsonObject] = {}
        for some in chunks(ids):
            for item in query(
                self._trades,
                f"SELECT c.id, c.type, c.version, c.last_modified_us, c._etag, {SUMS_FIELDS} FROM c "
                "WHERE c.pk = @pk AND ARRAY_CONTAINS(@ids, c.id)",
                pk,
                pk=pk,
                ids=some,
            ):
                found[item["id"]] = item
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
        was_here = before is not None and _here(before) == _here(entry)
        if update.after is not None:
            faults.point("cosmos.version_entry")
            return self._complete(partner_id, batch_id, row, update.after, was_here)
        if before is not None and stored_version(before) == mine and was_here:
            return self._complete(partner_id, batch_id, row, before, True)  # a resend or a retry
        return 0, None  # a later version (or the same version first received elsewhere) stays

    def _complete(
        self, partner_id: str, batch_id: str, row: TradeRecordRow, written: JsonObject, was_here: bool
    ) -> Saved:
        """The record of an entry that holds its version, then the store-days it left buried and the entry's
        list of them cleared."""
        mine = _version(row)
        self.put_record(partner_id, row, mine, expected=was_here)
        faults.point("cosmos.record")
        dirty = written["dirty"]
        for store_id, business_date in dirty:
            self.bury(partner_id, row.trade_record_id, store_id, business_date, mine)
            faults.point("cosmos.tombstone")
        if dirty:
            self._clear_one(written)
            faults.point("cosmos.cleanup")
        return saved(written, batch_id, row)

    def put_new_record(self, partner_id: str, row: TradeRecordRow) -> None:
        self.put_record(partner_id, row, _version(row), expected=False)

    def put_record(self, partner_id: str, row: TradeRecordRow, mine: Version, expected: bool) -> None:
        item = self._record_item(partner_id, row, mine)
        write_with_day(self._trades, item, mine, item.get("ttl"), create_first=not expected)

    def bury(self, partner_id: str, trade_record_id: str, store_id: str, business_date: str, mine: Version) -> None:
        item = tombstone(partner_id, trade_record_id, store_id, business_date, mine)
        write_with_day(self._trades, item, mine, self._expiry.ttl(dt.date.fromisoformat(business_date)))


def tombstone(partner_id: str, trade_record_id: str, store_id: str, business_date: str, mine: Version) -> JsonObject:
    """What a record leaves where it was when a version moves it, so that a slower writer of an older version
    cannot bring it back there."""
    return {
        "id": record_id(trade_record_id),
        "pk": day_key(partner_id, store_id, business_date),
        "type": "tombstone",
        "version": mine.number,
        "last_modified_us": json_safe_int(mine.modified_us),
        "ttl": TOMBSTONE_TTL_SECONDS,
    }


def _result(one: _Known) -> Saved:
    assert one.result is not None  # every row is decided by the batches or item by item
    return one.result


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
