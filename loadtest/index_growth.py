"""How far the partners' record indexes grew during a run on the Cosmos DB emulator (decision 0115): the
chaos run sets COSMOS_INDEX_PARTITION_MAX_ENTRIES small, so that nodes close while the host is killed."""

from __future__ import annotations

from backends.cosmos.index_layout import LAYOUT_ID, Layout
from backends.cosmos.items import query
from backends.cosmos.keys import INDEX_BUCKETS
from backends.cosmos.storage import CosmosStorage

# Small enough that a partner's index closes nodes within a minute of the chaos workload.
CHAOS_MAX_ENTRIES = "16"


def index_nodes_closed(env: dict[str, str]) -> int:
    """The record index nodes closed, over every partner of the host's database (a bucket's leaf generation
    counts its closes, retired nodes too)."""
    storage = CosmosStorage(env["COSMOS_ENDPOINT"], env["COSMOS_DATABASE"], key=env["COSMOS_KEY"])
    try:
        layouts = query(storage._containers.trade_records, "SELECT * FROM c WHERE c.id = @layout", layout=LAYOUT_ID)
        return sum(chain.leaf for item in layouts for chain in Layout.of_item(item).chains.values())
    finally:
        storage.close()


def growth_due(records_sent: int, partners: int, env: dict[str, str]) -> bool:
    """Whether some node must have closed: the partner with the most records has at least the average, and
    with more than its 16 first nodes hold one of them passed the limit."""
    limit = int(env.get("COSMOS_INDEX_PARTITION_MAX_ENTRIES") or CHAOS_MAX_ENTRIES)
    return records_sent // max(partners, 1) > INDEX_BUCKETS * limit
