"""Checkpoints off the request path (backends/sqlite/database.py `_Checkpointer`): after a write, a thread of
its own copies the write-ahead log into the database file, with no other connection asking for it; the
commit itself no longer does it below AUTOCHECKPOINT_PAGES; the thread ends when writes stop, and a
later write starts it again. And the page size: a new file's is PAGE_BYTES, an older file keeps its own."""

from __future__ import annotations

import sqlite3
import threading
import time

from backends.sqlite import database
from backends.sqlite.database import SqliteDatabase

SCHEMA = "CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, text TEXT NOT NULL);"


def write_rows(db: SqliteDatabase, count: int, start: int = 0) -> None:
    with db.write() as connection:
        connection.executemany("INSERT INTO rows VALUES (?, ?)", [(start + n, "x" * 500) for n in range(count)])


def checkpointer_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "sqlite-checkpoint"]


def wait_for(condition, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def test_a_write_is_copied_into_the_database_file_by_the_checkpoint_thread(tmp_path):
    db = SqliteDatabase(tmp_path / "db.sqlite3", SCHEMA)
    before = (tmp_path / "db.sqlite3").stat().st_size
    write_rows(db, 2_000)  # ~1 MB: ~250 pages, under the commit's own limit
    # Only the thread copies the log: the file grows without any connection asking for a checkpoint.
    assert wait_for(lambda: (tmp_path / "db.sqlite3").stat().st_size > before + 500_000)
    with db.read() as connection:
        assert connection.execute("SELECT COUNT(*) FROM rows").fetchone()[0] == 2_000


def test_the_commit_itself_does_not_checkpoint_below_its_limit(tmp_path, monkeypatch):
    # With the thread kept from running, a commit of more than SQLite's default 1,000 pages leaves the
    # log as it is: the request does not pay for the copy.
    monkeypatch.setattr(database._Checkpointer, "written", lambda self: None)
    db = SqliteDatabase(tmp_path / "db.sqlite3", SCHEMA)
    before = (tmp_path / "db.sqlite3").stat().st_size
    write_rows(db, 40_000)  # ~20 MB: over 1,000 pages of PAGE_BYTES, under AUTOCHECKPOINT_PAGES
    assert (tmp_path / "db.sqlite3").stat().st_size == before
    probe = sqlite3.connect(tmp_path / "db.sqlite3")
    busy, log_pages, copied = probe.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    assert busy == 0 and log_pages > 1_000 and copied == log_pages
    probe.close()


def test_the_thread_ends_when_writes_stop_and_a_write_starts_it_again(tmp_path, monkeypatch):
    monkeypatch.setattr(database._Checkpointer, "IDLE_SECONDS", 0.1)
    db = SqliteDatabase(tmp_path / "db.sqlite3", SCHEMA)
    alive = lambda: any(t.name == "sqlite-checkpoint" and db._checkpointer._thread is t for t in checkpointer_threads())  # noqa: E731
    write_rows(db, 10)
    assert db._checkpointer._thread is not None
    assert wait_for(lambda: db._checkpointer._thread is None and not alive())
    write_rows(db, 10, start=10)
    assert db._checkpointer._thread is not None
    assert wait_for(lambda: db._checkpointer._thread is None)
    with db.read() as connection:
        assert connection.execute("SELECT COUNT(*) FROM rows").fetchone()[0] == 20


def test_a_new_database_takes_the_page_size_and_an_older_one_keeps_its_own(tmp_path):
    older = sqlite3.connect(tmp_path / "older.sqlite3")  # made as SQLite makes it, in WAL mode
    older.execute("PRAGMA journal_mode=WAL")
    older.executescript(SCHEMA + "INSERT INTO rows VALUES (-1, 'before');")
    default_size = older.execute("PRAGMA page_size").fetchone()[0]
    older.close()
    assert default_size != database.PAGE_BYTES
    new, reopened = SqliteDatabase(tmp_path / "new.sqlite3", SCHEMA), SqliteDatabase(tmp_path / "older.sqlite3", SCHEMA)
    for db in (new, reopened):
        write_rows(db, 100)
    with new.read() as connection:
        assert connection.execute("PRAGMA page_size").fetchone()[0] == database.PAGE_BYTES
    with reopened.read() as connection:
        assert connection.execute("PRAGMA page_size").fetchone()[0] == default_size
        assert connection.execute("SELECT COUNT(*) FROM rows").fetchone()[0] == 101
