"""Where a partner's record index lives, and how it grows (decision 0092).

Every partner starts with the 16 logical partitions of decision 0056 (nodes at depth 4: CRC-32 of the
trade_record_id modulo 16). A node holds at most COSMOS_INDEX_PARTITION_MAX_ENTRIES entries: when it is
full it is *closed* and its hash range continues in its two children (depth + 1: the CRC modulo
2**(depth + 1)), each a new logical partition. Entries never move: an entry stays in the node where it was
created, and is replaced there. So a trade record's entry is on its *path*, the closed nodes its CRC
leads through and the open node (the leaf) at the end, and only the leaf takes new entries.

Why that keeps the version rule exact: an entry is created only in a transactional batch whose first
operation replaces the leaf's head item (id "head": its count of entries and whether it is closed) on
its ETag. Closing a node is a replace of the same head on its ETag. So a creation that races a close is
refused, and a writer whose layout is out of date finds out at its first creation and reads it again.
The per-partner layout item (the closed nodes) is what writers cache; it is written after the head is
closed and before any creation in the children (a writer that finds a closed head the layout does not
list writes the layout first).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from backends.cosmos.keys import compound_key, index_key
from core.stored_json import JsonObject

BASE_DEPTH = 4  # 16 nodes: the layout of decision 0056, where every partner's index starts
HEAD_ID = "head"  # a node's head item (entries' ids all start with "v|")
LAYOUT_ID = "layout"
# About 600 bytes a stored entry (323 of JSON with one payment id, system properties and its indexed terms):
# 20 million are ~12 GB, a margin of 40 % under the 20 GB of a logical partition for longer payment id lists.
DEFAULT_MAX_ENTRIES = 20_000_000


def record_hash(trade_record_id: str) -> int:
    """CRC-32 of the trade_record_id: stable across processes and versions (keys.index_bucket at depth 4)."""
    return zlib.crc32(trade_record_id.encode("utf-8"))


@dataclass(frozen=True, order=True)
class Node:
    depth: int
    bucket: int  # the CRC modulo 2**depth

    def key(self, partner_id: str) -> str:
        """Its logical partition; the 16 base nodes keep decision 0056's keys, so no entry written before
        moves."""
        if self.depth == BASE_DEPTH:
            return index_key(partner_id, self.bucket)
        return compound_key("i", partner_id, str(self.bucket), str(self.depth))

    def children(self) -> tuple[Node, Node]:
        return Node(self.depth + 1, self.bucket), Node(self.depth + 1, self.bucket + (1 << self.depth))

    def text(self) -> str:
        return f"{self.depth}.{self.bucket}"

    @classmethod
    def of_text(cls, text: str) -> Node:
        depth, bucket = text.split(".")
        return cls(int(depth), int(bucket))


def layout_key(partner_id: str) -> str:
    """The partition of a partner's layout item (its id "layout")."""
    return compound_key("i", partner_id, LAYOUT_ID)


@dataclass(frozen=True)
class Layout:
    closed: frozenset[Node] = frozenset()
    etag: str | None = None  # of the layout item read (None: there is none, no node closed yet)

    @classmethod
    def of_item(cls, item: JsonObject | None) -> Layout:
        if item is None:
            return cls()
        return cls(frozenset(Node.of_text(text) for text in item["closed"]), item["_etag"])

    def path(self, trade_record_id: str) -> list[Node]:
        """The nodes a record's entry can be in: the closed ones its hash leads through, then its leaf."""
        crc = record_hash(trade_record_id)
        node = Node(BASE_DEPTH, crc % (1 << BASE_DEPTH))
        nodes = [node]
        while node in self.closed:
            node = Node(node.depth + 1, crc % (1 << (node.depth + 1)))
            nodes.append(node)
        return nodes

    def leaf(self, trade_record_id: str) -> Node:
        return self.path(trade_record_id)[-1]

    def nodes(self) -> list[Node]:
        """Every node of the partner's index: the closed ones and the open ones."""
        open_nodes = [Node(BASE_DEPTH, bucket) for bucket in range(1 << BASE_DEPTH)]
        open_nodes += [child for node in self.closed for child in node.children()]
        return sorted(self.closed | {node for node in open_nodes if node not in self.closed})

    def item(self, partner_id: str, closing: Node) -> JsonObject:
        """The layout item with `closing` added to the closed nodes."""
        return {
            "id": LAYOUT_ID,
            "pk": layout_key(partner_id),
            "partner_id": partner_id,
            "closed": sorted(node.text() for node in self.closed | {closing}),
        }
