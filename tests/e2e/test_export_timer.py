"""The export timer (triggers/exports.py) on SQLite: it exports the store-days reconciled since its last run,
in bounded steps, then retires those past TRADE_RECORD_RETENTION_DAYS that the export has (decision 0086).
The timer function itself runs, on a backend opened from its settings; only its clock is moved a day on."""

from __future__ import annotations

import datetime as dt
import logging

import pyarrow.parquet as pq
import pytest

from backends.factory import open_backend
from core.clock import utc_now
from core.settings import Settings
from export.layout import file_path
from ingest.daily_close_status import daily_close_status
from reconcile.retention import retire_after_export
from tests.unit.test_retention import STORE, RecordingQueue, days_ago, open_partner, push, reconciled_day, record
from triggers import exports

RETENTION = 30


@pytest.fixture
def backend(tmp_path, monkeypatch):
    monkeypatch.setenv("POS_BACKEND", "sqlite")
    monkeypatch.setenv("POS_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("TRADE_RECORD_RETENTION_DAYS", str(RETENTION))
    backend = open_backend(Settings.from_env())
    monkeypatch.setattr(exports, "current_backend", lambda: backend)
    return backend


def test_the_export_timer_exports_then_retires_what_the_export_has(backend, monkeypatch):
    storage, queue = backend.storage, RecordingQueue()
    assert backend.retirement is storage  # SQLite deletes retired days itself
    partner = open_partner(storage, queue)
    old, young = days_ago(RETENTION + 10), days_ago(2)
    storage.retention_days = RETENTION + 20  # as the days were sent, when the old one was still kept
    reconciled_day(storage, queue, partner, old)
    assert push(storage, queue, partner, young, [record(young)]).http_status == 202
    storage.retention_days = RETENTION
    old_day = dt.date.fromisoformat(old)
    exported_file = backend.settings.data_dir / "exports" / file_path("trade_records", "p1", STORE, old_day)

    exports.export_reconciled_days(None)  # now: the day was reconciled minutes ago, not yet settled
    assert not exported_file.exists()
    assert len(storage.store_day_rows("p1", STORE, old_day)) == 2  # not exported, so not retired

    later = utc_now() + dt.timedelta(days=1)
    monkeypatch.setattr(exports, "utc_now", lambda: later)  # a day later
    exports.export_reconciled_days(None)
    assert pq.read_table(exported_file).num_rows == 2
    assert storage.store_day_rows("p1", STORE, old_day) == []  # exported, then retired
    assert daily_close_status(storage, partner, STORE, old)["status"] == "MATCHED"  # its result stays
    assert len(storage.store_day_rows("p1", STORE, dt.date.fromisoformat(young))) == 1


def test_on_cosmos_db_the_timers_step_deletes_nothing_and_warns_of_a_late_export(caplog):
    now = utc_now()
    with caplog.at_level(logging.WARNING, logger="pos.retention"):
        retired = retire_after_export(None, RETENTION, now - dt.timedelta(days=3), now)
    assert (retired.days, retired.rows) == (0, 0)
    assert "checkpoint" in caplog.text
    caplog.clear()
    retire_after_export(None, 0, now - dt.timedelta(days=3), now)  # retention off: nothing to say
    assert caplog.text == ""


def test_a_run_takes_its_span_in_bounded_steps_and_the_next_run_goes_on(backend, monkeypatch):
    """A backlog (a first run over existing results, a chain's evening) is taken in steps of at most
    max_days store-days, the checkpoint moved after each; a run past its budget stops there and the next
    one goes on from its checkpoint, so no run is cut short by the host's timeout with nothing to show."""
    from backends.export_destinations import LocalFolder
    from export.checkpoint import SETTLE, caught_up, export_newly_checked, exported_through

    storage, queue = backend.storage, RecordingQueue()
    partner = open_partner(storage, queue)
    dates = [days_ago(day) for day in range(2, 7)]
    for date in dates:
        reconciled_day(storage, queue, partner, date)
    destination = LocalFolder(backend.settings.data_dir / "backlog")
    now = utc_now() + SETTLE + dt.timedelta(seconds=1)

    checkpoint, runs, total = None, 0, 0
    while not caught_up(checkpoint, now):  # each run: one step, then out of time
        before = checkpoint
        more, checkpoint = export_newly_checked(storage, destination, now, max_days=2, budget=dt.timedelta(0))
        runs, total = runs + 1, total + more.days
        assert more.days <= 2 and exported_through(destination) == checkpoint
        assert checkpoint is not None and (before is None or checkpoint > before) and runs <= 60
    assert total == len(dates) and runs >= 3  # five days, at most two a step
    exported = {path.parent.name for path in (destination.root / "trade_records").rglob("*.parquet")}
    assert exported == {f"business_date={date}" for date in dates}
