"""A SQLite database made before OAuth clients were mapped per issuer (decision 0103): on open, its clients
move to issuer_clients for any issuer, each still speaking for its partner, and partner_clients is dropped."""

from __future__ import annotations

import contextlib
import datetime as dt
import sqlite3

from backends.sqlite.storage import SqliteStorage
from core.clients import ClientInfo

T0 = dt.datetime(2026, 11, 1, 9, tzinfo=dt.UTC)
ISSUER = "https://login.microsoftonline.com/tenant/v2.0"


def test_clients_of_an_earlier_database_keep_speaking_for_their_partners(tmp_path):
    storage = SqliteStorage(tmp_path)
    storage.add_partner("acme", "Acme", T0)
    storage.add_partner("bistro", "Bistro", T0)
    with contextlib.closing(sqlite3.connect(tmp_path / "pos.sqlite3")) as db, db:  # as the earlier release had it
        db.execute("DROP TABLE issuer_clients")
        db.execute(
            "CREATE TABLE partner_clients (client_id TEXT PRIMARY KEY, partner_id TEXT NOT NULL, "
            "added_at TEXT NOT NULL) WITHOUT ROWID"
        )
        db.executemany(
            "INSERT INTO partner_clients VALUES (?, ?, ?)",
            [("c-acme", "acme", "2026-11-01T09:00:00Z"), ("客户端 1", "bistro", "2026-11-01T09:00:00Z")],
        )
    reopened = SqliteStorage(tmp_path)
    assert reopened.list_clients("acme") == [ClientInfo("c-acme", "acme", T0, "")]
    assert reopened.find_client("c-acme", ISSUER).partner.partner_id == "acme"  # any issuer, as before
    assert reopened.find_client("客户端 1", ISSUER).partner.partner_id == "bistro"
    with contextlib.closing(sqlite3.connect(tmp_path / "pos.sqlite3")) as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "partner_clients" not in tables
    SqliteStorage(tmp_path)  # opened again: nothing left to move
