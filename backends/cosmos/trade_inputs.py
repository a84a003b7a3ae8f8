"""What a batch of trade records reads before its checks (core/trade_inputs.py), as CosmosStorage offers it: the
partner's master data in one query, the stored records' payment_ids and the day's batch_seqs in two requests
(decision 0121)."""

from __future__ import annotations

from collections.abc import Collection

from backends.cosmos.day_sums import batches_with
from backends.cosmos.keys import day_key
from backends.cosmos.masters import Masters
from backends.cosmos.outages import outage_as_unavailable
from backends.cosmos.trade_records import TradeRecords
from core.records import StoreDay
from core.trade_inputs import StoredForChecks, TradeInputs


class TradeInputsRead:
    _masters: Masters
    _trade_records: TradeRecords

    @outage_as_unavailable
    def trade_inputs(self, partner_id: str, store_id: str) -> TradeInputs:
        return self._masters.trade_inputs(partner_id, store_id)

    @outage_as_unavailable
    def stored_for_checks(
        self, partner_id: str, day: StoreDay, batch_seq: int, payment_ids: Collection[str], limit: int
    ) -> StoredForChecks:
        pk = day_key(partner_id, day.store_id, day.business_date.isoformat())
        users, sums = self._trade_records.index.payment_users_and_day(partner_id, payment_ids, pk)
        return StoredForChecks(users, batches_with(sums, batch_seq, limit))
