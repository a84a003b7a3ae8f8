"""One SQLite database file in WAL mode, shared by threads and processes.

Each thread gets its own connection. Writes run in `BEGIN IMMEDIATE` transactions so that
concurrent writers (threads of the local host, the hq command line, queue workers) queue up on the
database lock instead of failing half-way; readers never block in WAL mode.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from core.ports import BackendUnavailable

BUSY_TIMEOUT_MS = 30_000


class SqliteDatabase:
    def __init__(self, path: Path, schema: str) -> None:
        self.path = path
        self._local = threading.local()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # executescript manages its own transaction; every statement is IF NOT EXISTS.
            self._connection().executescript(schema)
        except (OSError, sqlite3.Error) as error:
            raise BackendUnavailable(f"cannot open the database {path}: {error}") from error

    def _connection(self) -> sqlite3.Connection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
            )
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            connection.row_factory = sqlite3.Row
            self._local.connection = connection
        return connection

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        try:
            yield self._connection()
        except sqlite3.OperationalError as error:
            raise BackendUnavailable(f"database error: {error}") from error

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """Several reads that see one state of the database: a read transaction (WAL keeps its snapshot
        until it ends, while writers go on)."""
        connection = self._connection()
        try:
            connection.execute("BEGIN")
            try:
                yield connection
            finally:
                connection.execute("COMMIT")
        except sqlite3.OperationalError as error:
            raise BackendUnavailable(f"database error: {error}") from error

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One atomic transaction: everything inside commits together or not at all."""
        connection = self._connection()
        try:
            connection.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            raise BackendUnavailable(f"database is busy or unavailable: {error}") from error
        try:
            yield connection
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        else:
            connection.execute("COMMIT")
