"""A partner's record index (container `trade-records`): one entry per trade record with its latest version,
the store-day it lives in, the store-days still to clean after a move, and its payments' payment_ids. It is
what keeps "the highest version wins" partner-wide and what finds the records that use a payment_id. A
partner's entries share a few logical partitions (16 open ones, and the closed ones of their chains once it
has grown: index_layout.py), so a batch of new records creates its entries in a transactional batch per leaf
(16 at most for 500 records), and a look-up reads only the partner's own partitions. Decisions 0056, 0092
and 0115 say why."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Collection

from azure.core import MatchConditions
from azure.cosmos import ContainerProxy
from azure.cosmos.exceptions import CosmosAccessConditionFailedError, CosmosResourceNotFoundError

from backends.cosmos.conditional import TRY_AGAIN, Update, _TryAgain, retry_until_settled
from backends.cosmos.connection import WriterPool
from backends.cosmos.day_sums import DAY_ITEM_ID, day_as_read
from backends.cosmos.expiry import DayExpiry, with_ttl
from backends.cosmos.index_growth import Created, IndexGrowth, T
from backends.cosmos.index_layout import LAYOUT_ID, Layout, in_partitions, layout_key
from backends.cosmos.items import chunks, forget, json_safe_int, query, stored_version
from backends.cosmos.keys import index_bucket, index_entry_id
from core.records import StoreDay, StoredVersion, TradeRecordRow
from core.stored_json import JsonObject
from core.versions import Version


def entry_of(
    partner_id: str,
    batch_id: str,
    row: TradeRecordRow,
    mine: Version,
    ttl: int | None = None,
    entry_id: str | None = None,
) -> JsonObject:
    """The entry of `row` as written by batch `batch_id`, expiring with the store-day of this version (`ttl`:
    expiry.py), so that an entry moved to another day gets that day's. No "type": nothing queries entries by
    it, and an indexed property costs every write (~0.2 RU). `entry_id`: the stored entry's, when it was read
    (the same index_entry_id, not made again: decision 0127)."""
    entry = {
        "id": index_entry_id(row.trade_record_id) if entry_id is None else entry_id,
        "pk": None,  # its node's partition, where it is created (index_growth.py) or found
        "partner_id": partner_id,
        "trade_record_id": row.trade_record_id,
        "version": row.version,
        "last_modified_us": json_safe_int(mine.modified_us),
        "store_id": row.store_id,
        "business_date": row.business_date.isoformat(),
        "batch_id": batch_id,
        "previous": None,  # the store-day of the version this one replaced
        "dirty": [],  # store-days this record left, buried before its record is written (decision 0116)
        "payment_ids": list(row.payment_ids),
    }
    return with_ttl(entry, ttl)


class RecordIndex:
    def __init__(self, container: ContainerProxy, writers: WriterPool, expiry: DayExpiry, max_entries: int) -> None:
        self._trades = container
        self._writers = writers
        self._expiry = expiry
        self.growth = IndexGrowth(container, writers, max_entries)

    def create_entries(self, partner_id: str, batch_id: str, rows: list[TradeRecordRow]) -> list[TradeRecordRow]:
        """Create the entries of records expected to be new (first versions), leaf by leaf in
        transactional batches, without reading first (but in the closed nodes of their paths, once the
        partner's index has grown). Returns the rows whose entry exists already (a resend under a new
        batch_id, a retry, a concurrent twin), for the path that reads the entries first."""
        work = []
        for row in rows:
            mine = Version.of(row.version, row.last_modified_at)
            work.append((row, entry_of(partner_id, batch_id, row, mine, self._expiry.ttl(row.business_date))))
        return [row for row, answer in self.create(partner_id, work) if answer is None]

    def create(self, partner_id: str, work: list[tuple[T, JsonObject]]) -> Created[T]:
        """Create entries in their leaves (each with None when it exists already: index_growth.py)."""
        return self.growth.create(partner_id, work, "cosmos.version_entry")

    def entries(self, partner_id: str, trade_record_ids: list[str]) -> dict[str, JsonObject]:
        """The entries of the records (with their ETags), by trade_record_id: one query per slice of ids
        (items.chunks), in the partitions of their paths only, by id (always indexed). The layout may be out
        of date: an entry then missed is created in a closed node, which refuses it (index_growth.py)."""
        return self._entries(partner_id, trade_record_ids, self.growth.layout(partner_id))

    def _entries(self, partner_id: str, trade_record_ids: list[str], layout: Layout) -> dict[str, JsonObject]:
        found: dict[str, JsonObject] = {}
        for ids in chunks(sorted(set(trade_record_ids))):
            # By bucket: the 16 paths made once, not once a record (decision 0130).
            nodes = {node for bucket in {index_bucket(one) for one in ids} for node in layout.bucket_path(bucket)}
            where, keys = in_partitions(partner_id, sorted(node.key(partner_id) for node in nodes))
            for entry in query(
                self._trades,
                f"SELECT * FROM c WHERE {where} AND ARRAY_CONTAINS(@ids, c.id)",
                ids=[index_entry_id(one) for one in ids],
                **keys,
            ):
                found[entry["trade_record_id"]] = entry
        return found

    def update_entry(
        self, partner_id: str, trade_record_id: str, change: Callable[[JsonObject | None], JsonObject | None]
    ) -> Update:
        """conditional.update_item for an entry wherever it is on its path: replaced on its ETag, or created
        in its leaf with the leaf's count (index_growth.py); again on what a concurrent writer left."""

        def attempt(_: int) -> Update | _TryAgain:
            current = self.entries(partner_id, [trade_record_id]).get(trade_record_id)
            wanted = change(current)
            if wanted is None:
                return Update(current, None)
            if current is None:
                ((_created_for, answer),) = self.growth.create(partner_id, [(trade_record_id, wanted)], None)
                return TRY_AGAIN if answer is None else Update(None, {**wanted, "_etag": answer["eTag"]})
            try:
                return Update(
                    current,
                    self._trades.replace_item(
                        wanted["id"], wanted, etag=current["_etag"], match_condition=MatchConditions.IfNotModified
                    ),
                )
            except (CosmosAccessConditionFailedError, CosmosResourceNotFoundError) as error:
                forget(error)
                return TRY_AGAIN

        return retry_until_settled(attempt, f"the index entry of a record of partner {partner_id!r}")

    def versions(self, partner_id: str, trade_record_ids: Collection[str]) -> dict[str, StoredVersion]:
        """The latest version of each record and its store-day."""
        return {
            trade_record_id: StoredVersion(
                stored_version(entry), StoreDay(entry["store_id"], dt.date.fromisoformat(entry["business_date"]))
            )
            for trade_record_id, entry in self.entries(partner_id, list(trade_record_ids)).items()
        }

    def payment_users(self, partner_id: str, payment_ids: Collection[str]) -> dict[str, set[str]]:
        """The records (latest versions) that use each payment_id, read from the partner's own partitions,
        one query per slice of ids (items.chunks), served by the index on /payment_ids/[]. Read again when
        the layout changed meanwhile (one point read), so that no node created since is missed."""
        while True:
            layout = self.growth.layout(partner_id)
            users = self._payment_users(partner_id, payment_ids, layout)
            if self.growth.current(partner_id, layout):
                return users

    def payment_users_and_day(
        self, partner_id: str, payment_ids: Collection[str], day_pk: str
    ) -> tuple[dict[str, set[str]], JsonObject]:
        """`payment_users`, and a store-day's sums item read with its layout check, in one query naming the
        two items (decision 0121)."""
        while True:
            layout = self.growth.layout(partner_id)
            users = self._payment_users(partner_id, payment_ids, layout)
            wanted = {"layout": (layout_key(partner_id), LAYOUT_ID), "day": (day_pk, DAY_ITEM_ID)}
            found = {
                (item["pk"], item["id"]): item
                for item in query(
                    self._trades,
                    # Two partitions, neither holding the other's id: exactly the two items.
                    "SELECT * FROM c WHERE c.pk IN (@lpk, @dpk) AND c.id IN (@lid, @did)",
                    lpk=wanted["layout"][0],
                    lid=LAYOUT_ID,
                    dpk=day_pk,
                    did=DAY_ITEM_ID,
                )
            }
            day = day_as_read(self._trades, day_pk, found.get(wanted["day"]))
            if self.growth.remember(partner_id, found.get(wanted["layout"])).etag == layout.etag:
                return users, day

    def _payment_users(self, partner_id: str, payment_ids: Collection[str], layout: Layout) -> dict[str, set[str]]:
        where, keys = in_partitions(partner_id, [node.key(partner_id) for node in layout.nodes()])
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
