"""Webhook endpoints and deliveries on the embedded backend (core.webhook_ports.WebhookStore): a database
file of their own beside the queue's (webhooks.sqlite3), each row the stored document of core/webhooks.py.
Deliveries are kept DELIVERY_KEPT_DAYS, as on Cosmos DB (by ttl there)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from backends.sqlite.database import SqliteDatabase
from core.clock import to_utc_text, to_utc_text_or_none, utc_now
from core.stored_json import JsonObject
from core.webhooks import (
    DELIVERY_KEPT_DAYS,
    WebhookDelivery,
    WebhookEndpoint,
    delivery_document,
    delivery_of,
    endpoint_document,
    endpoint_of,
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS webhook_endpoints (
    partner_id TEXT NOT NULL, endpoint_id TEXT NOT NULL, created_at TEXT NOT NULL, document TEXT NOT NULL,
    PRIMARY KEY (partner_id, endpoint_id));
CREATE TABLE IF NOT EXISTS webhook_deliveries (
    partner_id TEXT NOT NULL, endpoint_id TEXT NOT NULL, event_id TEXT NOT NULL, created_at TEXT NOT NULL,
    document TEXT NOT NULL, PRIMARY KEY (partner_id, endpoint_id, event_id));
CREATE INDEX IF NOT EXISTS webhook_deliveries_latest ON webhook_deliveries(partner_id, created_at);
CREATE INDEX IF NOT EXISTS webhook_deliveries_age ON webhook_deliveries(created_at);
"""
PRUNED_AT_ONCE = 100  # deliveries past DELIVERY_KEPT_DAYS deleted with each new one: the store stays bounded


def _text(document: JsonObject) -> str:
    return json.dumps(document, ensure_ascii=False)


class SqliteWebhookStore:  # core.webhook_ports.WebhookStore
    def __init__(self, data_dir: Path) -> None:
        self.db = SqliteDatabase(data_dir / "webhooks.sqlite3", SCHEMA)

    def add_endpoint(self, endpoint: WebhookEndpoint) -> None:
        with self.db.write() as db:
            db.execute(
                "INSERT INTO webhook_endpoints VALUES (?, ?, ?, ?)",
                (
                    endpoint.partner_id,
                    endpoint.endpoint_id,
                    to_utc_text(endpoint.created_at),
                    _text(endpoint_document(endpoint)),
                ),
            )

    def endpoint(self, partner_id: str, endpoint_id: str) -> WebhookEndpoint | None:
        with self.db.read() as db:
            row = db.execute(
                "SELECT document FROM webhook_endpoints WHERE partner_id = ? AND endpoint_id = ?",
                (partner_id, endpoint_id),
            ).fetchone()
        return None if row is None else endpoint_of(json.loads(row[0]))

    def endpoints(self, partner_id: str) -> list[WebhookEndpoint]:
        with self.db.read() as db:
            rows = db.execute(
                "SELECT document FROM webhook_endpoints WHERE partner_id = ? ORDER BY created_at, endpoint_id",
                (partner_id,),
            ).fetchall()
        return [endpoint_of(json.loads(row[0])) for row in rows]

    def remove_endpoint(self, partner_id: str, endpoint_id: str) -> bool:
        with self.db.write() as db:
            return (
                db.execute(
                    "DELETE FROM webhook_endpoints WHERE partner_id = ? AND endpoint_id = ?", (partner_id, endpoint_id)
                ).rowcount
                == 1
            )

    def _update(self, partner_id: str, endpoint_id: str, changes: JsonObject) -> None:
        """Change some fields of the stored document, in one write transaction (no lost update)."""
        with self.db.write() as db:
            row = db.execute(
                "SELECT document FROM webhook_endpoints WHERE partner_id = ? AND endpoint_id = ?",
                (partner_id, endpoint_id),
            ).fetchone()
            if row is None:
                return
            document = {**json.loads(row[0]), **changes}
            db.execute(
                "UPDATE webhook_endpoints SET document = ? WHERE partner_id = ? AND endpoint_id = ?",
                (_text(document), partner_id, endpoint_id),
            )

    def replace_secrets(self, endpoint: WebhookEndpoint) -> None:
        self._update(endpoint.partner_id, endpoint.endpoint_id, {"secrets": endpoint_document(endpoint)["secrets"]})

    def set_health(self, partner_id: str, endpoint_id: str, *, active: bool, failing_since: dt.datetime | None) -> None:
        stored = self.endpoint(partner_id, endpoint_id)
        disabled_at = None if active or stored is None else (stored.disabled_at or utc_now())
        self._update(
            partner_id,
            endpoint_id,
            {
                "active": active,
                "failing_since": to_utc_text_or_none(failing_since),
                "disabled_at": to_utc_text_or_none(disabled_at),
            },
        )

    def add_delivery(self, delivery: WebhookDelivery) -> WebhookDelivery:
        oldest_kept = to_utc_text(delivery.created_at - dt.timedelta(days=DELIVERY_KEPT_DAYS))
        with self.db.write() as db:
            db.execute(
                "DELETE FROM webhook_deliveries WHERE rowid IN (SELECT rowid FROM webhook_deliveries "
                "WHERE created_at < ? LIMIT ?)",
                (oldest_kept, PRUNED_AT_ONCE),
            )
            db.execute(
                "INSERT OR IGNORE INTO webhook_deliveries VALUES (?, ?, ?, ?, ?)",
                (
                    delivery.partner_id,
                    delivery.endpoint_id,
                    delivery.event_id,
                    to_utc_text(delivery.created_at),
                    _text(delivery_document(delivery)),
                ),
            )
        stored = self.delivery(delivery.partner_id, delivery.endpoint_id, delivery.event_id)
        assert stored is not None  # just written, or there before
        return stored

    def delivery(self, partner_id: str, endpoint_id: str, event_id: str) -> WebhookDelivery | None:
        with self.db.read() as db:
            row = db.execute(
                "SELECT document FROM webhook_deliveries WHERE partner_id = ? AND endpoint_id = ? AND event_id = ?",
                (partner_id, endpoint_id, event_id),
            ).fetchone()
        return None if row is None else delivery_of(json.loads(row[0]))

    def save_delivery(self, delivery: WebhookDelivery) -> None:
        with self.db.write() as db:
            db.execute(
                "INSERT OR REPLACE INTO webhook_deliveries VALUES (?, ?, ?, ?, ?)",
                (
                    delivery.partner_id,
                    delivery.endpoint_id,
                    delivery.event_id,
                    to_utc_text(delivery.created_at),
                    _text(delivery_document(delivery)),
                ),
            )

    def deliveries(self, partner_id: str, limit: int) -> list[WebhookDelivery]:
        with self.db.read() as db:
            rows = db.execute(
                "SELECT document FROM webhook_deliveries WHERE partner_id = ? "
                "ORDER BY created_at DESC, event_id DESC LIMIT ?",
                (partner_id, limit),
            ).fetchall()
        return [delivery_of(json.loads(row[0])) for row in rows]
