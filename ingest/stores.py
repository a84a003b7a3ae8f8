"""PUT /stores: upsert the partner's store master data (spec 4.5)."""

from __future__ import annotations

from core.ports import Partner, Storage, StoreMaster
from ingest import access
from ingest.batches import BatchOutcome, accept, known_batch, new_marker
from ingest.parsing import duplicates, parse, raise_if_any
from ingest.wire import StoresBatch, StoresKey


def put_stores(storage: Storage, partner: Partner, body: bytes) -> BatchOutcome:
    resent = known_batch(storage, partner.partner_id, "stores", body, StoresKey)
    if resent is not None:
        return resent
    batch = parse(StoresBatch, body)
    store_ids = [store.store_id for store in batch.stores]
    raise_if_any(duplicates(store_ids, lambda i: f"stores[{i}].store_id"))
    access.require_registered(storage, partner.partner_id, store_ids)
    masters = [
        StoreMaster(s.store_id, s.currency, s.country_code, s.time_zone, s.workday_start, s.prices_include_tax,
                    s.last_modified_at, s.model_dump(mode="json"))
        for s in batch.stores
    ]
    marker = new_marker(partner.partner_id, batch, "stores", len(masters), body)
    return accept(storage, marker, lambda m: storage.save_stores(m, masters), sent_batch_id=batch.batch_id)
