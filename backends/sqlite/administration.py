"""HQ's administration tables (partners, their API keys and OAuth clients, registered stores, payment
directions), as the `hq` command line changes and lists them."""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Collection

from backends.admin_rules import require_partner
from backends.sqlite.database import SqliteDatabase
from backends.sqlite.rows import in_chunks, partner_of
from core.clients import ANY_ISSUER, ClientInfo
from core.clock import from_utc_text, from_utc_text_or_none, to_utc_text
from core.ports import AdminError
from core.records import ApiKeyInfo, Partner


def registered_among(db: sqlite3.Connection, partner_id: str, store_ids: Collection[str]) -> set[str]:
    """Which of store_ids the partner has registered."""
    found: set[str] = set()
    for chunk, marks in in_chunks(list(set(store_ids))):
        found.update(
            row[0]
            for row in db.execute(
                f"SELECT store_id FROM registered_stores WHERE partner_id = ? AND store_id IN ({marks})",
                (partner_id, *chunk),
            )
        )
    return found


class SqliteAdministration:
    db: SqliteDatabase

    def add_partner(self, partner_id: str, name: str, now: dt.datetime) -> Partner:
        with self.db.write() as db:
            try:
                db.execute(
                    "INSERT INTO partners (partner_id, name, active, created_at) VALUES (?, ?, 1, ?)",
                    (partner_id, name, to_utc_text(now)),
                )
            except sqlite3.IntegrityError:
                raise AdminError(f"partner {partner_id} already exists") from None
        return Partner(partner_id, name, True, now)

    def set_partner_active(self, partner_id: str, active: bool) -> Partner:
        with self.db.write() as db:
            db.execute("UPDATE partners SET active = ? WHERE partner_id = ?", (int(active), partner_id))
        return require_partner(self.get_partner, partner_id)

    def set_partner_rate_limit(self, partner_id: str, per_minute: int | None) -> Partner:
        with self.db.write() as db:
            db.execute("UPDATE partners SET rate_limit_per_minute = ? WHERE partner_id = ?", (per_minute, partner_id))
        return require_partner(self.get_partner, partner_id)

    def get_partner(self, partner_id: str) -> Partner | None:
        with self.db.read() as db:
            row = db.execute("SELECT * FROM partners WHERE partner_id = ?", (partner_id,)).fetchone()
        return None if row is None else partner_of(row)

    def list_partners(self) -> list[Partner]:
        with self.db.read() as db:
            return [partner_of(row) for row in db.execute("SELECT * FROM partners ORDER BY partner_id")]

    def add_key(self, partner_id: str, key_id: str, key_hash: str, now: dt.datetime) -> ApiKeyInfo:
        require_partner(self.get_partner, partner_id)
        with self.db.write() as db:
            db.execute(
                "INSERT INTO api_keys (key_id, partner_id, key_hash, created_at) VALUES (?, ?, ?, ?)",
                (key_id, partner_id, key_hash, to_utc_text(now)),
            )
        return ApiKeyInfo(key_id, partner_id, now, None)

    def revoke_key(self, partner_id: str, key_id: str, now: dt.datetime) -> ApiKeyInfo:
        require_partner(self.get_partner, partner_id)
        with self.db.write() as db:
            row = db.execute(
                "SELECT * FROM api_keys WHERE partner_id = ? AND key_id = ?", (partner_id, key_id)
            ).fetchone()
            if row is None:
                raise AdminError(f"partner {partner_id} has no key {key_id}")
            if row["revoked_at"] is not None:
                raise AdminError(f"key {key_id} is already revoked")
            db.execute("UPDATE api_keys SET revoked_at = ? WHERE key_id = ?", (to_utc_text(now), key_id))
        return ApiKeyInfo(key_id, partner_id, from_utc_text(row["created_at"]), now)

    def list_keys(self, partner_id: str) -> list[ApiKeyInfo]:
        require_partner(self.get_partner, partner_id)
        with self.db.read() as db:
            rows = db.execute(
                "SELECT key_id, partner_id, created_at, revoked_at, last_used_at FROM api_keys "
                "WHERE partner_id = ? ORDER BY created_at, key_id",
                (partner_id,),
            ).fetchall()
        return [
            ApiKeyInfo(
                r["key_id"],
                r["partner_id"],
                from_utc_text(r["created_at"]),
                from_utc_text_or_none(r["revoked_at"]),
                from_utc_text_or_none(r["last_used_at"]),
            )
            for r in rows
        ]

    def add_client(self, partner_id: str, client_id: str, now: dt.datetime, issuer: str = ANY_ISSUER) -> ClientInfo:
        require_partner(self.get_partner, partner_id)
        with self.db.write() as db:
            row = db.execute(
                "SELECT partner_id FROM issuer_clients WHERE issuer = ? AND client_id = ?", (issuer, client_id)
            ).fetchone()
            if row is not None:
                raise AdminError(f"client {client_id} already speaks for partner {row[0]}")
            db.execute(
                "INSERT INTO issuer_clients VALUES (?, ?, ?, ?)", (issuer, client_id, partner_id, to_utc_text(now))
            )
        return ClientInfo(client_id, partner_id, now, issuer)

    def remove_client(self, partner_id: str, client_id: str, issuer: str = ANY_ISSUER) -> None:
        require_partner(self.get_partner, partner_id)
        with self.db.write() as db:
            cursor = db.execute(
                "DELETE FROM issuer_clients WHERE issuer = ? AND client_id = ? AND partner_id = ?",
                (issuer, client_id, partner_id),
            )
            if cursor.rowcount != 1:
                raise AdminError(f"partner {partner_id} has no client {client_id}")

    def list_clients(self, partner_id: str) -> list[ClientInfo]:
        require_partner(self.get_partner, partner_id)
        with self.db.read() as db:
            rows = db.execute(
                "SELECT issuer, client_id, partner_id, added_at FROM issuer_clients WHERE partner_id = ? "
                "ORDER BY added_at, client_id, issuer",
                (partner_id,),
            ).fetchall()
        return [ClientInfo(r["client_id"], r["partner_id"], from_utc_text(r["added_at"]), r["issuer"]) for r in rows]

    def register_stores(self, partner_id: str, store_ids: list[str], now: dt.datetime) -> None:
        require_partner(self.get_partner, partner_id)
        with self.db.write() as db:
            known = registered_among(db, partner_id, store_ids)
            if known:
                raise AdminError(f"already registered for {partner_id}: {', '.join(sorted(known))}")
            db.executemany(
                "INSERT INTO registered_stores VALUES (?, ?, ?)",
                [(partner_id, store_id, to_utc_text(now)) for store_id in store_ids],
            )

    def unregister_stores(self, partner_id: str, store_ids: list[str]) -> None:
        require_partner(self.get_partner, partner_id)
        with self.db.write() as db:
            missing = set(store_ids) - registered_among(db, partner_id, store_ids)
            if missing:
                raise AdminError(f"not registered for {partner_id}: {', '.join(sorted(missing))}")
            db.executemany(
                "DELETE FROM registered_stores WHERE partner_id = ? AND store_id = ?",
                [(partner_id, store_id) for store_id in store_ids],
            )

    def registered_stores(self, partner_id: str) -> list[str]:
        require_partner(self.get_partner, partner_id)
        with self.db.read() as db:
            rows = db.execute(
                "SELECT store_id FROM registered_stores WHERE partner_id = ? ORDER BY store_id", (partner_id,)
            ).fetchall()
        return [row[0] for row in rows]

    def set_payment_direction(self, partner_id: str, payment_type: str, direction: int) -> None:
        require_partner(self.get_partner, partner_id)
        with self.db.write() as db:
            db.execute(
                "INSERT INTO payment_directions VALUES (?, ?, ?) "
                "ON CONFLICT DO UPDATE SET direction = excluded.direction",
                (partner_id, payment_type, direction),
            )

    def payment_directions(self, partner_id: str) -> dict[str, int]:
        with self.db.read() as db:
            rows = db.execute(
                "SELECT payment_type, direction FROM payment_directions WHERE partner_id = ?", (partner_id,)
            ).fetchall()
        return {row[0]: row[1] for row in rows}

    def delete_payment_direction(self, partner_id: str, payment_type: str) -> bool:
        require_partner(self.get_partner, partner_id)
        with self.db.write() as db:
            cursor = db.execute(
                "DELETE FROM payment_directions WHERE partner_id = ? AND payment_type = ?", (partner_id, payment_type)
            )
            return cursor.rowcount == 1
