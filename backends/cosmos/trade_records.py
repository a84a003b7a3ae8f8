"""Writing trade records (container `trade-records`): the latest version of each record for the whole
partner, kept by its entry in the record index (record_index.py), the record in its store-day's partition,
tombstones where a record moved from, and the batch entry batch_seqs reads. New records (first versions) are
written in transactional batches, entries then records; anything else, and whatever a batch refused, goes
record by record. Decisions 0053 and 0056 say why."""

from __future__ import annotations

from collections.abc import Collection

from azure.cosmos import ContainerProxy

from backends.cosmos.connection import WriterPool
from backends.cosmos.day_sums import DayChange, DayWriter, Rider
from backends.cosmos.expiry import DayExpiry, with_ttl
from backends.cosmos.keys import compound_key, day_key, partner_date
from backends.cosmos.markers import Markers
from backends.cosmos.record_index import RecordIndex
from backends.cosmos.record_items import stored_bytes
from backends.cosmos.record_writes import RecordWrites, RiderOf
from backends.cosmos.saves import Saved
from backends.cosmos.transactional import BatchOperation
from core import faults
from core.clock import to_utc_text
from core.records import (
    BatchMarker,
    RecordChanges,
    SavedTradeRecords,
    StoredVersion,
    TradeRecordRow,
)
from core.stored_json import JsonObject
from core.versions import Version, trade_record_replaces


def latest_of_each(rows: list[TradeRecordRow]) -> list[TradeRecordRow]:
    """One row per trade_record_id, the one the version rule keeps (the first of equals), as SQLite's upsert
    keeps it: rows of one batch are written concurrently, and two of one record would race."""
    kept: dict[str, TradeRecordRow] = {}
    for row in rows:
        other = kept.get(row.trade_record_id)
        if other is None:  # nearly always: no version to compare (decision 0130)
            kept[row.trade_record_id] = row
        elif trade_record_replaces(
            Version.of(row.version, row.last_modified_at), Version.of(other.version, other.last_modified_at)
        ):
            kept[row.trade_record_id] = row
    return list(kept.values())


def batch_entry(marker: BatchMarker, ttl: int | None = None) -> JsonObject | None:
    """An entry per received batch in its store-day's partition: what batch_seqs reads, and the marker
    without its changes, which HQ's dashboard reads (overview.py: a store-day's batches in its partition,
    a partner's store-days over a range of dates across partitions)."""
    if marker.store_id is None or marker.business_date is None:
        return None
    entry = {
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
    return with_ttl(entry, ttl)  # it leaves with the store-day's records (expiry.py)


class TradeRecords:
    def __init__(
        self,
        container: ContainerProxy,
        writers: WriterPool,
        markers: Markers,
        expiry: DayExpiry,
        index_max_entries: int,
    ) -> None:
        self._trades = container
        self._writers = writers
        self._markers = markers
        self._expiry = expiry
        self.index = RecordIndex(container, writers, expiry, index_max_entries)
        self.writes = RecordWrites(container, writers, self.index, expiry)

    def _batch_entry(self, marker: BatchMarker) -> JsonObject | None:
        return batch_entry(marker, None if marker.business_date is None else self._expiry.ttl(marker.business_date))

    def save(self, marker: BatchMarker, rows: list[TradeRecordRow]) -> SavedTradeRecords:
        # The batch entry goes with the last transactional batch of its day's records once the records that
        # moved are known (its warnings count them), else on its own after them (decision 0121).
        riders: list[Rider] = []

        def rider_of(moved: int) -> Rider:
            entry = self._batch_entry(marker.with_moves(moved))
            assert entry is not None  # only asked for a batch that has a store-day
            riders.append(Rider(("upsert", (entry,)), stored_bytes(entry), _entered(entry)))
            return riders[-1]

        has_day = marker.store_id is not None and marker.business_date is not None
        saved = self._save_rows(marker.partner_id, marker.batch_id, latest_of_each(rows), rider_of if has_day else None)
        moves = tuple(move for newer, move in saved if move is not None)
        changes = RecordChanges(sum(newer for newer, _ in saved), moves)
        marker = marker.with_changes(changes)
        received = self._batch_entry(marker)
        if received is not None:
            if not any(rider.written and rider.operation[1][0] == received for rider in riders):
                _write_batch_entry(self._trades, ("upsert", (received,)), received)
            faults.point("cosmos.batch_entry")
        stored = self._markers.commit(marker)
        if stored is not None and received is not None:
            self._settle_batch_entry(received, stored)
        return SavedTradeRecords(stored, changes)

    def versions(self, partner_id: str, trade_record_ids: Collection[str]) -> dict[str, StoredVersion]:
        return self.index.versions(partner_id, trade_record_ids)

    def _save_rows(
        self, partner_id: str, batch_id: str, rows: list[TradeRecordRow], rider: RiderOf | None = None
    ) -> list[Saved]:
        """What each row changed: (1, its move or None) when it is newer than the version stored, else (0, None).

        First versions, nearly every record, are most likely new: their entries are created in transactional
        batches per index bucket without a read, then the records in batches in their store-day. An entry
        created here makes the record this batch's to write, and nothing older can exist, so the record is
        simply created (a refused records batch: each record decided on what is stored). A refused entries
        batch (an entry exists: a resend under a new batch_id, a retry after a crash, a concurrent writer)
        sends its rows, with the later versions, to the path that reads their entries first. `rider`: with the
        records of the path that writes last."""
        firsts = [row for row in rows if row.version == 1]
        refused = self.index.create_entries(partner_id, batch_id, firsts)
        left = {id(row) for row in refused}
        created = [row for row in firsts if id(row) not in left]
        known = refused + [row for row in rows if row.version != 1]
        refused_records = self.writes.create_records(partner_id, created, None if known or not rider else rider(0))
        self._writers.each(lambda row: self.writes.put_new_record(partner_id, row), refused_records)
        later = self.writes.save_known(partner_id, batch_id, known, rider) if known else []
        return [(1, None)] * len(created) + later

    def _settle_batch_entry(self, ours: JsonObject, stored: BatchMarker) -> None:
        """A twin with the same batch_id won: its entry is the one that counts."""
        theirs = self._batch_entry(stored) if stored.kind == "trade-records" else None
        if theirs is not None and theirs["pk"] == ours["pk"]:
            _write_batch_entry(self._trades, ("upsert", (theirs,)), theirs)
            return
        _write_batch_entry(self._trades, ("delete", (ours["id"],)), ours, gone=True)


def _entered(entry: JsonObject) -> DayChange:
    """What a batch entry written changes in its day's sums item: the batch_seq of its batch."""
    return DayChange(batches={entry["batch_id"]: entry["batch_seq"]}, ttl=entry.get("ttl"))


def _write_batch_entry(
    container: ContainerProxy, operation: BatchOperation, entry: JsonObject, *, gone: bool = False
) -> None:
    """A batch entry written (or deleted) with its day's sums item, which lists the day's batch_seqs
    (day_sums.py); an entry already deleted only leaves the list."""
    change = DayChange(batches_gone=[entry["batch_id"]], ttl=entry.get("ttl")) if gone else _entered(entry)
    writer = DayWriter(container, entry["pk"])
    if writer.execute([operation], change) is None:  # only a delete is refused: the entry is gone
        writer.execute([], change)
