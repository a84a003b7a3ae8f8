"""What a batch of trade records reads of its partner's master data before its checks: whether its store is
registered, the store's master data, the mapping in effect and the payment directions. Read together, so that
an adapter whose four live in one place reads them at once (Cosmos DB: one query in the partner's partition,
where four point reads were four requests; decision 0121). Read anew by every batch, never cached: the spec's
mapping rules apply to the next batch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from core.records import Mapping, StoreMaster


@dataclass(frozen=True, slots=True)
class TradeInputs:
    store_id: str
    registered: bool  # the store is registered for the partner
    store: StoreMaster | None  # None: no master data yet
    mapping: Mapping
    payment_directions: dict[str, int]


class TradeInputReads(Protocol):
    def trade_inputs(self, partner_id: str, store_id: str) -> TradeInputs:
        """What `TradeInputs` holds, for one store of the partner, as stored now."""
        ...


class _SeparateReads(Protocol):
    def unregistered(self, partner_id: str, store_ids: set[str]) -> set[str]: ...
    def get_store(self, partner_id: str, store_id: str) -> StoreMaster | None: ...
    def get_mapping(self, partner_id: str) -> Mapping: ...
    def payment_directions(self, partner_id: str) -> dict[str, int]: ...


def read_separately(storage: _SeparateReads, partner_id: str, store_id: str) -> TradeInputs:
    """`TradeInputs` by the four reads, for an adapter where each costs next to nothing (SQLite, memory)."""
    return TradeInputs(
        store_id,
        not storage.unregistered(partner_id, {store_id}),
        storage.get_store(partner_id, store_id),
        storage.get_mapping(partner_id),
        storage.payment_directions(partner_id),
    )
