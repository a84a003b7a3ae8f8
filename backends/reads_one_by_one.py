"""The reads a port offers together (decision 0121) as the embedded adapters make them: one after the other,
each an indexed read of a local file or a dict, where reading them together would save nothing."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection
from typing import Protocol

from core.ports import Admission, BatchMarkers, MasterReads, Reconciliations, TradeRecordReads
from core.records import ClosedDay, RecordMove, StoreDay
from core.trade_inputs import StoredForChecks, TradeInputs


class _SingleReads(Admission, BatchMarkers, MasterReads, TradeRecordReads, Reconciliations, Protocol):
    """The adapter's own single reads."""


class ReadsOneByOne:
    """`trade_inputs`, `stored_for_checks` and `reopen_days` from the adapter's own single reads (a mixin of
    SqliteStorage and MemoryStorage)."""

    def trade_inputs(self: _SingleReads, partner_id: str, store_id: str) -> TradeInputs:
        return TradeInputs(
            store_id,
            not self.unregistered(partner_id, {store_id}),
            self.get_store(partner_id, store_id),
            self.get_mapping(partner_id),
            self.payment_directions(partner_id),
        )

    def stored_for_checks(
        self: _SingleReads, partner_id: str, day: StoreDay, batch_seq: int, payment_ids: Collection[str], limit: int
    ) -> StoredForChecks:
        return StoredForChecks(
            self.trade_records_by_payment_id(partner_id, payment_ids),
            self.batches_with_seq(partner_id, day.store_id, day.business_date, batch_seq, limit),
        )

    def reopen_days(
        self: _SingleReads,
        partner_id: str,
        days: list[tuple[StoreDay, list[RecordMove]]],
        due_at: dt.datetime,
        checked_before: dt.datetime | None = None,
    ) -> list[ClosedDay | None]:
        return [self.reopen_day(partner_id, day, due_at, moved_out, checked_before) for day, moved_out in days]
