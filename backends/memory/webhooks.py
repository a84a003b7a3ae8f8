"""Webhook endpoints and deliveries in memory (core.webhook_ports.WebhookStore), for use-case tests; the
same contract as SQLite's and Cosmos DB's (tests/contract/test_webhook_store.py)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import threading

from core.webhooks import WebhookDelivery, WebhookEndpoint


class MemoryWebhookStore:  # core.webhook_ports.WebhookStore
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._endpoints: dict[tuple[str, str], WebhookEndpoint] = {}
        self._deliveries: dict[tuple[str, str, str], WebhookDelivery] = {}

    def add_endpoint(self, endpoint: WebhookEndpoint) -> None:
        with self._lock:
            self._endpoints[(endpoint.partner_id, endpoint.endpoint_id)] = endpoint

    def endpoint(self, partner_id: str, endpoint_id: str) -> WebhookEndpoint | None:
        with self._lock:
            return self._endpoints.get((partner_id, endpoint_id))

    def endpoints(self, partner_id: str) -> list[WebhookEndpoint]:
        with self._lock:
            found = [e for (partner, _), e in self._endpoints.items() if partner == partner_id]
        return sorted(found, key=lambda e: (e.created_at, e.endpoint_id))

    def remove_endpoint(self, partner_id: str, endpoint_id: str) -> bool:
        with self._lock:
            return self._endpoints.pop((partner_id, endpoint_id), None) is not None

    def replace_secrets(self, endpoint: WebhookEndpoint) -> None:
        with self._lock:
            stored = self._endpoints.get((endpoint.partner_id, endpoint.endpoint_id))
            if stored is not None:
                self._endpoints[(endpoint.partner_id, endpoint.endpoint_id)] = dataclasses.replace(
                    stored, secrets=endpoint.secrets
                )

    def set_health(self, partner_id: str, endpoint_id: str, *, active: bool, failing_since: dt.datetime | None) -> None:
        with self._lock:
            stored = self._endpoints.get((partner_id, endpoint_id))
            if stored is not None:
                disabled_at = None if active else (stored.disabled_at or dt.datetime.now(dt.UTC))
                self._endpoints[(partner_id, endpoint_id)] = dataclasses.replace(
                    stored, active=active, failing_since=failing_since, disabled_at=disabled_at
                )

    def add_delivery(self, delivery: WebhookDelivery) -> WebhookDelivery:
        with self._lock:
            return self._deliveries.setdefault((delivery.partner_id, delivery.endpoint_id, delivery.event_id), delivery)

    def delivery(self, partner_id: str, endpoint_id: str, event_id: str) -> WebhookDelivery | None:
        with self._lock:
            return self._deliveries.get((partner_id, endpoint_id, event_id))

    def save_delivery(self, delivery: WebhookDelivery) -> None:
        with self._lock:
            self._deliveries[(delivery.partner_id, delivery.endpoint_id, delivery.event_id)] = delivery

    def deliveries(self, partner_id: str, limit: int) -> list[WebhookDelivery]:
        with self._lock:
            found = [d for (partner, _, _), d in self._deliveries.items() if partner == partner_id]
        return sorted(found, key=lambda d: (d.created_at, d.event_id), reverse=True)[:limit]
