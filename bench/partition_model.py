"""Ten years of a chain in Cosmos DB's logical partitions (decisions 0093 and 0115): for each container, the
largest logical partition and when it would reach the 20 GB a logical partition holds, with retention off and
on, and what the record index's growth costs a batch of new records. `python -m bench.partition_model` prints
the tables of docs/performance.md; bench/capacity.py prints them with its measured sizes."""

from __future__ import annotations

import argparse
import dataclasses
import math

from backends.cosmos.index_growth import REUSE_BELOW
from backends.cosmos.keys import INDEX_BUCKETS
from core.retention import EXPIRY_GRACE_DAYS
from core.settings import DEFAULT_INDEX_PARTITION_MAX_ENTRIES

GB = 1024**3
LOGICAL_PARTITION_GB = 20
YEARS = 10
RETENTIONS = (0, 7, 30, 90)
PHYSICAL_PARTITION_GB = 50  # Cosmos DB splits a physical partition past this: a query fans out over them


@dataclasses.dataclass(frozen=True)
class Sizes:
    """Bytes stored per item, as bench/capacity.py measures them (defaults: its run in docs/performance.md)."""

    record_bytes: float = 3.6 * 1024  # a record in its store-day, with its batch entry's share
    entry_bytes: float = 600  # a record index entry (core/settings.py DEFAULT_INDEX_PARTITION_MAX_ENTRIES)
    close_bytes: float = 1.5 * 1024  # a close with its result
    store_bytes: float = 1024  # a store's master item and its registration
    product_bytes: float = 1.5 * 1024


@dataclasses.dataclass(frozen=True)
class Chain:
    stores: int = 10_000
    records_per_store_day: int = 2_000
    products: int = 50_000  # ASSUMED: the partner's catalogue (items of its partition in `partners`)
    batch_records: int = 500
    retention_days: int = 0
    max_entries: int = DEFAULT_INDEX_PARTITION_MAX_ENTRIES


def held_days(chain: Chain, days: int) -> int:
    return min(days, chain.retention_days + 1 + EXPIRY_GRACE_DAYS) if chain.retention_days else days


def bucket_entries(chain: Chain, days: int) -> float:
    """The live entries of one of the 16 buckets of the partner's index after `days`."""
    return chain.stores * chain.records_per_store_day * held_days(chain, days) / INDEX_BUCKETS


def index_nodes(chain: Chain, days: int) -> int:
    """The live nodes of the partner's index after `days` (decision 0115): 16 leaves, and each bucket's
    closed nodes still holding entries. With retention off every closed node is full; with retention a leaf
    whose entries expired below REUSE_BELOW takes more instead of closing, and when leaves do close the
    oldest live node of a chain is partly expired (and an empty one waits for the next close to retire)."""
    entries = bucket_entries(chain, days)
    if not chain.retention_days:
        return INDEX_BUCKETS * max(1, math.ceil(entries / chain.max_entries))
    if entries <= chain.max_entries * REUSE_BELOW:
        return INDEX_BUCKETS
    return INDEX_BUCKETS * (math.ceil(entries / chain.max_entries) + 2)


def physical_partitions(chain: Chain, sizes: Sizes, days: int) -> int:
    """Physical partitions of `trade-records` holding the chain's records and index (ASSUMED: it alone)."""
    stored = (
        chain.stores * chain.records_per_store_day * held_days(chain, days) * (sizes.record_bytes + sizes.entry_bytes)
    )
    return max(1, math.ceil(stored / GB / PHYSICAL_PARTITION_GB))


def reached(partitions: int, named: int) -> float:
    """Expected physical partitions a query reaches that names `named` logical partitions (hashed over them)."""
    return partitions * (1 - (1 - 1 / partitions) ** named)


def leaves_touched(records: int) -> float:
    """Expected distinct leaves (one a bucket) a batch's records hash to."""
    return INDEX_BUCKETS * (1 - (1 - 1 / INDEX_BUCKETS) ** records)


def requests_per_new_record(chain: Chain, days: int, sizes: Sizes = Sizes()) -> float:
    """Cosmos DB requests per record of a batch of new records in one store-day: a transactional batch per
    leaf touched, the heads query, records in batches of 100, the closed nodes' check (once grown) and the
    payment-id look-up, each query one request per physical partition it reaches, and the layout check
    after it (the batch's other requests, markers and reads, aside)."""
    nodes = index_nodes(chain, days)
    physical = physical_partitions(chain, sizes, days)
    closed_check = reached(physical, nodes - INDEX_BUCKETS) if nodes > INDEX_BUCKETS else 0
    records = math.ceil(chain.batch_records / 100)
    requests = leaves_touched(chain.batch_records) + 1 + records + closed_check + reached(physical, nodes) + 1
    return requests / chain.batch_records


def partitions(chain: Chain, sizes: Sizes, days: int) -> list[dict]:
    """Each container's largest logical partition after `days`, in GB, and when it reaches 20 GB (years, or
    None when it is bounded)."""
    per_year_closes = chain.stores * 365 * sizes.close_bytes / GB
    store_day = chain.records_per_store_day * sizes.record_bytes / GB
    index_node = min(chain.max_entries, bucket_entries(chain, days))
    master = (chain.stores * sizes.store_bytes + chain.products * sizes.product_bytes) / GB
    return [
        _row("trade-records", "a record index node (i|partner|bucket[|gN])", index_node * sizes.entry_bytes / GB),
        _row("trade-records", "a store-day (records, batch entries, tombstones)", store_day),
        _row("daily-closes", "a store (closes and results: partner and store)", days * sizes.close_bytes / GB),
        _row(
            "daily-closes (before decision 0093)",
            "the partner",
            per_year_closes * days / 365,
            LOGICAL_PARTITION_GB / per_year_closes,
        ),
        _row("partners", "the partner (stores, registrations, catalogue, mapping)", master),
        _row("batches", "a batch marker (partner and batch_id)", 2 * 1024 / GB),
    ]


def _row(container: str, partition: str, gb: float, fills_in_years: float | None = None) -> dict:
    return {"container": container, "partition": partition, "gb": gb, "fills_in_years": fills_in_years}


def ten_years(sizes: Sizes = Sizes(), scale: int = 1) -> list[dict]:
    """For retention off and 7/30/90 days: the largest partition of each container after ten years, and the
    index's live nodes and requests per new record after one month, one year and ten years."""
    out = []
    for retention in RETENTIONS:
        chain = Chain(stores=10_000 * scale, retention_days=retention)
        days = YEARS * 365
        out.append(
            {
                "stores": chain.stores,
                "retention_days": retention,
                "partitions": partitions(chain, sizes, days),
                "nodes": {when: index_nodes(chain, span) for when, span in SPANS.items()},
                "requests_per_new_record": {
                    when: requests_per_new_record(chain, span, sizes) for when, span in SPANS.items()
                },
            }
        )
    return out


SPANS = {"1 month": 30, "1 year": 365, "10 years": YEARS * 365}


def render(rows: list[dict]) -> str:
    lines = [
        "| stores | retention | largest logical partition after ten years: trade-records / daily-closes / partners / "
        "batches (none fills) "
        "| daily-closes by partner (before 0093) fills in | index nodes live: 1 month / 1 year / 10 years "
        "| requests a new record: 1 month / 1 year / 10 years |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        parts = {part["container"]: part for part in row["partitions"]}
        largest = " / ".join(
            _size(max(p["gb"] for p in row["partitions"] if p["container"] == name))
            for name in ("trade-records", "daily-closes", "partners", "batches")
        )
        before = parts["daily-closes (before decision 0093)"]["fills_in_years"]
        nodes = " / ".join(f"{count:,}" for count in row["nodes"].values())
        requests = " / ".join(f"{value:.2f}" for value in row["requests_per_new_record"].values())
        retention = f"{row['retention_days']} days" if row["retention_days"] else "off"
        lines.append(f"| {row['stores']:,} | {retention} | {largest} | {before:.1f} years | {nodes} | {requests} |")
    return "\n".join(lines)


def _size(gb: float) -> str:
    if gb >= 1:
        return f"{gb:.3g} GB"
    if gb * 1024 >= 1:
        return f"{gb * 1024:.3g} MB"
    return f"{gb * 1024 * 1024:.3g} KB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.partition_model", description=__doc__.split("\n\n")[0])
    parser.parse_args(argv)
    for scale in (1, 10):
        print(render(ten_years(scale=scale)))
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
