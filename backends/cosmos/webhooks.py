"""Webhook endpoints and deliveries in container `webhooks` (core.webhook_ports.WebhookStore): a partner's
endpoints in one logical partition, its deliveries in another (kept DELIVERY_KEPT_DAYS by their ttl, so
the partition stays far below its 20 GB), each item the stored document of core/webhooks.py. Endpoint
changes are ETag read-modify-writes (conditional.update_item): a rotation and a delivery noting the
endpoint's health never undo each other. Decision 0104."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from azure.cosmos import ContainerProxy, CosmosClient
from azure.cosmos.exceptions import CosmosResourceExistsError, CosmosResourceNotFoundError

from backends.cosmos.conditional import update_item
from backends.cosmos.items import forget, query, read_or_none, without_system_properties
from backends.cosmos.keys import compound_key
from backends.cosmos.outages import outage_as_unavailable
from core.clock import to_utc_text_or_none, utc_now
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

CONTAINER = "webhooks"


def _endpoints_key(partner_id: str) -> str:
    return compound_key("endpoints", partner_id)


def _deliveries_key(partner_id: str) -> str:
    return compound_key("deliveries", partner_id)


def _delivery_id(endpoint_id: str, event_id: str) -> str:
    return compound_key(endpoint_id, event_id)


def _fields(item: JsonObject) -> JsonObject:
    return {k: v for k, v in without_system_properties(item).items() if k not in ("id", "pk", "type", "ttl")}


class CosmosWebhookStore:  # core.webhook_ports.WebhookStore
    def __init__(self, container: ContainerProxy) -> None:
        self._container = container

    @classmethod
    def of_database(cls, client: CosmosClient, database_name: str) -> CosmosWebhookStore:
        """The container of the storage's own database (created with the others from containers.json)."""
        return cls(client.get_database_client(database_name).get_container_client(CONTAINER))

    @outage_as_unavailable
    def add_endpoint(self, endpoint: WebhookEndpoint) -> None:
        self._container.create_item(
            {
                "id": endpoint.endpoint_id,
                "pk": _endpoints_key(endpoint.partner_id),
                "type": "endpoint",
                **endpoint_document(endpoint),
            }
        )

    @outage_as_unavailable
    def endpoint(self, partner_id: str, endpoint_id: str) -> WebhookEndpoint | None:
        item = read_or_none(self._container, endpoint_id, _endpoints_key(partner_id))
        return None if item is None else endpoint_of(_fields(item))

    @outage_as_unavailable
    def endpoints(self, partner_id: str) -> list[WebhookEndpoint]:
        key = _endpoints_key(partner_id)
        items = query(self._container, "SELECT * FROM c WHERE c.pk = @pk", key, pk=key)
        return sorted((endpoint_of(_fields(i)) for i in items), key=lambda e: (e.created_at, e.endpoint_id))

    @outage_as_unavailable
    def remove_endpoint(self, partner_id: str, endpoint_id: str) -> bool:
        try:
            self._container.delete_item(endpoint_id, partition_key=_endpoints_key(partner_id))
        except CosmosResourceNotFoundError as error:
            forget(error)
            return False
        return True

    def _update(self, partner_id: str, endpoint_id: str, change: Callable[[JsonObject], JsonObject]) -> None:
        def changed(item: JsonObject | None) -> JsonObject | None:
            return None if item is None else {**without_system_properties(item), **change(_fields(item))}

        update_item(self._container, endpoint_id, _endpoints_key(partner_id), changed)

    @outage_as_unavailable
    def replace_secrets(self, endpoint: WebhookEndpoint) -> None:
        secrets = endpoint_document(endpoint)["secrets"]
        self._update(endpoint.partner_id, endpoint.endpoint_id, lambda stored: {"secrets": secrets})

    @outage_as_unavailable
    def set_health(self, partner_id: str, endpoint_id: str, *, active: bool, failing_since: dt.datetime | None) -> None:
        def change(stored: JsonObject) -> JsonObject:
            disabled_at = None if active else (stored.get("disabled_at") or to_utc_text_or_none(utc_now()))
            return {"active": active, "failing_since": to_utc_text_or_none(failing_since), "disabled_at": disabled_at}

        self._update(partner_id, endpoint_id, change)

    def _item(self, delivery: WebhookDelivery) -> JsonObject:
        return {
            "id": _delivery_id(delivery.endpoint_id, delivery.event_id),
            "pk": _deliveries_key(delivery.partner_id),
            "type": "delivery",
            "ttl": DELIVERY_KEPT_DAYS * 24 * 3600,
            **delivery_document(delivery),
        }

    @outage_as_unavailable
    def add_delivery(self, delivery: WebhookDelivery) -> WebhookDelivery:
        try:
            self._container.create_item(self._item(delivery))
        except CosmosResourceExistsError as error:
            forget(error)
            stored = self.delivery(delivery.partner_id, delivery.endpoint_id, delivery.event_id)
            if stored is not None:
                return stored
        return delivery

    @outage_as_unavailable
    def delivery(self, partner_id: str, endpoint_id: str, event_id: str) -> WebhookDelivery | None:
        item = read_or_none(self._container, _delivery_id(endpoint_id, event_id), _deliveries_key(partner_id))
        return None if item is None else delivery_of(_fields(item))

    @outage_as_unavailable
    def save_delivery(self, delivery: WebhookDelivery) -> None:
        self._container.upsert_item(self._item(delivery))

    @outage_as_unavailable
    def deliveries(self, partner_id: str, limit: int) -> list[WebhookDelivery]:
        key = _deliveries_key(partner_id)
        items = query(
            self._container,
            "SELECT TOP @limit * FROM c WHERE c.pk = @pk ORDER BY c.created_at DESC",
            key,
            pk=key,
            limit=limit,
        )
        return sorted((delivery_of(_fields(i)) for i in items), key=lambda d: (d.created_at, d.event_id), reverse=True)
