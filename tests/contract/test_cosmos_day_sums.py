"""The Cosmos DB store-day's sums item (backends/cosmos/day_sums.py, decision 0108): reconciliation reads one
item, and that item always sums what the store-day's partition holds, through later versions, moves between
days, resends, concurrent writers and a crash at every fault point of a trade-records write. Each check
compares the item with the same sums taken from the partition's records and batch entries themselves."""

from __future__ import annotations

import datetime as dt

import pytest
from azure.cosmos.exceptions import CosmosBatchOperationError

from backends.cosmos import day_sums, keys
from backends.cosmos.items import read_or_none
from core import faults
from core.records import StoreDayTotals
from tests.contract import test_cosmos_storage as shared
from tests.contract.test_cosmos_storage import Crash
from tests.contract.test_storage_contract import DAY, NEXT_DAY, T0, marker, new_id, record, run_together

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")


# The Cosmos DB adapter of test_cosmos_storage.py, on the same emulator database.
database_name, storage, partner = shared.database_name, shared.storage, shared.partner


WRITE_POINTS = (
    "cosmos.version_entry",
    "cosmos.record",
    "cosmos.tombstone",
    "cosmos.batch_entry",
    "cosmos.marker_committed",
)


def stored_day(storage, partner_id: str, store_id: str, business_date: dt.date) -> dict | None:
    pk = keys.day_key(partner_id, store_id, business_date.isoformat())
    return storage._containers.trade_records.read_item(day_sums.DAY_ITEM_ID, partition_key=pk)


def assert_exact(storage, partner_id: str, store_id: str = "S1", business_date: dt.date = DAY) -> StoreDayTotals:
    """The sums item against the records and batch entries of its partition, summed from them."""
    pk = keys.day_key(partner_id, store_id, business_date.isoformat())
    container = storage._containers.trade_records
    from_items = day_sums.summed_day(container, pk)
    kept = read_or_none(container, day_sums.DAY_ITEM_ID, pk) or day_sums.empty_day(pk)  # none: nothing written
    assert day_sums.day_totals(kept) == day_sums.day_totals(from_items)
    assert day_sums.day_batch_seqs(kept) == day_sums.day_batch_seqs(from_items)
    assert storage.store_day_totals(partner_id, store_id, business_date) == day_sums.day_totals(from_items)
    return day_sums.day_totals(from_items)


def save(storage, partner_id: str, rows, *, batch_id: str | None = None, seq: int = 1):
    first = rows[0]
    batch = marker(
        partner_id,
        "trade-records",
        len(rows),
        batch_id=batch_id,
        store_id=first.store_id,
        business_date=first.business_date,
        seq=seq,
    )
    return storage.save_trade_records(batch, list(rows))


def test_the_sums_follow_new_records_later_versions_moves_and_resends(storage, partner):
    rows = [record(f"T{n}", total=1000 + n, payments_minor={"SALE": 1000 + n, "TIP": n}) for n in range(250)]
    save(storage, partner, rows, seq=1)  # three runs of records into one day, one after the other
    totals = assert_exact(storage, partner)
    assert totals.by_source_type["01"].records == 250
    later = [record(f"T{n}", 2, total=5, source_transaction_type="02") for n in range(0, 250, 7)]
    save(storage, partner, later, seq=2)
    moved = [record(f"T{n}", 3, store_id="S2", business_date=NEXT_DAY) for n in range(0, 250, 11)]
    save(storage, partner, moved, seq=1)
    resent = save(storage, partner, rows[:40], seq=3)  # the same versions under a new batch_id
    assert resent.changes.newer == 0
    totals = assert_exact(storage, partner)
    assert assert_exact(storage, partner, "S2", NEXT_DAY).by_source_type["01"].records == len(moved)
    counted = sum(group.records for group in totals.by_source_type.values())
    assert counted == 250 - len(moved)
    assert storage.batch_seqs(partner, "S1", DAY) == [1, 2, 3]


def test_a_payment_type_no_record_holds_any_more_leaves_the_sums(storage, partner):
    save(storage, partner, [record("T1", payments_minor={"SALE": 1000, "GIFT": 0})])
    assert set(assert_exact(storage, partner).payments_minor) == {"SALE", "GIFT"}
    save(storage, partner, [record("T1", 2, source_transaction_type="02")], seq=2)
    totals = assert_exact(storage, partner)
    assert set(totals.payments_minor) == {"SALE"} and set(totals.by_source_type) == {"02"}


def test_a_reconciliation_reads_one_item_whatever_the_day_holds(storage, partner, monkeypatch):
    save(storage, partner, [record(f"T{n}") for n in range(300)])
    container = storage._containers.trade_records
    calls = []
    for name in ("read_item", "query_items"):
        original = getattr(container, name)
        monkeypatch.setattr(
            container, name, lambda *a, _name=name, _call=original, **k: calls.append(_name) or _call(*a, **k)
        )
    totals = storage.store_day_totals(partner, "S1", DAY)
    seqs = storage.batch_seqs(partner, "S1", DAY)
    assert totals.by_source_type["01"].records == 300 and seqs == [1]
    assert calls == ["read_item", "read_item"]


@pytest.mark.parametrize("point", WRITE_POINTS)
@pytest.mark.parametrize("hit", [1, 2])
def test_a_crash_at_any_fault_point_leaves_the_sums_exact_and_the_retry_completes_them(storage, partner, point, hit):
    save(storage, partner, [record(f"T{n}") for n in range(0, 120)], seq=1)
    save(storage, partner, [record("M1"), record("M2")], seq=2)
    # new records, later versions, a move out of S1 and a resend, in one batch into S1
    rows = (
        [record(f"T{n}", 2, total=7) for n in range(0, 120, 3)]
        + [record(f"N{n}") for n in range(130)]
        + [record("T5")]  # stored already: a resend of one record
    )
    move = [record("M1", 2, store_id="S2"), record("M2", 2, store_id="S2")]
    hits = []

    def crash(name: str) -> None:
        if name == point:
            hits.append(name)
            if len(hits) == hit:
                raise Crash(name)

    for batch_rows, seq in ((rows, 3), (move, 1)):
        batch_id = new_id("b")
        faults.install(crash)
        try:
            save(storage, partner, batch_rows, batch_id=batch_id, seq=seq)
        except Crash:
            pass
        finally:
            faults.install(None)
        hits.clear()
        assert_exact(storage, partner)
        assert_exact(storage, partner, "S2")
        save(storage, partner, batch_rows, batch_id=batch_id, seq=seq)  # the partner's retry
        assert_exact(storage, partner)
        assert_exact(storage, partner, "S2")
    totals = storage.store_day_totals(partner, "S1", DAY)
    assert totals.by_source_type["01"].records == 120 + 130
    assert totals.by_source_type["01"].total_minor == 80 * 1000 + 40 * 7 + 130 * 1000
    assert storage.batch_seqs(partner, "S1", DAY) == [1, 2, 3]


def test_concurrent_writers_of_one_store_day_keep_its_sums_exact(storage, partner):
    def write(number: int):
        rows = [record(f"C{number}-{n}", total=100 + number) for n in range(30)]
        rows += [record(f"SHARED-{n}", 1 + number % 3, total=number) for n in range(5)]
        return save(storage, partner, rows, seq=number + 1)

    run_together(6, write)
    totals = assert_exact(storage, partner)
    assert totals.by_source_type["01"].records == 6 * 30 + 5
    assert storage.batch_seqs(partner, "S1", DAY) == [1, 2, 3, 4, 5, 6]


def test_a_day_written_before_the_sums_item_is_summed_when_first_written(storage, partner):
    container = storage._containers.trade_records
    save(storage, partner, [record(f"T{n}") for n in range(5)])
    pk = keys.day_key(partner, "S1", DAY.isoformat())
    container.delete_item(day_sums.DAY_ITEM_ID, partition_key=pk)  # as the adapter left a day before it
    assert storage.store_day_totals(partner, "S1", DAY).by_source_type["01"].records == 5  # read from the records
    save(storage, partner, [record("T9")], seq=2)
    assert assert_exact(storage, partner).by_source_type["01"].records == 6
    assert storage.batch_seqs(partner, "S1", DAY) == [1, 2]


def test_the_emulator_rolls_back_a_refused_transactional_batch(storage):
    container = storage._containers.trade_records
    pk = keys.day_key(new_id(), "S1", DAY.isoformat())
    container.create_item({"id": "kept", "pk": pk, "n": 1})
    operations = [
        ("create", ({"id": "new", "pk": pk},)),
        ("upsert", ({"id": "kept", "pk": pk, "n": 2},)),
        ("create", ({"id": "kept", "pk": pk},)),  # refused: 409
    ]
    with pytest.raises(CosmosBatchOperationError) as refused:
        container.execute_item_batch(operations, partition_key=pk)
    assert refused.value.error_index == 2 and refused.value.status_code == 409
    items = list(
        container.query_items(
            "SELECT c.id, c.n FROM c WHERE c.pk = @pk", parameters=[{"name": "@pk", "value": pk}], partition_key=pk
        )
    )
    assert items == [{"id": "kept", "n": 1}]


def test_the_sums_item_expires_with_its_store_day(storage, partner, monkeypatch):
    monkeypatch.setattr(storage._trade_records._expiry, "retention_days", 7)
    today = dt.datetime.now(dt.UTC).date()
    save(storage, partner, [record("T1", business_date=today, modified=T0)])
    assert stored_day(storage, partner, "S1", today)["ttl"] > 0
    assert assert_exact(storage, partner, "S1", today).by_source_type["01"].records == 1
