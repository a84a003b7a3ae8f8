"""PUT /stores: upsert the partner's store master data (spec 4.5)."""

from __future__ import annotations

from typing import Protocol

from core.ports import Admission, BatchMarkers, BatchWrites
from core.records import Partner, StoreMaster
from ingest import access
from ingest.batches import BatchOutcome, accept, known_batch, new_marker, unknown_member_warnings
from ingest.body_digests import meaning_of_body
from ingest.parsing import Refused, duplicates, parse, raise_if_any
from ingest.wire.requests import StoresBatch
from ingest.wire.resend_keys import StoresKey


class PutStoresStorage(Admission, BatchMarkers, BatchWrites, Protocol):
    """What PUT /stores uses of storage."""


def _duplicate_stores(store_ids: list) -> list:
    return duplicates(store_ids, "stores", "store_id")


def _readable_problems(refused: Refused) -> list:
    """The repeated store_ids of a refused batch, among those that can be read."""
    return _duplicate_stores(refused.readable_values("stores", "store_id"))


def put_stores(
    storage: PutStoresStorage, partner: Partner, body: bytes, *, validate_only: bool = False
) -> BatchOutcome:
    resent = known_batch(storage, partner.partner_id, "stores", body, StoresKey, meaning_of_body(StoresBatch))
    if resent is not None:
        return resent
    batch, unknown = parse(StoresBatch, body, _readable_problems)
    store_ids = [store.store_id for store in batch.stores]
    access.require_registered(storage, partner.partner_id, store_ids)
    raise_if_any(_duplicate_stores(store_ids))
    masters = [
        StoreMaster(
            s.store_id,
            s.currency,
            s.country_code,
            s.time_zone,
            s.workday_start,
            s.prices_include_tax,
            s.last_modified_at,
            s.model_dump(mode="json"),
        )
        for s in batch.stores
    ]
    marker = new_marker(partner.partner_id, batch, "stores", len(masters), body)
    return accept(
        storage,
        marker,
        lambda m: storage.save_stores(m, masters),
        unknown_member_warnings(unknown),
        sent_batch_id=batch.batch_id,
        validate_only=validate_only,
    )
