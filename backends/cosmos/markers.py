"""Batch markers (container `batches`) and the receipts a mapping or a close keeps of every batch that
wrote it. A batch write opens by looking for its marker (answered ALREADY_RECEIVED when found) and ends
by creating it, create-if-absent: a 409 means a concurrent twin won, and its stored marker is the answer.
Receipts never expire, unlike markers, so a batch resent after its marker is gone is still known."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from typing import Any, TypeVar, overload

from azure.cosmos import ContainerProxy
from azure.cosmos.exceptions import CosmosResourceExistsError

from backends.cosmos.conditional import TRY_AGAIN, _TryAgain, retry_until_settled, update_item
from backends.cosmos.expiry import DayExpiry, with_ttl
from backends.cosmos.items import forget, read_or_none
from backends.cosmos.keys import marker_id, marker_key
from core import faults
from core.clock import from_utc_text, to_utc_text
from core.kept_warnings import kept_warnings_json, kept_warnings_of
from core.records import BatchMarker, RecordChanges
from core.stored_json import JsonObject

# Batch markers never expire unless BATCH_MARKER_TTL_DAYS opts in (decision 0032): a batch resent after its
# marker is gone would be taken for a new one.
DEFAULT_MARKER_TTL_DAYS = 0

T = TypeVar("T")


class Markers:
    """The batch markers of every partner, one logical partition each."""

    def __init__(
        self, container: ContainerProxy, marker_ttl_days: int = DEFAULT_MARKER_TTL_DAYS, expiry: DayExpiry | None = None
    ) -> None:
        self._batches = container
        self.ttl_seconds = marker_ttl_days * 86_400
        self._expiry = expiry or DayExpiry()

    def _ttl(self, marker: BatchMarker) -> int | None:
        """BATCH_MARKER_TTL_DAYS, or a trade record batch's store-day's expiry when sooner: its marker leaves
        the hot store with the day's records, as on SQLite (decision 0086)."""
        ttls = [self.ttl_seconds] if self.ttl_seconds else []
        if marker.kind == "trade-records" and marker.business_date is not None:
            day_ttl = self._expiry.ttl(marker.business_date)
            ttls += [] if day_ttl is None else [day_ttl]
        return min(ttls) if ttls else None

    def find(self, partner_id: str, batch_id: str) -> BatchMarker | None:
        item = read_or_none(self._batches, marker_id(batch_id), marker_key(partner_id, batch_id))
        if item is None:
            return None
        return BatchMarker(
            item["partner_id"],
            item["batch_id"],
            item["kind"],
            item["record_count"],
            item["body_digest"],
            from_utc_text(item["received_at"]),
            item["store_id"],
            None if item["business_date"] is None else dt.date.fromisoformat(item["business_date"]),
            item["batch_seq"],
            RecordChanges.from_json(item.get("changes")),
            item.get("warnings") or {},  # none in markers stored before they were kept
            kept_warnings_of(item.get("answer")),  # the first answer's warnings (decision 0030), absent before
            item.get("meaning_digest"),  # what the body says (decision 0029), absent before
        )

    @overload
    def unless_received(self, marker: BatchMarker, write: Callable[[], BatchMarker | None]) -> BatchMarker | None: ...

    @overload
    def unless_received(self, marker: BatchMarker, write: Callable[[], T], answer: Callable[[BatchMarker], T]) -> T: ...

    def unless_received(
        self, marker: BatchMarker, write: Callable[[], Any], answer: Callable[[BatchMarker], Any] | None = None
    ) -> Any:
        """The opening of every batch write: a batch whose marker is stored is not written again, and its
        marker, or answer(its marker), is returned (ALREADY_RECEIVED); otherwise write()."""
        existing = self.find(marker.partner_id, marker.batch_id)
        if existing is None:
            return write()
        return existing if answer is None else answer(existing)

    def commit(self, marker: BatchMarker, *, receipt_written: bool = False) -> BatchMarker | None:
        """Create the marker, last, if absent: None when this call accepted the batch, else the
        marker of the concurrent twin that won. `receipt_written`: this call wrote the batch's receipt
        (a close or mapping), so a twin that found the receipt may have put this very marker back from
        it (restore) in between; the batch is still this call's."""
        item = {
            "id": marker_id(marker.batch_id),
            "pk": marker_key(marker.partner_id, marker.batch_id),
            "type": "batch",
            "partner_id": marker.partner_id,
            "batch_id": marker.batch_id,
            "kind": marker.kind,
            "record_count": marker.record_count,
            "body_digest": marker.body_digest,
            "received_at": to_utc_text(marker.received_at),
            "store_id": marker.store_id,
            "business_date": None if marker.business_date is None else marker.business_date.isoformat(),
            "batch_seq": marker.batch_seq,
        }
        if marker.changes is not None:
            item["changes"] = marker.changes.as_json()
        if marker.warnings:
            item["warnings"] = marker.warnings
        if marker.answer is not None:  # a resend answers the first answer's warnings (decision 0030)
            item["answer"] = kept_warnings_json(marker.answer)
        if marker.meaning_digest is not None:
            item["meaning_digest"] = marker.meaning_digest
        with_ttl(item, self._ttl(marker))
        faults.point("storage.data_written")

        def attempt(_number: int) -> BatchMarker | None | _TryAgain:
            try:
                self._batches.create_item(item)
                faults.point("cosmos.marker_committed")
                return None
            except CosmosResourceExistsError as error:
                forget(error)
                stored = self.find(marker.partner_id, marker.batch_id)
                if stored is None:  # it expired in between: try again
                    return TRY_AGAIN
                return None if receipt_written and stored == marker else stored

        return retry_until_settled(attempt, f"batch marker {marker.batch_id}")

    def restore(self, received: BatchMarker) -> BatchMarker:
        """Put back the lost marker of a batch received before, so that its next resend is answered from it.
        A resend either way: its marker (or the twin's that is committing it right now) is the answer."""
        return self.commit(received) or received

    def write_with_receipt(
        self,
        container: ContainerProxy,
        item_id: str,
        pk: str,
        marker: BatchMarker,
        build: Callable[[JsonObject | None], JsonObject],
    ) -> BatchMarker | None:
        """Write build(current item or None) with the receipts the item holds plus this batch's, then
        commit the marker: None when this call accepted the batch. When a receipt of the same batch_id
        is there already, nothing is written: the batch was received before (its marker gone), its
        marker is put back and returned. The write is conditioned on the ETag read, so of concurrent
        writers each sees the receipts of those before it."""
        receipt = {
            "batch_id": marker.batch_id,
            "record_count": marker.record_count,
            "body_digest": marker.body_digest,
            "received_at": to_utc_text(marker.received_at),
        }

        def with_receipt(current: JsonObject | None) -> JsonObject | None:
            receipts = [] if current is None else current.get("received", [])  # none in items of before
            if any(seen["batch_id"] == marker.batch_id for seen in receipts):
                return None
            return {**build(current), "received": receipts + [receipt]}

        update = update_item(container, item_id, pk, with_receipt)
        if update.after is not None:
            return self.commit(marker, receipt_written=True)
        assert update.before is not None  # with_receipt(None) always writes
        earlier = next(seen for seen in update.before["received"] if seen["batch_id"] == marker.batch_id)
        received = dataclasses.replace(
            marker,
            record_count=earlier["record_count"],
            body_digest=earlier["body_digest"],
            received_at=from_utc_text(earlier["received_at"]),
            answer=None,  # a receipt keeps neither the first answer nor what the body said
            meaning_digest=None,
        )
        return self.restore(received)
