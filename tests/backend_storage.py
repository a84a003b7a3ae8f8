"""The storage a running local host uses, opened from the test process on either backend (SQLite or
Cosmos DB), to check what a request stored or did not store."""

from __future__ import annotations

import os

from backends.factory import open_storage
from core.ports import Storage
from core.settings import Settings

_opened: dict[str, Storage] = {}


def storage_of(host) -> Storage:
    """The host's storage, opened with the host's own settings (once per host and process)."""
    if host.base_url not in _opened:
        saved = dict(os.environ)
        try:
            os.environ.clear()
            os.environ.update(host.env)
            settings = Settings.from_env()
        finally:
            os.environ.clear()
            os.environ.update(saved)
        _opened[host.base_url] = open_storage(settings)
    return _opened[host.base_url]


def footprint(
    host, partner_id: str, store_ids=("S1",), dates=("2026-11-20",), batch_ids=(), products=(("P-BURGER", None),)
) -> dict:
    """Everything a partner's writes can leave behind, read through the storage port: equal before and
    after a refused request means the request stored nothing."""
    import datetime as dt

    storage = storage_of(host)
    mapping = storage.get_mapping(partner_id)
    days = [dt.date.fromisoformat(date) for date in dates]
    return {
        "stores": {store_id: storage.get_store(partner_id, store_id) for store_id in store_ids},
        "products": {key: storage.get_product(partner_id, *key) for key in products},
        "mapping": (mapping.batch_id, mapping.entries),
        "closes": sorted(
            (day.store_id, day.business_date, day.close_batch_id, day.status) for day in storage.closed_days(partner_id)
        ),
        "rows": {
            (store_id, day): sorted(
                storage.store_day_rows(partner_id, store_id, day), key=lambda row: row.trade_record_id
            )
            for store_id in store_ids
            for day in days
        },
        "batch_seqs": {
            (store_id, day): storage.batch_seqs(partner_id, store_id, day) for store_id in store_ids for day in days
        },
        "batches": {batch_id: storage.find_batch(partner_id, batch_id) for batch_id in batch_ids},
    }
