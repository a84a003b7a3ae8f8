"""The service in-process for the benchmarks and their test: a SqliteStorage in a directory with one
partner, its registered store, the store master, the products and the transaction type mapping, all
sent through the real use cases."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bench import catalogue, generate

if TYPE_CHECKING:
    from core.ports import Storage
    from core.records import Partner

PARTNER_ID = "bench"


class NullQueue:
    """The delayed queue of the mapping use case; the benchmarks reconcile directly."""

    def send(self, body: str, delay_seconds: int) -> None:
        pass

    def ping(self) -> None:
        pass

    def send_to_poison(self, body: bytes) -> None:
        pass


@dataclass
class Service:
    storage: Storage
    partner: Partner
    store_id: str
    currency: str

    def post_trade_records(self, body: bytes):
        from ingest.trade_records import post_trade_records

        return post_trade_records(self.storage, NullQueue(), self.partner, body, 0)


def open_service(
    data_dir: Path, currency: str = "USD", store_id: str | None = None, partner_id: str = PARTNER_ID
) -> Service:
    """A partner with its store set up on a SqliteStorage in data_dir (the same set-up a partner
    does over HTTP: PUT /stores, PUT /products, PUT /mappings/transaction-types)."""
    from backends.sqlite.storage import SqliteStorage

    return set_up(SqliteStorage(data_dir), currency, store_id, partner_id)


def set_up(
    storage: Storage, currency: str = "USD", store_id: str | None = None, partner_id: str = PARTNER_ID
) -> Service:
    """The partner and its store set up on any storage (bench/capacity.py: also on Cosmos DB)."""
    from ingest.mappings import put_mapping
    from ingest.products import put_products
    from ingest.stores import put_stores

    store_id = store_id or catalogue.profile_for(currency).store_id
    now = dt.datetime.now(dt.UTC)
    partner = storage.get_partner(partner_id) or storage.add_partner(partner_id, "Bench partner", now)
    if storage.unregistered(partner_id, {store_id}):
        storage.register_stores(partner_id, [store_id], now)
    for outcome in (
        put_stores(storage, partner, generate.stores_body(currency, store_id)),
        put_products(storage, partner, generate.products_body(currency)),
        put_mapping(storage, NullQueue(), partner, generate.mapping_body()),
    ):
        if outcome.warnings:
            raise RuntimeError(f"set-up answered warnings: {outcome.as_dict()}")
    return Service(storage, partner, store_id, currency)


def issue_key(storage, partner_id: str = PARTNER_ID) -> str:
    """A new API key of the partner (as `hq key issue` makes it); returns the secret."""
    from ingest.access import new_key

    key = new_key()
    storage.add_key(partner_id, key.key_id, key.key_hash, dt.datetime.now(dt.UTC))
    return key.secret
