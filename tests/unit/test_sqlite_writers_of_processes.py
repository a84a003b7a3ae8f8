"""Writers of several processes take turns on a flock beside the database (backends/sqlite/writer_lock.py,
decision 0129): a process's `BEGIN IMMEDIATE` is never sent while another process's write is open, so it never
waits in SQLite's sleeping busy handler; a holder killed by SIGKILL lets the next writer in, even when a child
it forked lives on; a hold past the busy timeout is refused; a forked child does not share its parent's hold.
Real processes and files; statements seen by each connection's trace callback."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from backends.sqlite import database, writer_lock
from backends.sqlite.database import SqliteDatabase
from core.ports import BackendUnavailable
from tests.unit.test_sqlite_writers import fork_beside_threads, in_a_fresh_process

pytestmark = pytest.mark.skipif(writer_lock.fcntl is None, reason="flock is POSIX")

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = "CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, who TEXT NOT NULL);"
WRITES_EACH = 8

WRITER = f"""
import os, sys, time
from pathlib import Path
from backends.sqlite.database import SqliteDatabase
db = SqliteDatabase(Path(sys.argv[1]), {SCHEMA!r})
log = os.open(sys.argv[2], os.O_WRONLY | os.O_APPEND)
me = str(os.getpid())
def trace(statement):  # every statement but a PRAGMA (the busy timeout given after a wait for the turn)
    if not statement.startswith("PRAGMA"):
        os.write(log, f"{{me}} {{statement.split()[0]}}\\n".encode())
with db.read() as connection:
    connection.set_trace_callback(trace)
while time.time() < float(sys.argv[3]):
    pass
for _ in range({WRITES_EACH}):
    with db.write() as connection:
        connection.execute("INSERT INTO rows (who) VALUES (?)", (me,))
        time.sleep(0.02)  # an open write, long enough for the other process to arrive at its BEGIN
"""

HOLDER = f"""
import os, sys, time
from pathlib import Path
from backends.sqlite.database import SqliteDatabase
with SqliteDatabase(Path(sys.argv[1]), {SCHEMA!r}).write() as connection:
    connection.execute("INSERT INTO rows (who) VALUES ('holder')")
    if sys.argv[2] == "fork":
        child = os.fork()
        if child == 0:
            time.sleep(120)
            os._exit(0)
        print(child, flush=True)
    print("holding", flush=True)
    sys.stdin.read()  # until the test closes it, or kills this process
"""


def holder(path: Path, fork: bool = False) -> tuple[subprocess.Popen[str], int | None]:
    """A process holding an open write on `path` (and the pid of a child it forked inside it)."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path), "fork" if fork else "no"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    child = int(process.stdout.readline()) if fork else None
    assert process.stdout.readline() == "holding\n"
    return process, child


def whos(path: Path) -> list[str]:
    with SqliteDatabase(path, SCHEMA).read() as connection:
        return [row[0] for row in connection.execute("SELECT who FROM rows ORDER BY id")]


def test_two_processes_writes_never_overlap_and_none_reaches_sqlite_while_the_other_writes(tmp_path):
    path = tmp_path / "db.sqlite3"
    SqliteDatabase(path, SCHEMA)
    log = tmp_path / "statements.log"
    log.touch()
    start_at = str(time.time() + 1.0)
    command = [sys.executable, "-c", WRITER, str(path), str(log), start_at]
    writers = [subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    failures = [writer.communicate(timeout=60)[1][-300:] for writer in writers if writer.wait(60) != 0]
    assert failures == [], failures

    statements = [tuple(line.split()) for line in log.read_text().splitlines()]
    turns = [statements[at : at + 3] for at in range(0, len(statements), 3)]
    assert len(turns) == 2 * WRITES_EACH
    for turn in turns:
        who = turn[0][0]
        assert turn == [(who, "BEGIN"), (who, "INSERT"), (who, "COMMIT")], statements
    assert {turn[0][0] for turn in turns} == {str(writer.pid) for writer in writers}
    assert len(whos(path)) == 2 * WRITES_EACH


def test_a_write_of_another_process_held_past_the_busy_timeout_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "db.sqlite3"
    process, _ = holder(path)
    try:
        monkeypatch.setattr(database, "BUSY_TIMEOUT_MS", 200)
        with pytest.raises(BackendUnavailable, match="a write of another process held it too long"):
            with SqliteDatabase(path, SCHEMA).write() as connection:
                connection.execute("INSERT INTO rows (who) VALUES ('late')")
    finally:
        process.communicate("", timeout=30)  # its stdin closed: it commits and ends
    assert process.returncode == 0
    assert whos(path) == ["holder"]


def test_the_wait_for_the_process_lock_counts_against_the_wait_for_the_flock(tmp_path, monkeypatch):
    """One deadline for a writer: a thread of this process holds the process's lock for 1 s, another process the
    flock for longer; with a busy timeout of 1.5 s the write is refused after about 1.5 s, not 2.5 s."""
    path = tmp_path / "db.sqlite3"
    process, _ = holder(path)
    held = writer_lock.thread_lock(path.resolve())
    held.acquire()
    threading.Timer(1.0, held.release).start()
    try:
        monkeypatch.setattr(database, "BUSY_TIMEOUT_MS", 1_500)
        started = time.monotonic()
        with pytest.raises(BackendUnavailable, match="a write of another process held it too long"):
            with SqliteDatabase(path, SCHEMA).write():
                pass
        waited = time.monotonic() - started
    finally:
        process.communicate("", timeout=30)
    assert 1.5 <= waited < 2.2  # 2.5 s and more when each lock had a busy timeout of its own


@pytest.mark.parametrize("forked_a_child", [False, True], ids=["alone", "with-a-forked-child-alive"])
def test_a_holder_killed_by_sigkill_lets_the_next_process_write(tmp_path, monkeypatch, forked_a_child):
    """The kernel lets a dead holder's flock go; a child it forked inside the write closed the descriptor it
    inherited, so the lock does not outlive its holder in the child."""
    path = tmp_path / "db.sqlite3"
    process, child = holder(path, fork=forked_a_child)
    try:
        monkeypatch.setattr(database, "BUSY_TIMEOUT_MS", 200)
        with pytest.raises(BackendUnavailable, match="another process"):  # it holds the lock until killed
            with SqliteDatabase(path, SCHEMA).write():
                pass
        process.send_signal(signal.SIGKILL)
        process.wait(30)
        monkeypatch.setattr(database, "BUSY_TIMEOUT_MS", 10_000)
        with SqliteDatabase(path, SCHEMA).write() as connection:
            connection.execute("INSERT INTO rows (who) VALUES ('next')")
    finally:
        process.kill()
        if child is not None:
            os.kill(child, signal.SIGKILL)
    assert whos(path) == ["next"]  # the killed holder's write rolled back


def forked_child_waits_for_its_parents_hold(path: Path) -> None:
    reader, writer = os.pipe()
    with writer_lock.writers_turn(path.resolve(), 10_000):  # the locks alone: no SQLite open across the fork
        pid = fork_beside_threads()
        if pid == 0:
            code = 1
            try:
                os.close(reader)
                db = SqliteDatabase(path, SCHEMA)
                database.BUSY_TIMEOUT_MS = 200
                try:
                    with db.write():
                        pass
                except BackendUnavailable as error:
                    if "another process" in str(error):
                        os.write(writer, b"refused")
                database.BUSY_TIMEOUT_MS = 10_000
                with db.write() as connection:  # once the parent lets go
                    connection.execute("INSERT INTO rows (who) VALUES ('child')")
                code = 0
            finally:
                os._exit(code)
        os.close(writer)
        told = os.read(reader, 16)
    os.close(reader)
    _, status = os.waitpid(pid, 0)
    assert told == b"refused"
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX")
def test_a_forked_child_does_not_share_its_parents_hold(tmp_path):
    """An inherited descriptor would share the parent's flock, and the child's would succeed at once: the
    child waits for its parent's write like any other process, then writes."""
    path = tmp_path / "db.sqlite3"
    in_a_fresh_process(forked_child_waits_for_its_parents_hold, path)
    assert whos(path) == ["child"]


def test_the_lock_file_beside_the_database_is_the_owners_alone(tmp_path):
    path = tmp_path / "db.sqlite3"
    with SqliteDatabase(path, SCHEMA).write() as connection:
        connection.execute("INSERT INTO rows (who) VALUES ('one')")
    assert (tmp_path / "db.sqlite3-writer").stat().st_mode & 0o777 == 0o600


class FileSystemWithoutFlock:
    """A fake of a network file system that does not lock (none can be mounted here): flock answers ENOLCK."""

    LOCK_EX, LOCK_NB, LOCK_UN = writer_lock.fcntl.LOCK_EX, writer_lock.fcntl.LOCK_NB, writer_lock.fcntl.LOCK_UN

    def flock(self, descriptor: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))


def test_where_flock_is_refused_writes_go_on_in_sqlites_busy_handler_said_once(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(writer_lock, "fcntl", FileSystemWithoutFlock())
    monkeypatch.setattr(writer_lock, "_locks", writer_lock._Locks())
    for name in ("one.sqlite3", "two.sqlite3"):
        db = SqliteDatabase(tmp_path / name, SCHEMA)
        for who in ("first", "second"):
            with db.write() as connection:
                connection.execute("INSERT INTO rows (who) VALUES (?)", (who,))
        assert whos(tmp_path / name) == ["first", "second"]
    said = [record.getMessage() for record in caplog.records if record.name == "pos.sqlite"]
    assert len(said) == 1 and "busy handler" in said[0] and "No locks available" in said[0], said
