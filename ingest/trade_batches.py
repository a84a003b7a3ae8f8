"""What a batch of trade records is as a whole (POST /trade-records): its marker and what its body says, and
what a resend of it is answered and finishes: the first answer's TRADE_RECORD_MOVED warnings (decision 0030) and
the days its first attempt changed."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import orjson

from core import errors
from core.ports import Reconciliations
from core.queue_ports import DelayedQueue
from core.reconcile_reruns import reopen_changed_days
from core.records import TRADE_RECORD_MOVED, BatchMarker, RecordMove, StoreDay
from ingest.batches import new_marker
from ingest.one_parse import read_slow_way
from ingest.parsing import raw_object
from ingest.record_documents import document_json
from ingest.wire.requests import TradeRecordsBatch
from ingest.wire.responses import BatchWarning

if TYPE_CHECKING:
    from hashlib import _Hash as Hash


def moved_warnings(batch: TradeRecordsBatch, moves: tuple[RecordMove, ...]) -> list[BatchWarning]:
    """TRADE_RECORD_MOVED at each record whose version moved it from another store-day: trade_record_id is
    unique across the partner's stores and dates, so a POS reusing one (ticket numbers restarting every day)
    moves the earlier transaction, which this tells. The index is the record's last in the batch."""
    return _moved_warnings([record.trade_record_id for record in batch.trade_records], moves)


def resent_moved_warnings(stored: BatchMarker | None, body: bytes) -> list[BatchWarning]:
    """The TRADE_RECORD_MOVED warnings of a batch's first answer, for a resend of it: they follow from what the
    batch changed (kept in its marker), at the records' indexes in the resent body. None for a marker stored
    before the answers were kept whole: its counts by code already tell them (`first_answer_warnings`)."""
    if stored is None or stored.answer is None or stored.changes is None or not stored.changes.moves:
        return []
    records = (raw_object(body) or {}).get("trade_records")
    if not isinstance(records, list):
        records = []
    ids = [record.get("trade_record_id") if isinstance(record, dict) else None for record in records]
    return _moved_warnings(ids, stored.changes.moves)


def _moved_warnings(trade_record_ids: list[object], moves: tuple[RecordMove, ...]) -> list[BatchWarning]:
    index_of = {trade_record_id: index for index, trade_record_id in enumerate(trade_record_ids)}
    return [
        BatchWarning(
            TRADE_RECORD_MOVED,
            f"trade_records[{index_of[move.trade_record_id]}]" if move.trade_record_id in index_of else "$",
            f"this version moved trade record {move.trade_record_id} from {move.left} to {move.to}; "
            "a trade_record_id names one transaction across all stores and dates, and its earlier "
            f"store-day {move.left} is reconciled again without it",
            field="store_id" if move.left.store_id != move.to.store_id else "business_date",
        )
        for move in moves
    ]


def finish_resent(
    storage: Reconciliations, queue: DelayedQueue, partner_id: str, stored: BatchMarker | None, delay_seconds: int
) -> None:
    """A batch received before (a retry): reopen what its first attempt changed, in case it failed before."""
    if (
        stored is None
        or stored.kind != "trade-records"
        or stored.changes is None
        or stored.store_id is None
        or stored.business_date is None
    ):
        return
    reopen_changed_days(
        storage,
        queue,
        partner_id,
        StoreDay(stored.store_id, stored.business_date),
        stored.changes,
        delay_seconds,
        checked_before=stored.received_at,
    )


def meaning_of_records(batch: TradeRecordsBatch) -> Hash:
    """The start of what a batch of trade records says (ingest/body_digests.py `meaning_digest`): its
    batch_id's UUID, store-day and batch_seq. Its records follow as stored (`document_json` adds each), which
    the fast path and the slow way write alike; the accept writes them anyway, so only the hashing is added."""
    meaning = hashlib.sha256(batch.batch_key.encode())
    meaning.update(orjson.dumps([batch.store_id, batch.business_date.isoformat(), batch.batch_seq]))
    return meaning


def trade_records_meaning(batch: TradeRecordsBatch) -> str:
    """What a batch of trade records says, its documents written again (a resend, the marker of a test)."""
    meaning = meaning_of_records(batch)
    for record in batch.trade_records:
        document_json(record, meaning)
    return meaning.hexdigest()


def resent_meaning(body: bytes) -> str | None:
    """What a resent batch of trade records says, read the slow way (only for a resend of other bytes)."""
    try:
        batch = read_slow_way(TradeRecordsBatch, body)[0]
    except errors.ApiError:
        return None
    return trade_records_meaning(batch)


def trade_records_marker(
    partner_id: str, batch: TradeRecordsBatch, record_count: int, body: bytes, meaning: str | None = None
) -> BatchMarker:
    """The marker of a batch of trade records, which also keeps its store-day and batch_seq. meaning: its
    `trade_records_meaning`, taken here when not given."""
    if meaning is None:
        meaning = trade_records_meaning(batch)
    return new_marker(
        partner_id,
        batch,
        "trade-records",
        record_count,
        body,
        meaning,
        store_id=batch.store_id,
        business_date=batch.business_date,
        batch_seq=batch.batch_seq,
    )
