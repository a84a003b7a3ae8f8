"""What each partner request reads or counts before its use case runs: the key (or the token's client) that
signs it, the stores it names, the rate-limit window it falls in; and the health probe's ping."""

from __future__ import annotations

import datetime as dt

from backends.sqlite.administration import registered_among
from backends.sqlite.database import SqliteDatabase
from backends.sqlite.rows import partner_of
from core.clients import ANY_ISSUER, ClientOwner
from core.clock import from_utc_text_or_none, to_utc_text
from core.records import KeyOwner


class SqliteAdmission:
    db: SqliteDatabase

    def find_key(self, key_hash: str) -> KeyOwner | None:
        with self.db.read() as db:
            row = db.execute(
                "SELECT k.key_id, k.key_hash, k.revoked_at, k.last_used_at, p.* FROM api_keys k "
                "JOIN partners p ON p.partner_id = k.partner_id WHERE k.key_hash = ?",
                (key_hash,),
            ).fetchone()
        if row is None:
            return None
        return KeyOwner(
            partner_of(row),
            row["key_id"],
            row["key_hash"],
            row["revoked_at"] is not None,
            from_utc_text_or_none(row["last_used_at"]),
        )

    def find_client(self, client_id: str, issuer: str = ANY_ISSUER) -> ClientOwner | None:
        with self.db.read() as db:
            row = db.execute(  # the issuer's own mapping first, then one for any issuer
                "SELECT c.client_id, p.* FROM issuer_clients c JOIN partners p ON p.partner_id = c.partner_id "
                "WHERE c.client_id = ? AND c.issuer IN (?, '') ORDER BY c.issuer DESC LIMIT 1",
                (client_id, issuer),
            ).fetchone()
        return None if row is None else ClientOwner(partner_of(row), row["client_id"])

    def record_key_use(self, key_hash: str, hour: dt.datetime) -> None:
        with self.db.write() as db:
            db.execute(
                "UPDATE api_keys SET last_used_at = ? WHERE key_hash = ? "
                "AND (last_used_at IS NULL OR last_used_at < ?)",
                (to_utc_text(hour), key_hash, to_utc_text(hour)),
            )

    def unregistered(self, partner_id: str, store_ids: set[str]) -> set[str]:
        with self.db.read() as db:
            return set(store_ids) - registered_among(db, partner_id, store_ids)

    def count_request(self, partner_id: str, window_start: int) -> int:
        with self.db.write() as db:
            count: int = db.execute(
                "INSERT INTO request_counts VALUES (?, ?, 1) ON CONFLICT DO UPDATE SET count = count + 1 "
                "RETURNING count",
                (partner_id, window_start),
            ).fetchone()[0]
            if count == 1:  # first request of a new window: forget the old ones
                db.execute(
                    "DELETE FROM request_counts WHERE partner_id = ? AND window_start < ?", (partner_id, window_start)
                )
        return count

    def ping(self) -> None:
        with self.db.read() as db:
            db.execute("SELECT 1").fetchone()
