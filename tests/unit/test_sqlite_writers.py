"""Writers of one process queue on a lock of the process before SQLite's (backends/sqlite/writer_lock.py,
decision 0128; between processes, test_sqlite_writers_of_processes.py): a second thread's `BEGIN IMMEDIATE`
is never sent while another thread's write is open, so it never waits in SQLite's sleeping busy handler; a
failed write lets the next one in; a forked child does not inherit a lock a thread of its parent held. Real
SQLite files; statements seen by each connection's trace callback."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from backends.sqlite import database, writer_lock
from backends.sqlite.database import SqliteDatabase
from core.ports import BackendUnavailable

SCHEMA = "CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, who TEXT NOT NULL);"


def traced(db: SqliteDatabase, who: str, statements: list[tuple[str, str]]) -> None:
    """Record every statement but a PRAGMA (the busy timeout given to SQLite after a wait for the turn) this
    thread's connection runs, with who ran it."""
    with db.read() as connection:
        connection.set_trace_callback(
            lambda statement: None if statement.startswith("PRAGMA") else statements.append((who, statement.split()[0]))
        )


def test_a_second_writer_of_the_process_sends_nothing_to_sqlite_until_the_first_commits(tmp_path):
    db = SqliteDatabase(tmp_path / "db.sqlite3", SCHEMA)
    statements: list[tuple[str, str]] = []
    first_open, second_started = threading.Event(), threading.Event()

    def first() -> None:
        traced(db, "first", statements)
        with db.write() as connection:
            connection.execute("INSERT INTO rows VALUES (1, 'first')")
            first_open.set()
            second_started.wait(5)
            # Long enough for the second thread to reach SQLite, had it not queued on the process's lock.
            threading.Event().wait(0.3)

    def second() -> None:
        traced(db, "second", statements)
        first_open.wait(5)
        second_started.set()
        with db.write() as connection:
            connection.execute("INSERT INTO rows VALUES (2, 'second')")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)

    assert statements == [
        ("first", "BEGIN"),
        ("first", "INSERT"),
        ("first", "COMMIT"),
        ("second", "BEGIN"),
        ("second", "INSERT"),
        ("second", "COMMIT"),
    ]
    with db.read() as connection:
        assert [row[0] for row in connection.execute("SELECT who FROM rows ORDER BY id")] == ["first", "second"]


def test_a_write_that_fails_lets_the_next_one_in(tmp_path, monkeypatch):
    monkeypatch.setattr(database, "BUSY_TIMEOUT_MS", 1_000)  # a lock left held would refuse the next write in 1 s
    db = SqliteDatabase(tmp_path / "db.sqlite3", SCHEMA)
    with pytest.raises(ValueError), db.write() as connection:
        connection.execute("INSERT INTO rows VALUES (1, 'rolled back')")
        raise ValueError("the use case refused")

    def other_thread() -> None:
        with db.write() as connection:
            connection.execute("INSERT INTO rows VALUES (2, 'kept')")

    thread = threading.Thread(target=other_thread)
    thread.start()
    thread.join(10)
    with db.read() as connection:
        assert [row[0] for row in connection.execute("SELECT who FROM rows")] == ["kept"]


def test_a_write_held_past_the_busy_timeout_is_refused_as_sqlite_would(tmp_path, monkeypatch):
    monkeypatch.setattr(database, "BUSY_TIMEOUT_MS", 200)
    db = SqliteDatabase(tmp_path / "db.sqlite3", SCHEMA)
    refused: list[str] = []

    def other_thread() -> None:
        try:
            with db.write() as connection:
                connection.execute("INSERT INTO rows VALUES (2, 'late')")
        except BackendUnavailable as error:
            refused.append(str(error))

    with db.write() as connection:
        connection.execute("INSERT INTO rows VALUES (1, 'holder')")
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join(10)
    assert refused == ["database is busy: another write of this process held it too long"]


def test_the_wait_for_the_process_lock_counts_against_the_busy_timeout(tmp_path, monkeypatch):
    """One deadline for a writer: what it waited for the process's lock is not given again to SQLite's busy
    handler, here waiting on a writer of another program (a plain connection, which takes no turn)."""
    monkeypatch.setattr(database, "BUSY_TIMEOUT_MS", 1_000)
    path = tmp_path / "db.sqlite3"
    db = SqliteDatabase(path, SCHEMA)
    pragmas: list[str] = []
    with db.read() as connection:
        connection.set_trace_callback(lambda statement: statement.startswith("PRAGMA") and pragmas.append(statement))
    other_program = sqlite3.connect(path, isolation_level=None)
    other_program.execute("BEGIN IMMEDIATE")
    held = writer_lock.thread_lock(path.resolve())
    held.acquire()
    released: list[float] = []

    def release() -> None:
        released.append(time.monotonic())
        held.release()

    threading.Timer(0.6, release).start()
    try:
        asked = time.monotonic()
        with pytest.raises(BackendUnavailable, match="database is locked"), db.write():
            pass
    finally:
        other_program.execute("ROLLBACK")
    given, restored = pragmas
    assert given.startswith("PRAGMA busy_timeout=")
    waited_ms = (released[0] - asked) * 1000  # about 600: the write waited from `asked` until the release
    assert 0 <= int(given.split("=")[1]) <= 1_000 - waited_ms + 100  # 100 ms for the write's first try, under load
    assert restored == "PRAGMA busy_timeout=1000"
    # A turn that comes at once leaves SQLite the whole timeout, with no PRAGMA.
    with writer_lock.writers_turn(path.resolve(), 1_000) as left_ms:
        assert left_ms is None


def fork_beside_threads() -> int:
    """os.fork while other threads run (Python warns): the child only writes SQLite, then leaves by os._exit."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return os.fork()


def in_a_fresh_process(scenario: Callable[[Path], None], path: Path, timeout: float = 60) -> None:
    """Run `scenario(path)`, which forks, in a new interpreter (multiprocessing's spawn) whose only threads are
    its own. Forked from this pytest process instead, the child could catch a thread of an earlier test inside
    SQLite (the checkpoint thread: its allocator's mutex held) and wait on it forever."""
    process = multiprocessing.get_context("spawn").Process(target=scenario, args=(path,))
    process.start()
    process.join(timeout)
    if process.is_alive():
        process.kill()
        pytest.fail(f"{scenario.__name__} did not end within {timeout} s")
    assert process.exitcode == 0, f"{scenario.__name__} failed: its traceback is in the captured stderr"


def forked_child_writes_although_a_thread_held_the_lock(path: Path) -> None:
    database.BUSY_TIMEOUT_MS = 2_000  # an inherited held lock would refuse in 2 s
    holding, release = threading.Event(), threading.Event()

    def holder() -> None:
        # The process's lock alone: SQLite itself must not be open across a fork (the host forks before).
        with writer_lock.thread_lock(path.resolve()):
            holding.set()
            release.wait(10)

    thread = threading.Thread(target=holder)
    thread.start()
    holding.wait(5)
    pid = fork_beside_threads()
    if pid == 0:
        code = 1
        try:
            with SqliteDatabase(path, SCHEMA).write() as connection:
                connection.execute("INSERT INTO rows VALUES (1, 'child')")
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    release.set()
    thread.join(10)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX")
def test_a_forked_child_writes_although_a_thread_of_its_parent_held_the_lock(tmp_path):
    path = tmp_path / "db.sqlite3"
    in_a_fresh_process(forked_child_writes_although_a_thread_held_the_lock, path)
    with SqliteDatabase(path, SCHEMA).read() as connection:
        assert [row[0] for row in connection.execute("SELECT who FROM rows")] == ["child"]


OPEN_AT = """
import sys, time
from pathlib import Path
from backends.sqlite.database import SqliteDatabase
while time.time() < float(sys.argv[2]):
    pass
SqliteDatabase(Path(sys.argv[1]), "CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, who TEXT NOT NULL);")
"""


def test_processes_opening_a_new_file_at_once_all_open_it(tmp_path):
    """Instances starting together on an empty data folder: SQLite answers "database is locked" at once,
    without its busy handler, to a connection putting the file in WAL mode while another does (about one
    open in six failed, four processes at once); the switch is tried again until the busy timeout."""
    root = Path(__file__).resolve().parents[2]
    for round_number in range(6):
        path = tmp_path / f"round-{round_number}.sqlite3"
        at = str(time.time() + 0.5)
        openers = [
            subprocess.Popen([sys.executable, "-c", OPEN_AT, str(path), at], cwd=root, stderr=subprocess.PIPE)
            for _ in range(6)
        ]
        failures = [opener.stderr.read().decode()[-300:] for opener in openers if opener.wait(60) != 0]
        assert failures == [], failures
