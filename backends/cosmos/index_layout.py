"""Where a partner's record index lives, and how it grows (decision 0115, the fence of decision 0092).

Every partner has the 16 buckets of decision 0056 (CRC-32 of the trade_record_id modulo 16). Each bucket is
a *chain* of nodes, one logical partition each: generation 0 (decision 0056's key, so nothing written before
moves), then 1, 2, ... A node holds at most COSMOS_INDEX_PARTITION_MAX_ENTRIES entries: when it is full it is
*closed* and its bucket continues in ONE successor, generation + 1, the bucket's *leaf*. So a partner has
exactly 16 open nodes at any size, and a batch of new records writes at most 16 transactional batches.
Entries never move: an entry stays in the node where it was created, and is replaced there. A record's entry
is in its bucket's closed generations still live or in its leaf, and only the leaf takes new entries.

Why that keeps the version rule exact: an entry is created only in a transactional batch whose first
operation replaces the leaf's head item (id "head": its count of entries and whether it is closed) on its
ETag. Closing a node is a replace of the same head on its ETag. So a creation that races a close is
refused, and a writer whose layout is out of date finds out at its first creation and reads it again.
The per-partner layout item (per bucket: the leaf's generation and the closed generations still live) is
what writers cache; it is written after the head is closed and before any creation in the successor (a
writer that finds a closed head the layout does not list writes the layout first). A closed node never
takes an entry again, so once its entries have all expired (retention) it stays empty, and the layout
drops it: look-ups read only the live chain.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from backends.cosmos.keys import INDEX_BUCKETS, compound_key, index_bucket, index_key
from core.stored_json import JsonObject

HEAD_ID = "head"  # a node's head item (entries' ids all start with "v|")
LAYOUT_ID = "layout"


@dataclass(frozen=True, order=True)
class Node:
    bucket: int
    generation: int  # 0: decision 0056's partition; each close of the bucket's leaf adds one

    def key(self, partner_id: str) -> str:
        """Its logical partition: generation 0 keeps decision 0056's key, so no entry written before moves;
        the "g" keeps later ones apart from every other key of the partner."""
        if self.generation == 0:
            return index_key(partner_id, self.bucket)
        return compound_key("i", partner_id, str(self.bucket), f"g{self.generation}")

    def successor(self) -> Node:
        return Node(self.bucket, self.generation + 1)


# Up to this many partitions a query names them (`c.pk IN (...)`, which Cosmos DB routes to those only);
# beyond, it selects the partner's index by its keys' prefix (that many parameters would near Cosmos DB's
# limits on a query).
NODES_BY_NAME = 256


def in_partitions(partner_id: str, keys: list[str]) -> tuple[str, dict[str, str]]:
    """The WHERE clause selecting these partitions of the partner's index, and its parameters."""
    if len(keys) > NODES_BY_NAME:  # "|" is escaped inside a key's parts (keys.py): the prefix is the partner's
        return "STARTSWITH(c.pk, @partner)", {"partner": compound_key("i", partner_id) + "|"}
    names = {f"k{number}": key for number, key in enumerate(keys)}
    return "c.pk IN (" + ", ".join(f"@{name}" for name in names) + ")", names


def layout_key(partner_id: str) -> str:
    """The partition of a partner's layout item (its id "layout")."""
    return compound_key("i", partner_id, LAYOUT_ID)


@dataclass(frozen=True)
class Chain:
    """One bucket: the generation of its leaf, and its closed generations that may still hold entries."""

    leaf: int = 0
    live: tuple[int, ...] = ()  # ascending, each below `leaf`

    def closed(self, generation: int) -> Chain:
        """The chain once its node of `generation` closed (nothing when it knows that already)."""
        if generation < self.leaf:
            return self
        return Chain(generation + 1, (*self.live, generation))

    def without(self, retired: Iterable[int]) -> Chain:
        gone = set(retired)
        return Chain(self.leaf, tuple(one for one in self.live if one not in gone))


@dataclass(frozen=True)
class Layout:
    chains: Mapping[int, Chain] = field(default_factory=dict)  # buckets whose leaf is past generation 0
    etag: str | None = None  # of the layout item read (None: there is none, no node closed yet)

    @classmethod
    def of_item(cls, item: JsonObject | None) -> Layout:
        if item is None:
            return cls()
        chains = {
            int(bucket): Chain(int(chain["leaf"]), tuple(int(one) for one in chain["live"]))
            for bucket, chain in item["buckets"].items()
        }
        return cls(chains, item["_etag"])

    def chain(self, bucket: int) -> Chain:
        return self.chains.get(bucket, Chain())

    @property
    def closed(self) -> frozenset[Node]:
        """The closed nodes still live, over every bucket."""
        return frozenset(Node(bucket, one) for bucket, chain in self.chains.items() for one in chain.live)

    def leaf_of(self, bucket: int) -> Node:
        return Node(bucket, self.chain(bucket).leaf)

    def path(self, trade_record_id: str) -> list[Node]:
        """The nodes a record's entry can be in: its bucket's closed nodes still live, then its leaf."""
        return self.bucket_path(index_bucket(trade_record_id))

    def bucket_path(self, bucket: int) -> list[Node]:
        """`path` of every record in `bucket`: a batch's records are in 16 buckets, made once each."""
        chain = self.chain(bucket)
        return [Node(bucket, one) for one in chain.live] + [Node(bucket, chain.leaf)]

    def leaf(self, trade_record_id: str) -> Node:
        return self.leaf_of(index_bucket(trade_record_id))

    def nodes(self) -> list[Node]:
        """Every live node of the partner's index: the closed ones and the 16 leaves."""
        return sorted(self.closed | {self.leaf_of(bucket) for bucket in range(INDEX_BUCKETS)})

    def with_chain(self, partner_id: str, bucket: int, chain: Chain) -> JsonObject:
        """The layout item with the chain of `bucket` replaced."""
        chains = {**self.chains, bucket: chain}
        return {
            "id": LAYOUT_ID,
            "pk": layout_key(partner_id),
            "partner_id": partner_id,
            "buckets": {str(one): {"leaf": each.leaf, "live": list(each.live)} for one, each in sorted(chains.items())},
        }
