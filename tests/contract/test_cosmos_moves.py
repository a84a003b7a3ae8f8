"""Records moved between store-days on Cosmos DB (decision 0116): a writer buries the days a record left
before it writes the record, so the record of the entry's version in its day says they are done and no write
clears the entry's list of them. The list is settled by the next version, entries of the earlier code (record
first) have their days buried again, and a slow writer of a version moving back loses to a newer move."""

from __future__ import annotations

import threading

import pytest

from backends.cosmos import keys
from backends.cosmos.items import read_or_none, without_system_properties
from backends.cosmos.record_writes import BURIED_FIRST
from core.versions import Version
from tests.contract import test_cosmos_storage as shared
from tests.contract.test_cosmos_day_sums import assert_exact
from tests.contract.test_cosmos_storage import Crash, crash_once
from tests.contract.test_storage_contract import DAY, NEXT_DAY, day_rows, record, save_records

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")

# The Cosmos DB adapter of test_cosmos_storage.py, on the same emulator database.
database_name, storage, partner = shared.database_name, shared.storage, shared.partner


def entry(storage, partner_id: str, trade_record_id: str = "T1") -> dict:
    return storage._trade_records.index.entries(partner_id, [trade_record_id])[trade_record_id]


def stored_item(storage, partner_id: str, store_id: str, business_date=DAY) -> dict | None:
    pk = keys.day_key(partner_id, store_id, business_date.isoformat())
    return read_or_none(storage._containers.trade_records, keys.record_id("T1"), pk)


def test_the_next_version_settles_the_days_a_move_left_without_burying_them_again(storage, partner):
    save_records(storage, partner, record("T1", 1))
    save_records(storage, partner, record("T1", 2, store_id="S2"))
    assert entry(storage, partner)["dirty"] == [["S1", DAY.isoformat()]]  # listed, and buried
    assert stored_item(storage, partner, "S1")["type"] == "tombstone"
    third = record("T1", 3, store_id="S2")
    save_records(storage, partner, third)
    assert entry(storage, partner)["dirty"] == []
    assert stored_item(storage, partner, "S1")["version"] == 2  # not written again
    assert day_rows(storage, partner, "S2") == {"T1": third} and day_rows(storage, partner) == {}
    assert_exact(storage, partner)
    assert_exact(storage, partner, "S2")


def test_a_resend_of_a_finished_move_writes_no_record_and_no_tombstone(storage, partner, monkeypatch):
    save_records(storage, partner, record("T1", 1))
    moved = record("T1", 2, store_id="S2", business_date=NEXT_DAY)
    save_records(storage, partner, moved)
    container = storage._containers.trade_records
    batches = []
    execute = container.execute_item_batch
    monkeypatch.setattr(container, "execute_item_batch", lambda ops, **kw: batches.append(ops) or execute(ops, **kw))
    save_records(storage, partner, moved, seq=2)  # the same version under a new batch_id
    assert len(batches) == 1  # its batch entry (with the day's sums item) only
    assert day_rows(storage, partner, "S2", NEXT_DAY) == {"T1": moved} and day_rows(storage, partner) == {}


def test_an_entry_of_the_earlier_code_has_the_days_it_lists_buried_again(storage, partner, monkeypatch):
    """The earlier code wrote the record first: an entry it left listing a day may have its record written
    and the day it left not buried (a crash in between)."""
    save_records(storage, partner, record("T1", 1))
    moved = record("T1", 2, store_id="S2")
    crash_once(monkeypatch, storage._trade_records.writes, "_write_with_rule", 0)  # v2's entry, nothing else
    with pytest.raises(Crash):
        save_records(storage, partner, moved)
    monkeypatch.undo()
    earlier = without_system_properties(entry(storage, partner))
    del earlier[BURIED_FIRST]
    storage._containers.trade_records.replace_item(earlier["id"], earlier)
    storage._trade_records.writes.put_record(partner, moved, Version.of(2, moved.last_modified_at), expected=False)
    assert set(day_rows(storage, partner)) == {"T1"}  # v1 still in S1, v2 in S2
    third = record("T1", 3, store_id="S2")
    save_records(storage, partner, third)
    assert day_rows(storage, partner) == {} and day_rows(storage, partner, "S2") == {"T1": third}
    assert_exact(storage, partner)
    assert_exact(storage, partner, "S2")


def test_a_slow_writer_moving_a_record_back_loses_to_a_newer_move(storage, partner, monkeypatch):
    save_records(storage, partner, record("T1", 1))
    save_records(storage, partner, record("T1", 2, store_id="S2"))
    writes = storage._trade_records.writes
    reached, release = threading.Event(), threading.Event()
    write_with_rule = writes._write_with_rule

    def slow_records_of_v3(items, held, point, rider=None):
        if point == "cosmos.record" and any(one.row.version == 3 for one, _, _ in items):
            reached.set()  # v3's entry says S1 and S2 is buried; its record is not in S1 yet
            assert release.wait(30)
        return write_with_rule(items, held, point, rider)

    monkeypatch.setattr(writes, "_write_with_rule", slow_records_of_v3)
    slow = threading.Thread(target=save_records, args=(storage, partner, record("T1", 3)))
    slow.start()
    assert reached.wait(30)
    newest = record("T1", 4, store_id="S2")
    save_records(storage, partner, newest)  # reads v3's entry with no record of v3 in S1: S1 is buried too
    release.set()
    slow.join(30)
    assert day_rows(storage, partner) == {} and day_rows(storage, partner, "S2") == {"T1": newest}
    assert entry(storage, partner)["version"] == 4
    assert_exact(storage, partner)
    assert_exact(storage, partner, "S2")
