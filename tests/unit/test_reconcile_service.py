"""The reconciliation run against the real SQLite storage: idempotent, and never overwriting a
newer close with a stale result."""

from __future__ import annotations

import datetime as dt

import pytest

from backends.sqlite.delayed_queue import SqliteQueue
from backends.sqlite.storage import SqliteStorage
from core import reconcile_messages
from core.clock import utc_now
from core.reconcile_reruns import request_for
from core.records import BatchMarker, ClosedDay, ReconcileRequest, TradeRecordRow
from reconcile.service import CloseNotCommitted, reconcile, sweep

DAY = dt.date(2026, 11, 20)
EXPECTED = {
    "batch_count": 1,
    "trade_record_count": 1,
    "item_row_count": 1,
    "payment_row_count": 1,
    "net_sales_amount": "9.20",
    "tax_amount": "0.80",
    "tip_amount": "0.00",
    "payment_total_amount": "10.00",
}


@pytest.fixture
def storage(tmp_path):
    store = SqliteStorage(tmp_path)
    store.add_partner("p1", "P1", utc_now())
    marker = BatchMarker("p1", "b-records", "trade-records", 1, "d", utc_now(), "S1", DAY, 1)
    row = TradeRecordRow("T1", 1, utc_now(), "S1", DAY, "01", 1, 1, 1000, 80, 0, {"SALE": 1000}, "{}")
    assert store.save_trade_records(marker, [row]).existing is None
    store.replace_mapping(
        BatchMarker("p1", "b-map", "mappings", 1, "d", utc_now()), [{"source_code": "01", "standard_code": "SALE"}]
    )
    return store


def close(storage, batch_id: str, expected=EXPECTED, due_in=0) -> ClosedDay:
    now = utc_now()
    day = ClosedDay("S1", DAY, batch_id, "USD", expected, now, now + dt.timedelta(seconds=due_in), "RECEIVED")
    assert storage.save_daily_close(BatchMarker("p1", batch_id, "daily-close", 1, "d", now, "S1", DAY), day) is None
    return day


def test_running_the_same_request_twice_gives_the_same_result(storage):
    day = close(storage, "c1")
    first = reconcile(storage, request_for("p1", day))
    second = reconcile(storage, request_for("p1", day))
    assert first.status == second.status == "MATCHED"
    assert (first.actual, first.differences) == (second.actual, second.differences)


def test_the_worker_leaves_a_close_with_its_current_result_and_runs_a_stale_one_again(storage):
    """A message delivered again, or one of the messages concurrent duplicates of a close sent: the queue
    worker (keep_current_result) writes the result once; after a mapping change it runs again, and HQ's
    `reconcile run` always does."""
    day = close(storage, "c1")
    first = reconcile(storage, request_for("p1", day), keep_current_result=True)
    assert first is not None and first.status == "MATCHED"
    assert reconcile(storage, request_for("p1", day), keep_current_result=True) is None
    assert storage.get_closed_day("p1", "S1", DAY) == first  # written once

    storage.replace_mapping(
        BatchMarker("p1", "b-map2", "mappings", 1, "d", utc_now()), [{"source_code": "01", "standard_code": "REFUND"}]
    )
    rerun = reconcile(storage, request_for("p1", day), keep_current_result=True)
    assert rerun is not None and rerun.checked_at > first.checked_at
    assert rerun.details["mapped_source_codes"] == {"01": "REFUND"}
    forced = reconcile(storage, request_for("p1", day))
    assert forced is not None and forced.checked_at > rerun.checked_at


def test_a_run_that_loses_the_save_to_another_run_of_its_close_leaves_that_result(storage, monkeypatch):
    """Two instances' workers run one close at once: the one whose save comes second finds the other's
    result, current, and stops (it neither overwrites it nor fails the message)."""
    day = close(storage, "c1")
    other: list = []
    save = storage.save_result

    def another_run_saves_first(partner_id, result, replacing=None):
        if not other:
            other.append(None)  # the other run's own save goes straight through
            other[0] = reconcile(storage, request_for("p1", day), keep_current_result=True)
        return save(partner_id, result, replacing)

    monkeypatch.setattr(storage, "save_result", another_run_saves_first)
    assert reconcile(storage, request_for("p1", day), keep_current_result=True) is None
    assert other[0] is not None and storage.get_closed_day("p1", "S1", DAY) == other[0]


def test_a_request_for_a_replaced_close_changes_nothing(storage):
    old = close(storage, "c1")
    close(storage, "c2", {**EXPECTED, "trade_record_count": 2})
    assert reconcile(storage, request_for("p1", old)) is None
    assert storage.get_closed_day("p1", "S1", DAY).status == "RECEIVED"


def test_a_message_ahead_of_its_close_commit_is_retried_not_dropped(storage):
    """The close sends its message before it commits: a message that finds no marker for its close
    must fail (the queue delivers it again) rather than be taken for one of a replaced close."""
    early = ReconcileRequest("p1", "S1", DAY, "c1")
    with pytest.raises(CloseNotCommitted):
        reconcile(storage, early)
    close(storage, "c0")  # an earlier close of the day is stored; c1 still is not
    with pytest.raises(CloseNotCommitted):
        reconcile(storage, early)
    assert storage.get_closed_day("p1", "S1", DAY).status == "RECEIVED"
    close(storage, "c1")  # the commit lands: the redelivered message reconciles it
    assert reconcile(storage, early).status == "MATCHED"


def test_a_close_arriving_during_a_run_is_not_overwritten_by_the_stale_result(storage, monkeypatch):
    old = close(storage, "c1")
    read_totals = storage.store_day_totals

    def totals_then_new_close(*args):
        totals = read_totals(*args)
        close(storage, "c2", {**EXPECTED, "trade_record_count": 2})
        return totals

    monkeypatch.setattr(storage, "store_day_totals", totals_then_new_close)
    assert reconcile(storage, request_for("p1", old)) is None
    stored = storage.get_closed_day("p1", "S1", DAY)
    assert (stored.close_batch_id, stored.status, stored.actual) == ("c2", "RECEIVED", None)


def test_the_sweep_sends_only_closes_overdue_past_the_grace(storage, tmp_path):
    queue = SqliteQueue(tmp_path, "reconcile-requests")
    close(storage, "c1", due_in=-120)
    assert sweep(storage, queue, grace_seconds=300) == 0
    assert sweep(storage, queue, grace_seconds=60) == 1
    message = queue.receive(30)
    assert reconcile_messages.decode(message.body).close_batch_id == "c1"
    assert sweep(storage, queue, grace_seconds=60) == 0  # postponed: not sent again at once


def test_every_sweep_notes_its_time_even_with_nothing_due(storage, tmp_path):
    queue = SqliteQueue(tmp_path, "reconcile-requests")
    assert storage.last_sweep() is None
    first = dt.datetime(2026, 11, 21, 3, 0, tzinfo=dt.UTC)
    assert sweep(storage, queue, grace_seconds=60, now=first) == 0
    assert storage.last_sweep() == first
    close(storage, "c1", due_in=-120)
    later = utc_now()
    assert sweep(storage, queue, grace_seconds=60, now=later) == 1
    assert storage.last_sweep() == later


def test_a_huge_batch_count_lists_only_the_first_missing_seqs(storage):
    from reconcile.service import MISSING_SEQS_SHOWN

    day = close(storage, "c-huge", {**EXPECTED, "batch_count": 2**53 - 1})
    result = reconcile(storage, request_for("p1", day))
    missing = result.details["missing_batch_seqs"]
    assert len(missing) == MISSING_SEQS_SHOWN
    assert missing[0] == 2 and 1 not in missing  # batch_seq 1 was received


PREVIOUS_DAY_INDEXES = [
    "CREATE INDEX trade_records_by_day ON trade_records(partner_id, store_id, business_date)",
    "CREATE INDEX trade_records_day_totals ON trade_records(partner_id, store_id, business_date, "
    "source_type, item_rows, payment_rows, total_minor, tax_minor, tip_minor, payments)",
]


@pytest.mark.parametrize("previous_index", PREVIOUS_DAY_INDEXES)
def test_a_database_of_a_previous_version_gets_the_totals_index_and_reconciles_from_it(tmp_path, previous_index):
    from backends.sqlite import reads

    storage = SqliteStorage(tmp_path)
    storage.add_partner("p1", "P1", utc_now())
    with storage.db.write() as db:  # the trade_records indexes as a previous version made them
        db.execute("DROP INDEX trade_records_day_by_type")
        db.execute(previous_index)
    marker = BatchMarker("p1", "b-records", "trade-records", 1, "d", utc_now(), "S1", DAY, 1)
    row = TradeRecordRow("T1", 1, utc_now(), "S1", DAY, "01", 1, 1, 1000, 80, 0, {"SALE": 1000}, "{}")
    assert storage.save_trade_records(marker, [row]).existing is None

    reopened = SqliteStorage(tmp_path)
    with reopened.db.read() as db:
        indexes = {
            name
            for (name,) in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'trade_records' AND sql IS NOT NULL"
            )
        }
        plans = [
            " ".join(step[3] for step in db.execute("EXPLAIN QUERY PLAN " + sql, ("p1", "S1", DAY.isoformat())))
            for sql in (reads.DAY_BY_SOURCE_TYPE, reads.DAY_BY_PAYMENT_TYPE)
        ]
    assert indexes == {"trade_records_day_by_type"}
    assert all("USING COVERING INDEX trade_records_day_by_type" in plan for plan in plans), plans
    assert all("TEMP B-TREE" not in plan for plan in plans[:1]), plans  # the GROUP BY follows the index
    assert reopened.store_day_totals("p1", "S1", DAY).payments_minor == {"SALE": 1000}


@pytest.mark.parametrize("attempt, override", [(1, None), (4, None), (5, None), (1, "2"), (2, "2")])
def test_the_worker_retries_a_message_ahead_of_its_close_until_the_last_attempt(
    storage, monkeypatch, attempt, override, caplog
):
    """Failing the message makes the host deliver it again; on the host's last attempt (maxDequeueCount)
    it is dropped with a warning instead of going to the poison queue: the close's request never
    committed, so there is nothing to reconcile (and the sweep covers a close that commits later)."""
    import types

    from azure.functions.queue import QueueMessage

    from core.settings import host_settings, max_dequeue_count
    from triggers.reconciliation import reconcile_store_day

    if override:  # an app setting over host.json, read per message as the host reads it
        monkeypatch.setenv("AzureFunctionsJobHost__extensions__queues__maxDequeueCount", override)
    max_attempts = max_dequeue_count(host_settings())
    assert max_attempts == int(override or 5)  # else host.json's maxDequeueCount
    caplog.set_level("INFO", logger="pos.reconcile")
    monkeypatch.setattr("triggers.reconciliation.current_backend", lambda: types.SimpleNamespace(storage=storage))
    worker = reconcile_store_day._function.get_user_function()
    body = reconcile_messages.encode(ReconcileRequest("p1", "S1", DAY, "c-never")).encode()
    message = QueueMessage(id="m1", body=body, dequeue_count=attempt)
    context = types.SimpleNamespace(invocation_id="i1")
    if attempt < max_attempts:
        with pytest.raises(CloseNotCommitted):
            worker(message, context)
        assert "reconciliation postponed: close c-never of S1/2026-11-20 is not committed yet" in caplog.text
    else:
        worker(message, context)
        assert f"reconciliation dropped after {max_attempts} attempts: close c-never" in caplog.text
    assert storage.get_closed_day("p1", "S1", DAY) is None
