"""The SQLite payment-id index (`trade_record_payments`) kept by save_trade_records instead of two triggers
(backends/sqlite/payment_index.py): it must hold exactly what the triggers kept, the payment_ids of each
record's latest version, whatever the batches (repeats, lower versions, moves, shared ids), and a database
made with the triggers loses them on open and keeps its index."""

from __future__ import annotations

import datetime as dt
import random
import sqlite3
import uuid

from backends.sqlite import batch_writes
from backends.sqlite.storage import SqliteStorage
from core.records import BatchMarker, TradeRecordRow

T0 = dt.datetime(2026, 11, 20, 12, tzinfo=dt.UTC)
DAYS = [("S1", dt.date(2026, 11, 20)), ("S2", dt.date(2026, 11, 20)), ("S1", dt.date(2026, 11, 21))]

# The two triggers of the release before (backends/sqlite/schema.py), the reference the index is held to.
PREVIOUS_TRIGGERS = """
CREATE TRIGGER trade_record_payments_on_insert AFTER INSERT ON trade_records BEGIN
    INSERT OR IGNORE INTO trade_record_payments
        SELECT new.partner_id, value, new.trade_record_id FROM json_each(new.payment_ids);
END;
CREATE TRIGGER trade_record_payments_on_update AFTER UPDATE OF payment_ids ON trade_records BEGIN
    DELETE FROM trade_record_payments WHERE partner_id = old.partner_id AND trade_record_id = old.trade_record_id
        AND payment_id IN (SELECT value FROM json_each(old.payment_ids));
    INSERT OR IGNORE INTO trade_record_payments
        SELECT new.partner_id, value, new.trade_record_id FROM json_each(new.payment_ids);
END;
"""


def row(record_id: str, version: int, seconds: int, day: tuple[str, dt.date], payment_ids: tuple) -> TradeRecordRow:
    store_id, business_date = day
    modified = T0 + dt.timedelta(seconds=seconds)
    return TradeRecordRow(
        record_id, version, modified, store_id, business_date, "01", 1, 1, 0, 0, 0, {}, "{}", payment_ids
    )


def save(storage: SqliteStorage, partner_id: str, rows: list[TradeRecordRow], batch_id: str | None = None) -> None:
    store_id, business_date = rows[0].store_id, rows[0].business_date
    marker = BatchMarker(
        partner_id, batch_id or str(uuid.uuid4()), "trade-records", len(rows), "d", T0, store_id, business_date, 1
    )
    storage.save_trade_records(marker, rows)


def table(storage: SqliteStorage, name: str) -> list[tuple]:
    with storage.db.read() as db:
        return [tuple(r) for r in db.execute(f"SELECT * FROM {name} ORDER BY 1, 2, 3")]


def entries_of_latest_versions(storage: SqliteStorage) -> list[tuple]:
    """What the index must hold: each stored record's payment_ids, once each."""
    with storage.db.read() as db:
        found = db.execute(
            "SELECT DISTINCT t.partner_id, p.value, t.trade_record_id FROM trade_records t, json_each(t.payment_ids) p"
        )
        return sorted(tuple(r) for r in found)


def triggers(storage: SqliteStorage) -> list[str]:
    with storage.db.read() as db:
        return [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")]


def test_drawn_batches_index_what_the_triggers_indexed(tmp_path, monkeypatch):
    storage = SqliteStorage(tmp_path / "now")
    reference = SqliteStorage(tmp_path / "triggers")  # the previous release: the triggers, no index writes
    with sqlite3.connect(reference.db.path) as db:
        db.executescript(PREVIOUS_TRIGGERS)
    assert triggers(storage) == [] and len(triggers(reference)) == 2
    draw = random.Random(9)
    ids = [f"T{n}" for n in range(12)] + ["FT A/1", "收据-7", 'T"7\\b']
    payment_pool = ["P1", "P2", "4411", "支付/0007", "💳 #9", 'Q"uote', "P1\\b"]
    for batch_no in range(150):
        rows = [
            row(
                draw.choice(ids),
                draw.randint(1, 3),
                draw.randint(0, 2),
                draw.choice(DAYS),
                tuple(draw.sample(payment_pool, draw.randint(0, 3))),  # distinct: validation refuses a repeat
            )
            for _ in range(draw.randint(1, 6))
        ]
        partner_id = draw.choice(["p1", "p2"])
        save(storage, partner_id, rows, f"B{batch_no}")
        with monkeypatch.context() as previous_release:
            for name in ("unindex_stored", "index_new", "index_stored"):
                previous_release.setattr(batch_writes, name, lambda *args: None)
            save(reference, partner_id, rows, f"B{batch_no}")
        assert table(storage, "trade_records") == table(reference, "trade_records")
        assert table(storage, "trade_record_payments") == entries_of_latest_versions(storage), rows
        assert table(storage, "trade_record_payments") == table(reference, "trade_record_payments"), rows


def test_a_database_made_with_the_triggers_loses_them_and_keeps_its_index(tmp_path):
    storage = SqliteStorage(tmp_path)
    with sqlite3.connect(storage.db.path) as db:  # as the previous release made it
        db.executescript(PREVIOUS_TRIGGERS)
        db.execute(
            "INSERT INTO trade_records (partner_id, trade_record_id, version, last_modified_us, store_id, "
            "business_date, source_type, item_rows, payment_rows, total_minor, tax_minor, tip_minor, payments, "
            "document, payment_ids) VALUES ('p1', 'T1', 1, 0, 'S1', '2026-11-20', '01', 1, 1, 0, 0, 0, '{}', '{}', ?)",
            ('["PAY-1", "PAY-2"]',),
        )
    assert table(storage, "trade_record_payments") == [("p1", "PAY-1", "T1"), ("p1", "PAY-2", "T1")]

    reopened = SqliteStorage(tmp_path)
    assert triggers(reopened) == []
    assert reopened.trade_records_by_payment_id("p1", ["PAY-1", "PAY-2"]) == {"PAY-1": {"T1"}, "PAY-2": {"T1"}}
    save(reopened, "p1", [row("T1", 2, 0, DAYS[1], ("PAY-2", "PAY-3")), row("T2", 1, 0, DAYS[1], ("PAY-1",))])
    assert reopened.trade_records_by_payment_id("p1", ["PAY-1", "PAY-2", "PAY-3"]) == {
        "PAY-1": {"T2"},
        "PAY-2": {"T1"},
        "PAY-3": {"T1"},
    }


def test_a_write_that_fails_leaves_the_index_as_it_was(tmp_path):
    storage = SqliteStorage(tmp_path)
    save(storage, "p1", [row("T1", 1, 0, DAYS[0], ("PAY-1",))])
    before = table(storage, "trade_record_payments")
    bad = row("T2", 1, 0, DAYS[0], ("PAY-2",))
    bad.payments_minor = {"SALE": object()}  # orjson cannot write it: the transaction rolls back
    try:
        save(storage, "p1", [row("T1", 2, 0, DAYS[0], ("PAY-9",)), bad])
    except TypeError:
        pass
    assert table(storage, "trade_record_payments") == before
    with sqlite3.connect(storage.db.path) as db:
        assert db.execute("SELECT count(*) FROM batches").fetchone() == (1,)
