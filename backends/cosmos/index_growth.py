"""Creating record index entries so that no logical partition ever holds more than
COSMOS_INDEX_PARTITION_MAX_ENTRIES of them, and closing a full node so that its bucket continues in one new
node (index_layout.py says how the layout grows; decisions 0092 and 0115 why).

Each creation is a transactional batch in the leaf's partition whose first operation replaces the leaf's
head on its ETag with the count raised by the entries created: the count can never pass the limit, and a
node closed meanwhile refuses the batch. Concurrent batches of one leaf race on its head: the loser reads
it again and tries again (no item-by-item fallback for that)."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Sequence
from typing import TypeVar

import orjson
from azure.core import MatchConditions
from azure.cosmos import ContainerProxy
from azure.cosmos.exceptions import (
    CosmosAccessConditionFailedError,
    CosmosBatchOperationError,
    CosmosResourceExistsError,
)

from backends.cosmos.conditional import ETAG_RETRY_LIMIT, ContentionNotSettled, update_item
from backends.cosmos.connection import WriterPool
from backends.cosmos.index_layout import HEAD_ID, LAYOUT_ID, Layout, Node, in_partitions, layout_key
from backends.cosmos.items import chunks, forget, query, read_or_none, without_system_properties
from backends.cosmos.keys import index_bucket
from backends.cosmos.transactional import MAX_BATCH_BYTES, MAX_OPERATIONS, REFUSED
from core import faults
from core.stored_json import JsonObject

T = TypeVar("T")

# Rounds of (read heads, create, close what is full) for one call; each round closes a node or creates
# entries, so only a flood of concurrent closes of one partner gets near it.
GROWTH_ROUNDS = 50
# A full node is counted again before it closes: one whose entries expired (retention: decision 0086) below
# this share of the limit takes new ones instead, so that a partner with retention keeps as many nodes as
# its live entries need, not as its creations over the years.
REUSE_BELOW = 0.75
Created = list[tuple[T, JsonObject | None]]  # what each creation was for, and its answer (None: refused, it exists)


class IndexGrowth:
    def __init__(self, container: ContainerProxy, writers: WriterPool, max_entries: int) -> None:
        if max_entries < 1:
            raise ValueError("COSMOS_INDEX_PARTITION_MAX_ENTRIES must be at least 1")
        self._trades = container
        self._writers = writers
        self.max_entries = max_entries
        self._layouts: dict[str, Layout] = {}
        self._lock = threading.Lock()

    # -- the layout -------------------------------------------------------------------------------

    def layout(self, partner_id: str) -> Layout:
        """The partner's layout as last read by this process (writes find out when it is out of date)."""
        with self._lock:
            known = self._layouts.get(partner_id)
        return known if known is not None else self.reload(partner_id)

    def reload(self, partner_id: str) -> Layout:
        return self.remember(partner_id, read_or_none(self._trades, LAYOUT_ID, layout_key(partner_id)))

    def remember(self, partner_id: str, item: JsonObject | None) -> Layout:
        """The layout of `item`, the layout item just read (None: absent), kept as the partner's."""
        layout = Layout.of_item(item)
        with self._lock:
            self._layouts[partner_id] = layout
        return layout

    def current(self, partner_id: str, seen: Layout) -> bool:
        """Whether the layout `seen` is still the stored one (one point read); reloads it when not."""
        return self.reload(partner_id).etag == seen.etag

    def _record_closed(self, partner_id: str, node: Node) -> None:
        """List a closed node in the layout: its bucket's leaf moves to the successor (idempotent: a writer
        that finds a closed head the layout does not list completes a close that stopped between its two
        writes). The writer that lists it also retires the bucket's oldest closed nodes found empty."""
        if self.reload(partner_id).chain(node.bucket).leaf > node.generation:
            return
        retired = self._empty_oldest(partner_id, node.bucket)

        def with_node(current: JsonObject | None) -> JsonObject | None:
            layout = Layout.of_item(current)
            chain = layout.chain(node.bucket)
            wanted = chain.closed(node.generation).without(retired)
            return None if wanted == chain else layout.with_chain(partner_id, node.bucket, wanted)

        update_item(self._trades, LAYOUT_ID, layout_key(partner_id), with_node)

    def _empty_oldest(self, partner_id: str, bucket: int) -> list[int]:
        """The bucket's oldest closed generations that hold no entry, up to the first that holds one. A
        closed node never takes an entry again (creations are in leaves only), so once its entries expired
        (retention: decision 0086) it stays empty, and look-ups can leave it out for good (decision 0115)."""
        empty = []
        for generation in self.layout(partner_id).chain(bucket).live:
            if self._count(Node(bucket, generation).key(partner_id)):
                break
            empty.append(generation)
        return empty

    # -- creating entries -------------------------------------------------------------------------

    def create(self, partner_id: str, work: Sequence[tuple[T, JsonObject]], point: str | None) -> Created[T]:
        """Create the entries (what each is for, the entry without its "pk"), each in the leaf of its
        record, in transactional batches guarded by the leaf's head. An entry that exists already refuses
        its batch: its rows come back with None, for the path that reads entries first."""
        done: Created[T] = []
        pending = list(work)
        checked: frozenset[Node] = frozenset()  # closed nodes the pending entries are known to be absent from
        for _ in range(GROWTH_ROUNDS):
            layout = self.layout(partner_id)
            if layout.closed - checked:
                # An entry of a closed node stays there: one created before it closed is found there.
                found = self._in_nodes(partner_id, pending, layout, layout.closed - checked)
                done += [(what, None) for what, entry in pending if entry["trade_record_id"] in found]
                pending = [(what, entry) for what, entry in pending if entry["trade_record_id"] not in found]
                checked = layout.closed
            if not pending:
                return done
            by_bucket: dict[int, list[tuple[T, JsonObject]]] = defaultdict(list)
            for what, entry in pending:
                by_bucket[index_bucket(entry["trade_record_id"])].append((what, entry))
            # A leaf per bucket, made once for its records (decision 0130).
            by_leaf = {layout.leaf_of(bucket): work for bucket, work in by_bucket.items()}
            heads = self._heads(partner_id, list(by_leaf))
            filled = self._writers.each(
                lambda job: self._fill(partner_id, job[0], job[1], job[2], point),
                [(leaf, heads.get(leaf), work) for leaf, work in by_leaf.items()],
            )
            pending = []
            for leaf, (created, left, head) in zip(by_leaf, filled, strict=True):
                done += created
                if left:
                    pending += left
                    self._close(partner_id, leaf, head)
            if pending:
                self.reload(partner_id)
        raise ContentionNotSettled(f"too many index partitions closed at once for a partner ({len(pending)} left)")

    def _in_nodes(
        self, partner_id: str, work: list[tuple[T, JsonObject]], layout: Layout, nodes: frozenset[Node]
    ) -> set[str]:
        """The trade_record_ids of `work` that have an entry in one of `nodes` on their path."""
        by_id = {entry["trade_record_id"]: entry["id"] for _, entry in work}
        found: set[str] = set()
        for ids in chunks(sorted(by_id)):
            keys = sorted({node.key(partner_id) for one in ids for node in layout.path(one)[:-1] if node in nodes})
            if keys:
                where, names = in_partitions(partner_id, keys)
                sql = f"SELECT c.trade_record_id FROM c WHERE {where} AND ARRAY_CONTAINS(@ids, c.id)"
                found |= {
                    item["trade_record_id"]
                    for item in query(self._trades, sql, ids=[by_id[one] for one in ids], **names)
                }
        return found

    def _heads(self, partner_id: str, leaves: list[Node]) -> dict[Node, JsonObject]:
        """The heads of the leaves, one query (routed to those partitions only)."""
        by_key = {leaf.key(partner_id): leaf for leaf in leaves}
        where, names = in_partitions(partner_id, list(by_key))  # 16 leaves at most: named
        single = next(iter(by_key)) if len(by_key) == 1 else None
        found = query(self._trades, f"SELECT * FROM c WHERE {where} AND c.id = @head", single, head=HEAD_ID, **names)
        return {by_key[head["pk"]]: head for head in found}

    def _fill(
        self, partner_id: str, leaf: Node, head: JsonObject | None, work: list[tuple[T, JsonObject]], point: str | None
    ) -> tuple[Created[T], list[tuple[T, JsonObject]], JsonObject | None]:
        """Create what fits in the leaf, a batch at a time: (created or refused, what did not fit or found
        the leaf closed, the head last read)."""
        key = leaf.key(partner_id)
        done: Created[T] = []
        left = list(work)
        raced = 0
        while left:
            if head is not None and head.get("closed"):
                return done, left, head
            entries = _entries(head) if head is not None else self._count(key)
            room = self.max_entries - entries
            if room <= 0:
                return done, left, head
            run = _run(left, min(room, MAX_OPERATIONS - 1))
            counted = {"id": HEAD_ID, "pk": key, "entries": entries + len(run), "closed": False}
            first = ("create", (counted,)) if head is None else ("replace", (HEAD_ID, counted), _on(head))
            operations = [first] + [("create", ({**entry, "pk": key},)) for _, entry in run]
            try:
                answers = self._trades.execute_item_batch(operations, partition_key=key, no_response=True)
            except CosmosBatchOperationError as error:
                if error.status_code not in REFUSED:
                    raise
                forget(error)
                if error.error_index != 0:  # an entry exists: its run goes to the path that reads first
                    done += [(what, None) for what, _ in run]
                    left = left[len(run) :]
                else:
                    raced += 1
                    if raced == ETAG_RETRY_LIMIT:
                        raise ContentionNotSettled("too many concurrent writes to a record index head") from None
                if left:  # a concurrent batch moved the head (or the emulator kept part of a refused batch)
                    head = read_or_none(self._trades, HEAD_ID, key)
                continue
            if point is not None:
                faults.point(point)
            head = {**counted, "_etag": answers[0]["eTag"]}
            for (what, entry), answer in zip(run, answers[1:], strict=True):
                entry["pk"] = key
                done.append((what, answer))
            left = left[len(run) :]
        return done, left, head

    def _count(self, key: str) -> int:
        """The entries of a partition: one that has no head yet (written before decision 0092), counted once by
        the creation that writes its head; a full one before it closes; a closed one before it retires."""
        counted = query(
            self._trades, "SELECT COUNT(1) AS n FROM c WHERE c.pk = @pk AND c.id != @head", key, pk=key, head=HEAD_ID
        )
        return int(counted[0]["n"]) if counted else 0

    def _close(self, partner_id: str, leaf: Node, head: JsonObject | None) -> None:
        """Close a full leaf (its head on its ETag: a creation racing it is refused), then list it in the
        layout. A head already closed (the layout was out of date) only gets listed."""
        key = leaf.key(partner_id)
        if head is None:
            head = read_or_none(self._trades, HEAD_ID, key)
        if head is None or not head.get("closed"):
            try:
                if head is None:  # a partition written before decision 0092, already full
                    self._trades.create_item({"id": HEAD_ID, "pk": key, "entries": self._count(key), "closed": True})
                elif _entries(head) < self.max_entries:
                    return  # not full after all (a race moved it): the next round reads it again
                elif (held := self._count(key)) <= self.max_entries * REUSE_BELOW:
                    # Its entries expired (retention): counted again, it takes more instead of closing.
                    self._trades.replace_item(
                        HEAD_ID,
                        {**without_system_properties(head), "entries": held},
                        etag=head["_etag"],
                        match_condition=MatchConditions.IfNotModified,
                    )
                    return
                else:
                    self._trades.replace_item(
                        HEAD_ID,
                        {**without_system_properties(head), "closed": True},
                        etag=head["_etag"],
                        match_condition=MatchConditions.IfNotModified,
                    )
            except (CosmosAccessConditionFailedError, CosmosResourceExistsError) as error:
                forget(error)
                return  # a creation or another close got there first: the next round reads it again
        self._record_closed(partner_id, leaf)


def _entries(head: JsonObject) -> int:
    return int(head["entries"])


def _on(head: JsonObject) -> JsonObject:
    return {"if_match_etag": head["_etag"]}


def _run(work: list[tuple[T, JsonObject]], most: int) -> list[tuple[T, JsonObject]]:
    """The first entries of `work` that fit one batch beside the head: at most `most`, and MAX_BATCH_BYTES."""
    size = 0
    for count, (_, entry) in enumerate(work[:most]):
        size += len(orjson.dumps(entry))  # as sent (a tenth of the CPU of str(): decision 0126)
        if count and size > MAX_BATCH_BYTES:
            return work[:count]
    return work[:most]
