"""A partner's record index (container `trade-records`, logical partitions `i|partner|bucket`): one entry per
trade record with its latest version, the store-day it lives in, the store-days still to clean after a move,
and its payments' payment_ids. It is what keeps "the highest version wins" partner-wide and what finds the
records that use a payment_id. Entries of a partner share INDEX_BUCKETS partitions (keys.py), so a batch of
new records creates its entries in a few transactional batches, and a look-up reads only the partner's own
partitions. docs/decisions/0056-cosmos-record-index.md says why."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection

import orjson

from backends.cosmos.connection import WriterPool
from backends.cosmos.expiry import DayExpiry, with_ttl
from backends.cosmos.items import chunks, json_safe_int, query, stored_version
from backends.cosmos.keys import index_bucket, index_entry_id, index_key, index_keys
from backends.cosmos.transactional import in_batches
from core.records import StoreDay, StoredVersion, TradeRecordRow
from core.versions import Version


def entry_of(partner_id: str, batch_id: str, row: TradeRecordRow, mine: Version, ttl: int | None = None) -> dict:
    """The entry of `row` as written by batch `batch_id`, expiring with the store-day of this version (`ttl`:
    expiry.py), so that an entry moved to another day gets that day's. No "type": nothing queries entries by
    it, and an indexed property costs every write (~0.2 RU)."""
    entry = {
        "id": index_entry_id(row.trade_record_id),
        "pk": index_key(partner_id, index_bucket(row.trade_record_id)),
        "partner_id": partner_id,
        "trade_record_id": row.trade_record_id,
        "version": row.version,
        "last_modified_us": json_safe_int(mine.modified_us),
        "store_id": row.store_id,
        "business_date": row.business_date.isoformat(),
        "batch_id": batch_id,
        "previous": None,  # the store-day of the version this one replaced
        "dirty": [],  # store-days this record left that still need a tombstone
        "payment_ids": list(row.payment_ids),
    }
    return with_ttl(entry, ttl)


def _in_partitions(keys: list[str]) -> tuple[str, dict[str, str]]:
    """`c.pk IN (@k0, ...)` and its parameters: a query Cosmos DB routes to those partitions only."""
    names = {f"k{number}": key for number, key in enumerate(keys)}
    return "c.pk IN (" + ", ".join(f"@{name}" for name in names) + ")", names


class RecordIndex:
    def __init__(self, container, writers: WriterPool, expiry: DayExpiry) -> None:
        self._trades = container
        self._writers = writers
        self._expiry = expiry

    def create_entries(self, partner_id: str, batch_id: str, rows: list[TradeRecordRow]) -> list[TradeRecordRow]:
        """Create the entries of records expected to be new (first versions), bucket by bucket in
        transactional batches, without reading first. Returns the rows whose batch was refused (an entry
        exists already: a resend under a new batch_id, a retry, a concurrent twin), for the path that reads
        the entries first."""
        work = []
        for row in rows:
            mine = Version.of(row.version, row.last_modified_at)
            entry = entry_of(partner_id, batch_id, row, mine, self._expiry.ttl(row.business_date))
            work.append((row, ("create", (entry,)), len(orjson.dumps(entry))))
        return [
            row
            for row, answer in in_batches(self._trades, self._writers, work, "cosmos.version_entry")
            if answer is None
        ]

    def entries(self, partner_id: str, trade_record_ids: list[str]) -> dict[str, dict]:
        """The entries of the records (with their ETags), by trade_record_id: one query per slice of ids
        (items.chunks), in the partitions of their buckets only, by id (always indexed)."""
        found: dict[str, dict] = {}
        for ids in chunks(sorted(set(trade_record_ids))):
            where, keys = _in_partitions(sorted({index_key(partner_id, index_bucket(one)) for one in ids}))
            for entry in query(
                self._trades,
                f"SELECT * FROM c WHERE {where} AND ARRAY_CONTAINS(@ids, c.id)",
                ids=[index_entry_id(one) for one in ids],
                **keys,
            ):
                found[entry["trade_record_id"]] = entry
        return found

    def versions(self, partner_id: str, trade_record_ids: Collection[str]) -> dict[str, StoredVersion]:
        """The latest version of each record and its store-day."""
        return {
            trade_record_id: StoredVersion(
                stored_version(entry), StoreDay(entry["store_id"], dt.date.fromisoformat(entry["business_date"]))
            )
            for trade_record_id, entry in self.entries(partner_id, list(trade_record_ids)).items()
        }

    def payment_users(self, partner_id: str, payment_ids: Collection[str]) -> dict[str, set[str]]:
        """The records (latest versions) that use each payment_id, read from the partner's
        own partitions, one query per slice of ids (items.chunks), served by the index on /payment_ids/[]."""
        where, keys = _in_partitions(index_keys(partner_id))
        users: dict[str, set[str]] = {}
        for ids in chunks(sorted(set(payment_ids))):
            for item in query(
                self._trades,
                f"SELECT c.trade_record_id, p AS payment_id FROM c JOIN p IN c.payment_ids "
                f"WHERE {where} AND ARRAY_CONTAINS(@ids, p)",
                ids=ids,
                **keys,
            ):
                users.setdefault(item["payment_id"], set()).add(item["trade_record_id"])
        return users
