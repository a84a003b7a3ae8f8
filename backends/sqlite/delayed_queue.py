"""The embedded delayed queue: a SQLite table with Azure Storage Queue semantics.

A message becomes visible after its delay; a receiver hides it for a visibility timeout and deletes
it when done; a message received more than max_dequeue_count times moves to `<queue>-poison`, as the
Functions queue trigger does. It is both sides of the queue: core.ports.DelayedQueue (send) and
core.ports.QueueConsumer (receive, poison).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backends.sqlite.database import SqliteDatabase

SCHEMA = """
CREATE TABLE IF NOT EXISTS queue_messages (
    message_id TEXT PRIMARY KEY, queue TEXT NOT NULL, body TEXT NOT NULL,
    visible_at_us INTEGER NOT NULL, dequeue_count INTEGER NOT NULL DEFAULT 0,
    pop_receipt TEXT, inserted_at_us INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS queue_messages_visible ON queue_messages(queue, visible_at_us);
"""


def _now_us() -> int:
    return time.time_ns() // 1000


@dataclass(frozen=True)
class QueuedMessage:
    message_id: str
    body: str
    dequeue_count: int
    pop_receipt: str
    inserted_at_us: int


class SqliteQueue:  # core.ports.DelayedQueue and QueueConsumer[QueuedMessage]
    def __init__(self, data_dir: Path, queue_name: str) -> None:
        self.db = SqliteDatabase(data_dir / "queue.sqlite3", SCHEMA)
        self.queue_name = queue_name

    @property
    def poison_name(self) -> str:
        return f"{self.queue_name}-poison"

    def send(self, body: str, delay_seconds: int = 0) -> None:
        self._put(self.queue_name, body, delay_seconds)

    def _put(self, queue: str, body: str, delay_seconds: int) -> None:
        now = _now_us()
        with self.db.write() as db:
            db.execute(
                "INSERT INTO queue_messages VALUES (?, ?, ?, ?, 0, NULL, ?)",
                (uuid.uuid4().hex, queue, body, now + max(delay_seconds, 0) * 1_000_000, now),
            )

    def ping(self) -> None:
        with self.db.read() as db:
            db.execute("SELECT 1").fetchone()

    def receive(self, visibility_timeout_seconds: float) -> QueuedMessage | None:
        """Take the next visible message and hide it for the visibility timeout."""
        now = _now_us()
        receipt = uuid.uuid4().hex
        with self.db.write() as db:
            row = db.execute(
                "UPDATE queue_messages SET dequeue_count = dequeue_count + 1, pop_receipt = ?, visible_at_us = ? "
                "WHERE message_id = (SELECT message_id FROM queue_messages WHERE queue = ? AND visible_at_us <= ? "
                "ORDER BY visible_at_us LIMIT 1) RETURNING message_id, body, dequeue_count, inserted_at_us",
                (receipt, now + int(visibility_timeout_seconds * 1_000_000), self.queue_name, now),
            ).fetchone()
        if row is None:
            return None
        return QueuedMessage(row[0], row[1], row[2], receipt, row[3])

    def delete(self, message: QueuedMessage) -> None:
        with self.db.write() as db:
            db.execute(
                "DELETE FROM queue_messages WHERE message_id = ? AND pop_receipt = ?",
                (message.message_id, message.pop_receipt),
            )

    def move_to_poison(self, message: QueuedMessage) -> None:
        with self.db.write() as db:
            db.execute(
                "UPDATE queue_messages SET queue = ?, visible_at_us = ?, pop_receipt = NULL "
                "WHERE message_id = ? AND pop_receipt = ?",
                (self.poison_name, _now_us(), message.message_id, message.pop_receipt),
            )

    def send_to_poison(self, body: bytes) -> None:
        self._put(self.poison_name, body.decode("utf-8", errors="replace"), 0)

    def poison_messages(self) -> list[QueuedMessage]:
        with self.db.read() as db:
            rows = db.execute(
                "SELECT message_id, body, dequeue_count, inserted_at_us FROM queue_messages "
                "WHERE queue = ? ORDER BY inserted_at_us",
                (self.poison_name,),
            ).fetchall()
        return [QueuedMessage(r[0], r[1], r[2], "", r[3]) for r in rows]

    def poison_count(self) -> int:
        with self.db.read() as db:
            count: int = db.execute(
                "SELECT COUNT(*) FROM queue_messages WHERE queue = ?", (self.poison_name,)
            ).fetchone()[0]
            return count

    def replay_poison(self, message_id: str) -> bool:
        """Put a poisoned message back on the main queue, visible now, with a fresh dequeue count."""
        return self._replay("AND message_id = ?", (message_id,)) == 1

    def replay_all_poison(self) -> int:
        return self._replay("", ())

    def _replay(self, condition: str, arguments: tuple[Any, ...]) -> int:
        with self.db.write() as db:
            cursor = db.execute(
                "UPDATE queue_messages SET queue = ?, visible_at_us = ?, dequeue_count = 0 "
                f"WHERE queue = ? {condition}",
                (self.queue_name, _now_us(), self.poison_name, *arguments),
            )
            return cursor.rowcount
