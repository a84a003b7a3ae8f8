"""Writing trade records (container `trade-records`): the latest version of each record for the whole
partner, kept by its entry in the record index (record_index.py), the record in its store-day's partition,
tombstones where a record moved from, and the batch entry batch_seqs reads. New records (first versions) are
written in transactional batches, entries then records; anything else, and whatever a batch refused, goes
record by record. docs/decisions.md ("Cosmos DB", "The record index on Cosmos DB") says why."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Collection

import orjson
from azure.core import MatchConditions
from azure.cosmos.exceptions import CosmosAccessConditionFailedError, CosmosResourceNotFoundError

from backends.cosmos.conditional import update_item, write_if_replaces
from backends.cosmos.connection import WriterPool
from backends.cosmos.items import json_safe_int, stored_version, without_system_properties
from backends.cosmos.keys import compound_key, day_key, partner_date, record_id
from backends.cosmos.markers import Markers
from backends.cosmos.record_index import RecordIndex, entry_of
from backends.cosmos.transactional import chunked, execute
from core import faults
from core.clock import to_utc_text
from core.records import (
    BatchMarker,
    RecordChanges,
    RecordMove,
    SavedTradeRecords,
    StoreDay,
    StoredVersion,
    TradeRecordRow,
)
from core.versions import Version, trade_record_replaces

# A tombstone only has to outlive a write already in flight when its record moved (seconds to
# minutes); a day is far beyond any request or retry.
TOMBSTONE_TTL_SECONDS = 86_400


def latest_of_each(rows: list[TradeRecordRow]) -> list[TradeRecordRow]:
    """One row per trade_record_id, the one the version rule keeps (the first of equals), as SQLite's upsert
    keeps it: rows of one batch are written concurrently, and two of one record would race."""
    kept: dict[str, TradeRecordRow] = {}
    for row in rows:
        other = kept.get(row.trade_record_id)
        if trade_record_replaces(
            Version.of(row.version, row.last_modified_at),
            None if other is None else Version.of(other.version, other.last_modified_at),
        ):
            kept[row.trade_record_id] = row
    return list(kept.values())


def batch_entry(marker: BatchMarker) -> dict | None:
    """An entry per received batch in its store-day's partition: what batch_seqs reads, and the marker
    without its changes, which HQ's dashboard reads (overview.py: a store-day's batches in its partition,
    a partner's store-days over a range of dates across partitions)."""
    if marker.store_id is None or marker.business_date is None:
        return None
    return {
        "id": compound_key("batch", marker.batch_id),
        "pk": day_key(marker.partner_id, marker.store_id, marker.business_date.isoformat()),
        "type": "batch",
        "batch_id": marker.batch_id,
        "batch_seq": marker.batch_seq,
        "partner_id": marker.partner_id,
        "store_id": marker.store_id,
        "business_date": marker.business_date.isoformat(),
        "record_count": marker.record_count,
        "body_digest": marker.body_digest,
        "received_at": to_utc_text(marker.received_at),
        "warnings": marker.warnings,
        "partner_date": partner_date(marker.partner_id, marker.business_date.isoformat()),  # the one indexed
    }


class TradeRecords:
    def __init__(self, container, writers: WriterPool, markers: Markers) -> None:
        self._trades = container
        self._writers = writers
        self._markers = markers
        self.index = RecordIndex(container, writers)

    def save(self, marker: BatchMarker, rows: list[TradeRecordRow]) -> SavedTradeRecords:
        saved = self._save_rows(marker.partner_id, marker.batch_id, latest_of_each(rows))
        moves = tuple(move for newer, move in saved if move is not None)
        changes = RecordChanges(sum(newer for newer, _ in saved), moves)
        marker = marker.with_changes(changes)
        received = batch_entry(marker)
        if received is not None:
            self._trades.upsert_item(received)
            faults.point("cosmos.batch_entry")
        stored = self._markers.commit(marker)
        if stored is not None and received is not None:
            self._settle_batch_entry(received, stored)
        return SavedTradeRecords(stored, changes)

    def versions(self, partner_id: str, trade_record_ids: Collection[str]) -> dict[str, StoredVersion]:
        return self.index.versions(partner_id, trade_record_ids)

    def _save_rows(
        self, partner_id: str, batch_id: str, rows: list[TradeRecordRow]
    ) -> list[tuple[int, RecordMove | None]]:
        """What each row changed: (1, its move or None) when it is newer than the version stored, else (0, None).

        First versions, nearly every record, are most likely new: their entries are created in transactional
        batches per index bucket, then the records in batches in their store-day. An entry created here makes
        the record this batch's to write, and nothing older can exist, so the record is simply created. A
        batch refused (an entry or record exists: a resend under a new batch_id, a retry after a crash, a
        concurrent writer) sends its rows down the item-by-item path, which decides on what is stored."""
        firsts = [row for row in rows if row.version == 1]
        refused = self.index.create_entries(partner_id, batch_id, firsts)
        left = {id(row) for row in refused}
        created = [row for row in firsts if id(row) not in left]
        self._writers.each(lambda row: self._put_new_record(partner_id, row), self._create_records(partner_id, created))
        others = refused + [row for row in rows if row.version != 1]
        saved = self._writers.each(lambda row: self._save_trade_record(partner_id, batch_id, row), others)
        return [(1, None)] * len(created) + saved

    def _create_records(self, partner_id: str, rows: list[TradeRecordRow]) -> list[TradeRecordRow]:
        """Create the records in transactional batches per store-day; the rows of a refused batch are returned."""
        work: dict[str, list] = defaultdict(list)
        for row in rows:
            item = self._record_item(partner_id, row, Version.of(row.version, row.last_modified_at))
            work[item["pk"]].append((row, ("create", (item,)), len(row.document_json) + 1024))
        runs = [(pk, run) for pk, day in work.items() for run in chunked(day)]
        refused = self._writers.each(
            lambda job: execute(self._trades, job[0], job[1], after=lambda: faults.point("cosmos.record")), runs
        )
        return [row for rows_of_run in refused for row in rows_of_run]

    def _settle_batch_entry(self, ours: dict, stored: BatchMarker) -> None:
        """A twin with the same batch_id won: its entry is the one that counts."""
        theirs = batch_entry(stored) if stored.kind == "trade-records" else None
        if theirs is not None and theirs["pk"] == ours["pk"]:
            self._trades.upsert_item(theirs)
            return
        try:
            self._trades.delete_item(ours["id"], partition_key=ours["pk"])
        except CosmosResourceNotFoundError:
            pass

    def _save_trade_record(self, partner_id: str, batch_id: str, row: TradeRecordRow) -> tuple[int, RecordMove | None]:
        """Keep the latest version of a trade record for the whole partner, one record at a time.

        Its entry in the record index says which version is the latest and in which store-day it lives; it
        changes only by ETag-conditioned writes, so of concurrent writers exactly one moves it forward at a
        time. The record itself lives in its store-day's partition. A record that moves to another store or
        date leaves a tombstone where it was, so that a slower writer of an older version cannot bring it
        back; the store-days still to bury stay listed in the entry ("dirty") until that is done, so a crash
        in between is completed by the retry or by the next version.

        Returns (1, the move or None) when this version is newer than the one stored, else (0, None). The
        entry names the batch that wrote it and the store-day of the version it replaced ("previous"), so a
        retry of the same batch (same version, found already written) reports what its first attempt did.
        """
        mine = Version.of(row.version, row.last_modified_at)
        entry = entry_of(partner_id, batch_id, row, mine)
        here = [entry["store_id"], entry["business_date"]]

        def moved_forward(current: dict | None) -> dict | None:
            if current is None:
                return entry
            if not trade_record_replaces(mine, stored_version(current)):
                return None
            there = [current["store_id"], current["business_date"]]
            dirty = sorted({tuple(day) for day in current["dirty"] + [there] if day != here})
            return {**entry, "previous": there, "dirty": [list(day) for day in dirty]}

        # Read first: a record here is a later version, or a first version whose batch found entries (a resend
        # under a new batch_id, a retry): its entry most likely exists.
        update = update_item(self._trades, entry["id"], entry["pk"], moved_forward)
        before = update.before
        there = None if before is None else [before["store_id"], before["business_date"]]
        if update.after is not None:
            written, was_here = update.after, there == here
            faults.point("cosmos.version_entry")
        elif before is not None and stored_version(before) == mine and there == here:
            written, was_here = before, True  # a resend or a retry: complete what it may have left undone
        else:
            return 0, None  # a later version (or the same version first received elsewhere) stays

        self._put_record(partner_id, row, mine, expected=was_here)
        faults.point("cosmos.record")
        dirty = written["dirty"]
        for store_id, business_date in dirty:
            self._bury(partner_id, row.trade_record_id, store_id, business_date, mine)
            faults.point("cosmos.tombstone")
        if dirty:
            try:
                self._trades.replace_item(
                    entry["id"],
                    {**without_system_properties(written), "dirty": []},
                    etag=written["_etag"],
                    match_condition=MatchConditions.IfNotModified,
                )
            except (CosmosAccessConditionFailedError, CosmosResourceNotFoundError):
                pass  # a newer version took over, and with it the days still to bury
            faults.point("cosmos.cleanup")
        if written.get("batch_id") != batch_id:
            return 0, None  # the same version, written by another batch: a resend under a new batch_id
        previous = written.get("previous")
        if previous is None or previous == here:
            return 1, None
        return 1, RecordMove(
            row.trade_record_id,
            StoreDay(previous[0], dt.date.fromisoformat(previous[1])),
            StoreDay(row.store_id, row.business_date),
        )

    @staticmethod
    def _record_item(partner_id: str, row: TradeRecordRow, mine: Version) -> dict:
        # The narrow fields reconciliation reads are top-level properties (a projection reads them);
        # the record as received goes under "document", which no index covers. Its payment_ids are in
        # its index entry, where the partner's look-up finds them.
        return {
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
            "document": orjson.loads(row.document_json) if row.document_json else None,
        }

    def _put_new_record(self, partner_id: str, row: TradeRecordRow) -> None:
        self._put_record(partner_id, row, Version.of(row.version, row.last_modified_at), expected=False)

    def _put_record(self, partner_id: str, row: TradeRecordRow, mine: Version, expected: bool) -> None:
        item = self._record_item(partner_id, row, mine)
        write_if_replaces(self._trades, item, mine, trade_record_replaces, create_first=not expected)

    def _bury(self, partner_id: str, trade_record_id: str, store_id: str, business_date: str, mine: Version) -> None:
        tombstone = {
            "id": record_id(trade_record_id),
            "pk": day_key(partner_id, store_id, business_date),
            "type": "tombstone",
            "version": mine.number,
            "last_modified_us": json_safe_int(mine.modified_us),
            "ttl": TOMBSTONE_TTL_SECONDS,
        }
        write_if_replaces(self._trades, tombstone, mine, trade_record_replaces)
