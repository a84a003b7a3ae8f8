"""The record index's growth on the Cosmos DB emulator (decisions 0092 and 0115), at the adapter: a crash
between closing a node and listing it in the layout, partitions written before heads existed, closed nodes
retired once their entries expired, and the layout's arithmetic. The growth under concurrent HTTP batches,
with the day MATCHED, is tests/e2e/test_index_growth.py; under SIGKILL, the chaos run (`CHAOS_BACKEND=azure
make chaos`)."""

from __future__ import annotations

import datetime as dt
import uuid
from collections import Counter

import orjson
import pytest

from backends.cosmos.index_growth import IndexGrowth
from backends.cosmos.index_layout import HEAD_ID, LAYOUT_ID, Chain, Layout, Node
from backends.cosmos.items import query
from backends.cosmos.keys import compound_key, index_bucket, index_key
from backends.cosmos.storage import CosmosStorage
from core.records import BatchMarker, TradeRecordRow

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")

T0 = dt.datetime(2026, 11, 20, 21, 0, tzinfo=dt.UTC)
DAY = dt.date(2026, 11, 20)


@pytest.fixture
def database(cosmos_emulator):
    name = f"growth-{uuid.uuid4().hex[:8]}"
    opened: list[CosmosStorage] = []

    def open_storage(max_entries: int) -> CosmosStorage:
        storage = CosmosStorage(
            cosmos_emulator.endpoint,
            name,
            key=cosmos_emulator.key,
            create_containers=True,
            index_partition_max_entries=max_entries,
        )
        opened.append(storage)
        return storage

    yield open_storage
    for storage in opened:
        storage.close()


def row(trade_record_id: str, version: int = 1) -> TradeRecordRow:
    document = orjson.dumps({"payments": [{"payment_id": f"支払 {trade_record_id}"}]}).decode()
    return TradeRecordRow(
        trade_record_id, version, T0 + dt.timedelta(minutes=version), "0042", DAY, "01", 1, 1,
        1200, 109, 0, {"SALE": 1200}, document, (f"支払 {trade_record_id}",), {"4901": 1},
    )  # fmt: skip


def save(storage: CosmosStorage, partner_id: str, rows: list[TradeRecordRow], batch_id: str | None = None):
    batch_id = batch_id or f"b-{uuid.uuid4().hex[:8]}"
    marker = BatchMarker(partner_id, batch_id, "trade-records", len(rows), "d", T0, "0042", DAY, 1)
    return storage.save_trade_records(marker, rows)


def index_items(storage: CosmosStorage, partner_id: str) -> list[dict]:
    return query(
        storage._containers.trade_records,
        "SELECT * FROM c WHERE STARTSWITH(c.pk, @prefix)",
        prefix=compound_key("i", partner_id) + "|",
    )


def entries_by_partition(storage: CosmosStorage, partner_id: str) -> Counter:
    return Counter(item["pk"] for item in index_items(storage, partner_id) if item["id"] not in (HEAD_ID, LAYOUT_ID))


def test_a_close_cut_short_before_the_layout_is_completed_by_the_next_write(database, monkeypatch):
    storage = database(2)
    partner_id = "ชื่อ/partner 7"
    listed = IndexGrowth._record_closed

    def crash(self, partner, node):  # the process dies after closing the head, before the layout
        raise RuntimeError("killed")

    monkeypatch.setattr(IndexGrowth, "_record_closed", crash)
    rows = [row(f"T {number}") for number in range(60)]
    with pytest.raises(RuntimeError, match="killed"):
        save(storage, partner_id, rows, "the batch")
    monkeypatch.setattr(IndexGrowth, "_record_closed", listed)
    heads = [item for item in index_items(storage, partner_id) if item["id"] == HEAD_ID]
    assert any(head["closed"] for head in heads) and not any(
        item["id"] == LAYOUT_ID for item in index_items(storage, partner_id)
    )

    again = database(2)  # a new process: it knows no layout
    # The retry (same batch_id) counts what the first attempt wrote.
    assert save(again, partner_id, rows, "the batch").changes.newer == 60
    assert max(entries_by_partition(again, partner_id).values()) <= 2
    assert sum(entries_by_partition(again, partner_id).values()) == 60
    closed = {head["pk"] for head in index_items(again, partner_id) if head["id"] == HEAD_ID and head["closed"]}
    layout = again._trade_records.index.growth.reload(partner_id)
    assert {node.key(partner_id) for node in layout.closed} == closed
    assert again.trade_record_versions(partner_id, [r.trade_record_id for r in rows]).keys() == {
        r.trade_record_id for r in rows
    }
    # A later version of each, written where its entry is (the stale layout of the first instance too).
    assert save(storage, partner_id, [row(f"T {number}", 2) for number in range(60)]).changes.newer == 60
    assert sum(entries_by_partition(again, partner_id).values()) == 60
    assert again.trade_records_by_payment_id(partner_id, ["支払 T 59", "支払 T 0"]) == {
        "支払 T 59": {"T 59"},
        "支払 T 0": {"T 0"},
    }


def test_partitions_written_before_heads_existed_are_counted_once_and_take_no_more_than_they_hold(database):
    partner_id = f"p-{uuid.uuid4().hex[:6]}"
    before = database(1000)
    save(before, partner_id, [row(f"old {number}") for number in range(64)])
    trades = before._containers.trade_records
    for head in [item for item in index_items(before, partner_id) if item["id"] == HEAD_ID]:
        trades.delete_item(HEAD_ID, partition_key=head["pk"])  # as a database written before decision 0092
    held = entries_by_partition(before, partner_id)

    after = database(4)
    assert save(after, partner_id, [row(f"new {number}") for number in range(64)]).changes.newer == 64
    now = entries_by_partition(after, partner_id)
    for key, count in held.items():
        assert now[key] == count if count >= 4 else now[key] <= 4  # a full one took nothing more
    assert all(count <= 4 for key, count in now.items() if key not in held or held[key] < 4)
    heads = {item["pk"]: item for item in index_items(after, partner_id) if item["id"] == HEAD_ID}
    assert all(heads[key]["entries"] >= count for key, count in now.items())
    # A resend of the old records under a new batch_id finds them in their closed nodes: nothing doubles.
    assert save(after, partner_id, [row(f"old {number}") for number in range(64)]).changes.newer == 0
    assert sum(entries_by_partition(after, partner_id).values()) == 128


def test_a_path_leads_through_the_buckets_live_closed_nodes_to_its_leaf():
    bucket = index_bucket("T-1")
    assert Layout().path("T-1") == [Node(bucket, 0)]
    assert Node(bucket, 0).key("p") == index_key("p", bucket)  # decision 0056's partitions are generation 0
    layout = Layout({bucket: Chain(5, (0, 3, 4)), (bucket + 1) % 16: Chain(1, (0,))})
    assert layout.path("T-1") == [Node(bucket, 0), Node(bucket, 3), Node(bucket, 4), Node(bucket, 5)]
    assert layout.leaf("T-1") == Node(bucket, 5)
    nodes = layout.nodes()
    assert len(nodes) == 16 + 3 + 1  # 16 leaves, always; the closed nodes still live
    assert len({node.key("p") for node in nodes}) == len(nodes)
    item = {**layout.with_chain("p", bucket, layout.chain(bucket).closed(5).without([0])), "_etag": "e"}
    assert Layout.of_item(item).chain(bucket) == Chain(6, (3, 4, 5))
    assert Chain(6, (3, 4, 5)).closed(2) == Chain(6, (3, 4, 5))  # a close already listed changes nothing


def test_a_full_node_whose_entries_expired_takes_new_ones_instead_of_closing(database):
    storage = database(4)
    partner_id = f"p-{uuid.uuid4().hex[:6]}"
    save(storage, partner_id, [row(f"old {number}") for number in range(64)])
    trades = storage._containers.trade_records
    heads = {item["pk"]: item for item in index_items(storage, partner_id) if item["id"] == HEAD_ID}
    held = entries_by_partition(storage, partner_id)
    full = [key for key, count in held.items() if count == 4 and not heads[key]["closed"]]
    for item in index_items(storage, partner_id):  # as retention's ttl does (the emulator never expires)
        if item["pk"] in full and item["id"] not in (HEAD_ID, LAYOUT_ID):
            trades.delete_item(item["id"], partition_key=item["pk"])
    closed_before = storage._trade_records.index.growth.reload(partner_id).closed
    save(storage, partner_id, [row(f"new {number}") for number in range(64)])
    heads = {item["pk"]: item for item in index_items(storage, partner_id) if item["id"] == HEAD_ID}
    assert any(not heads[key]["closed"] and entries_by_partition(storage, partner_id)[key] > 0 for key in full)
    assert max(entries_by_partition(storage, partner_id).values()) <= 4
    assert all(heads[key]["entries"] >= count for key, count in entries_by_partition(storage, partner_id).items())
    assert storage._trade_records.index.growth.reload(partner_id).closed >= closed_before


def test_the_look_ups_of_a_partner_of_many_nodes_select_them_by_prefix(database, monkeypatch):
    from backends.cosmos import index_layout

    storage = database(2)
    partner_id = f"p-{uuid.uuid4().hex[:6]}"
    other = f"{partner_id}x"  # a partner whose id starts with this one's
    save(storage, partner_id, [row(f"T {number}") for number in range(80)])
    save(storage, other, [row(f"T {number}") for number in range(3)])
    monkeypatch.setattr(index_layout, "NODES_BY_NAME", 16)
    assert len(storage._trade_records.index.growth.reload(partner_id).closed) > 16
    assert storage.trade_records_by_payment_id(partner_id, ["支払 T 0", "支払 T 79", "支払 T 80"]) == {
        "支払 T 0": {"T 0"},
        "支払 T 79": {"T 79"},
    }
    assert storage.trade_records_by_payment_id(other, ["支払 T 0", "支払 T 79"]) == {"支払 T 0": {"T 0"}}
    # The entries' look-up and the closed nodes' check before a creation: a resend doubles nothing.
    ids = [f"T {number}" for number in range(80)]
    assert storage.trade_record_versions(partner_id, ids).keys() == set(ids)
    assert save(storage, partner_id, [row(one) for one in ids]).changes.newer == 0
    assert sum(entries_by_partition(storage, partner_id).values()) == 80


def test_closed_nodes_whose_entries_all_expired_leave_the_layout_and_the_chain_never_goes_back(database):
    storage = database(4)
    partner_id = f"p-{uuid.uuid4().hex[:6]}"
    growth = storage._trade_records.index.growth
    old, new = in_each_bucket("old", 10), in_each_bucket("new", 10)  # 10 a bucket at 4 a node: 2 closes each
    save(storage, partner_id, [row(one) for one in old])
    grown = growth.reload(partner_id)
    assert all(grown.chain(bucket) == Chain(2, (0, 1)) for bucket in range(16))
    trades = storage._containers.trade_records
    expired = {node.key(partner_id) for node in grown.closed}
    for item in index_items(storage, partner_id):  # as retention's ttl does (the emulator never expires)
        if item["pk"] in expired and item["id"] != HEAD_ID:
            trades.delete_item(item["id"], partition_key=item["pk"])
    kept = sorted(_in_leaves(storage, partner_id))

    save(storage, partner_id, [row(one) for one in new])
    layout = growth.reload(partner_id)
    for bucket in range(16):
        # The emptied ones retired when the leaf closed again; the ones closed since hold entries: live.
        assert layout.chain(bucket) == Chain(4, (2, 3))
    assert storage.trade_record_versions(partner_id, kept + new).keys() == set(kept + new)
    assert max(entries_by_partition(storage, partner_id).values()) <= 4
    # A record whose entry expired comes back as new, in its leaf; one still live keeps its one entry.
    gone = next(one for one in old if one not in kept)
    assert save(storage, partner_id, [row(gone, 2), row(kept[0], 2)]).changes.newer == 2
    ids = [
        item["trade_record_id"] for item in index_items(storage, partner_id) if item["id"] not in (HEAD_ID, LAYOUT_ID)
    ]
    assert ids.count(gone) == 1 and ids.count(kept[0]) == 1
    assert storage.trade_records_by_payment_id(partner_id, [f"支払 {gone}"]) == {f"支払 {gone}": {gone}}


def in_each_bucket(prefix: str, per_bucket: int) -> list[str]:
    """Trade record ids, `per_bucket` in each of the 16 buckets."""
    by_bucket: dict[int, list[str]] = {bucket: [] for bucket in range(16)}
    for number in range(100 * per_bucket):
        one = f"{prefix} {number}"
        if len(by_bucket[index_bucket(one)]) < per_bucket:
            by_bucket[index_bucket(one)].append(one)
    return [one for ids in by_bucket.values() for one in ids]


def _in_leaves(storage: CosmosStorage, partner_id: str) -> set[str]:
    leaves = {node.key(partner_id) for node in storage._trade_records.index.growth.reload(partner_id).nodes()}
    leaves -= {node.key(partner_id) for node in storage._trade_records.index.growth.layout(partner_id).closed}
    return {
        item["trade_record_id"]
        for item in index_items(storage, partner_id)
        if item["pk"] in leaves and item["id"] not in (HEAD_ID, LAYOUT_ID)
    }


def test_a_bucket_migrated_without_a_head_counts_what_the_migration_wrote_on_its_first_creation(database):
    from tests.contract.test_cosmos_storage import write_old_layout

    storage = database(4)
    partner_id = f"p-{uuid.uuid4().hex[:6]}"
    ids = [one for one in in_each_bucket("M", 6) if index_bucket(one) == 3]
    for one in ids[:3]:  # `hq cosmos migrate-index` writes generation 0 without its head
        write_old_layout(storage, partner_id, row(one))
    assert storage.migrate_record_index(lambda _done: None).created == 3
    assert save(storage, partner_id, [row(one) for one in ids[3:]]).changes.newer == 3
    heads = {item["pk"]: item for item in index_items(storage, partner_id) if item["id"] == HEAD_ID}
    first, second = Node(3, 0).key(partner_id), Node(3, 1).key(partner_id)
    assert entries_by_partition(storage, partner_id) == {first: 4, second: 2}
    assert heads[first]["entries"] == 4 and heads[first]["closed"] and heads[second]["entries"] == 2
    assert storage.trade_record_versions(partner_id, ids).keys() == set(ids)
