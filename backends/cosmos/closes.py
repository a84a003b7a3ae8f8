"""Daily closes and their reconciliation results (container `daily-closes`, one logical partition per
partner and store, one item per store-day: decision 0093; close_moves.py moves those of before). The last
close received wins; a result is saved only if the close it reconciled is still the latest and the day's
records did not change meanwhile (revision)."""

from __future__ import annotations

import datetime as dt

from azure.cosmos import ContainerProxy
from azure.cosmos.exceptions import CosmosResourceNotFoundError

from backends.cosmos.close_moves import CloseMoves, each_day_once
from backends.cosmos.conditional import TRY_AGAIN, _TryAgain, update_item
from backends.cosmos.items import forget, query, read_or_none, without_system_properties
from backends.cosmos.keys import close_id, close_key
from backends.cosmos.markers import Markers
from core.clock import from_utc_text, from_utc_text_or_none, to_utc_text, to_utc_text_or_none
from core.records import BatchMarker, ClosedDay, RecordMove, StoreDay, merge_moved_out, result_is_stale
from core.stored_json import JsonObject


def closed_day_of(item: JsonObject) -> ClosedDay:
    return ClosedDay(
        item["store_id"],
        dt.date.fromisoformat(item["business_date"]),
        item["close_batch_id"],
        item["currency"],
        item["expected"],
        from_utc_text(item["received_at"]),
        from_utc_text(item["due_at"]),
        item["status"],
        from_utc_text_or_none(item["checked_at"]),
        item["actual"],
        list(item["differences"]),
        item["details"],
        item.get("revision", 0),
        item.get("moved_out", []),
    )


def _close_item(partner_id: str, day: ClosedDay, current: JsonObject | None) -> JsonObject:
    """A new close of the day; its revision and the records moved out of the day stay with the day."""
    kept = {"revision": current.get("revision", 0), "moved_out": current.get("moved_out", [])} if current else {}
    return {
        **kept,
        "id": close_id(day.store_id, day.business_date),
        "pk": close_key(partner_id, day.store_id),
        "type": "close",
        "partner_id": partner_id,
        "store_id": day.store_id,
        "business_date": day.business_date.isoformat(),
        "close_batch_id": day.close_batch_id,
        "currency": day.currency,
        "expected": day.expected,
        "received_at": to_utc_text(day.received_at),
        "due_at": to_utc_text(day.due_at),
        "status": day.status,
        "checked_at": None,
        "actual": None,
        "differences": [],
        "details": None,
    }


class Closes:
    def __init__(self, container: ContainerProxy, markers: Markers) -> None:
        self._closes = container
        self._markers = markers
        self._moves = CloseMoves(container)

    def save(self, marker: BatchMarker, day: ClosedDay) -> BatchMarker | None:
        # The last close received wins: it replaces the previous one and its result. A close the day
        # received before (its marker gone) is a resend: the later close stays.
        return self._markers.write_with_receipt(
            self._closes,
            close_id(day.store_id, day.business_date),
            self._moves.here(marker.partner_id, day.store_id, day.business_date),
            marker,
            lambda current: _close_item(marker.partner_id, day, current),
        )

    def close_received(self, partner_id: str, store_id: str, business_date: dt.date, batch_id: str) -> bool:
        key = self._moves.here(partner_id, store_id, business_date)
        item = read_or_none(self._closes, close_id(store_id, business_date), key)
        return item is not None and any(seen["batch_id"] == batch_id for seen in item.get("received", []))

    def get(self, partner_id: str, store_id: str, business_date: dt.date) -> ClosedDay | None:
        key = self._moves.here(partner_id, store_id, business_date)
        item = read_or_none(self._closes, close_id(store_id, business_date), key)
        return None if item is None else closed_day_of(item)

    def of_partner(self, partner_id: str, status: str | None = None) -> list[ClosedDay]:
        # Across the partner's stores' partitions, by its indexed partner_id (HQ's commands only).
        if status:
            items = query(
                self._closes,
                "SELECT * FROM c WHERE c.partner_id = @partner AND c.type = 'close' AND c.status = @status",
                partner=partner_id,
                status=status,
            )
        else:
            items = query(
                self._closes, "SELECT * FROM c WHERE c.partner_id = @partner AND c.type = 'close'", partner=partner_id
            )
        items = each_day_once(items)
        # Sorted here rather than by ORDER BY, which on two properties would need another composite index.
        items.sort(key=lambda item: (item["business_date"], item["store_id"]))
        return [closed_day_of(item) for item in items]

    def due(self, before: dt.datetime) -> list[tuple[str, ClosedDay]]:
        # Across partners (the periodic sweep): served by the composite index (status, due_at).
        items = query(
            self._closes,
            "SELECT * FROM c WHERE c.status = 'RECEIVED' AND c.due_at < @before",
            before=to_utc_text(before),
        )
        return [(item["partner_id"], closed_day_of(item)) for item in each_day_once(items)]

    def save_result(self, partner_id: str, day: ClosedDay, replacing: ClosedDay | None = None) -> bool:
        def with_result(current: JsonObject | None) -> JsonObject | None:
            if current is None or current["close_batch_id"] != day.close_batch_id:
                return None  # a newer close replaced the one reconciled
            if current.get("revision", 0) != day.revision:
                return None  # the day's records changed during the run
            if replacing is not None and current.get("checked_at") != to_utc_text_or_none(replacing.checked_at):
                return None  # another run of the same close saved its result meanwhile
            return {
                **without_system_properties(current),
                "status": day.status,
                "checked_at": to_utc_text_or_none(day.checked_at),
                "actual": day.actual,
                "differences": list(day.differences),
                "details": day.details,
            }

        # Conditioned on the ETag read: a close saved in between makes us look again.
        key = self._moves.here(partner_id, day.store_id, day.business_date)
        return update_item(self._closes, close_id(day.store_id, day.business_date), key, with_result).after is not None

    def reopen_all(
        self,
        partner_id: str,
        days: list[tuple[StoreDay, list[RecordMove]]],
        due_at: dt.datetime,
        checked_before: dt.datetime | None = None,
    ) -> list[ClosedDay | None]:
        """`reopen` for each day, the closes of a store's days read in one query (a move's two days: one
        request where two point reads were two; decision 0121), each then changed on the ETag read."""
        keys = [self._moves.here(partner_id, day.store_id, day.business_date) for day, _ in days]
        ids = [close_id(day.store_id, day.business_date) for day, _ in days]
        read: dict[tuple[str, str], JsonObject | None] = {}
        for key in {key for key in keys if keys.count(key) > 1}:
            wanted = [item_id for item_id, its in zip(ids, keys, strict=True) if its == key]
            read.update(dict.fromkeys(((key, item_id) for item_id in wanted), None))
            sql = "SELECT * FROM c WHERE c.pk = @pk AND ARRAY_CONTAINS(@ids, c.id)"
            read.update(((key, item["id"]), item) for item in query(self._closes, sql, key, pk=key, ids=wanted))
        return [
            self.reopen(partner_id, day, due_at, moved_out, checked_before, read.get((key, item_id), TRY_AGAIN))
            for (day, moved_out), key, item_id in zip(days, keys, ids, strict=True)
        ]

    def reopen(
        self,
        partner_id: str,
        day: StoreDay,
        due_at: dt.datetime,
        moved_out: list[RecordMove],
        checked_before: dt.datetime | None = None,
        first: JsonObject | None | _TryAgain = TRY_AGAIN,
    ) -> ClosedDay | None:
        def reopens(closed: ClosedDay) -> bool:
            return result_is_stale(closed, checked_before)

        def changed(current: JsonObject | None) -> JsonObject | None:
            if current is None:
                return None
            closed = closed_day_of(current)
            item = {
                **without_system_properties(current),
                "revision": closed.revision + 1,
                "moved_out": merge_moved_out(closed.moved_out, day, moved_out),
            }
            if reopens(closed):  # the result is gone, as when a new close arrives: the day is due again
                item.update(
                    status="RECEIVED",
                    due_at=to_utc_text(due_at),
                    checked_at=None,
                    actual=None,
                    differences=[],
                    details=None,
                )
            return item

        # Conditioned on the ETag read: of concurrent reopens (or a result saved meanwhile) one wins, and the
        # others look again (and find the day RECEIVED).
        key = self._moves.here(partner_id, day.store_id, day.business_date)
        update = update_item(self._closes, close_id(day.store_id, day.business_date), key, changed, first=first)
        if update.after is None or update.before is None or not reopens(closed_day_of(update.before)):
            return None
        return closed_day_of(update.after)

    def postpone(self, partner_id: str, store_id: str, business_date: dt.date, due_at: dt.datetime) -> None:
        try:
            self._closes.patch_item(
                close_id(store_id, business_date),
                partition_key=self._moves.here(partner_id, store_id, business_date),
                patch_operations=[{"op": "set", "path": "/due_at", "value": to_utc_text(due_at)}],
            )
        except CosmosResourceNotFoundError as error:
            forget(error)
            pass
