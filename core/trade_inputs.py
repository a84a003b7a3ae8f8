"""What a batch of trade records reads of its partner's master data before its checks: whether its store is
registered, the store's master data, the mapping in effect and the payment directions. Read together, so that
an adapter whose four live in one place reads them at once (Cosmos DB: one query in the partner's partition,
where four point reads were four requests; decision 0121). Read anew by every batch, never cached: the spec's
mapping rules apply to the next batch."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Protocol

from core.records import Mapping, StoreDay, StoreMaster


@dataclass(frozen=True, slots=True)
class TradeInputs:
    store_id: str
    registered: bool  # the store is registered for the partner
    store: StoreMaster | None  # None: no master data yet
    mapping: Mapping
    payment_directions: dict[str, int]


@dataclass(frozen=True, slots=True)
class StoredForChecks:
    """What the checks of a batch of trade records read of the stored records."""

    payment_id_users: dict[str, set[str]]  # the stored trade records using each of the batch's payment_ids
    batch_seq_twins: list[str]  # the batch_ids of the store-day's batches with the batch's batch_seq


class TradeInputReads(Protocol):
    def trade_inputs(self, partner_id: str, store_id: str) -> TradeInputs:
        """What `TradeInputs` holds, for one store of the partner, as stored now."""
        ...

    def stored_for_checks(
        self, partner_id: str, day: StoreDay, batch_seq: int, payment_ids: Collection[str], limit: int
    ) -> StoredForChecks:
        """`trade_records_by_payment_id` and `batches_with_seq` (at most `limit`) in one call (Cosmos DB: the
        day's sums item read with the look-up's layout check, one request; decision 0121)."""
        ...
