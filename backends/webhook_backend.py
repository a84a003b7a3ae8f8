"""Opens what webhooks need on the backend the settings name: the store of endpoints and deliveries, the
delivery queue (the Storage queue in Azure, the SQLite queue on the embedded backend) and the sender."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from backends.queues import open_queue
from backends.webhook_http import HttpWebhookSender
from core.queue_ports import DelayedQueue
from core.settings import Settings
from core.webhook_ports import WebhookSender, WebhookStore
from core.webhook_settings import WebhookSettings

WEBHOOK_QUEUE = "webhook-deliveries"  # the queue trigger of triggers/webhooks.py reads it


@dataclass(frozen=True)
class Webhooks:
    store: WebhookStore
    queue: DelayedQueue
    sender: WebhookSender
    settings: WebhookSettings


def open_webhook_store(settings: Settings, storage: Any) -> WebhookStore:
    """`storage` is the backend's own (its Cosmos DB client is shared)."""
    if settings.backend == "azure":
        from backends.cosmos.webhooks import CosmosWebhookStore

        return CosmosWebhookStore.of_database(storage.client, settings.cosmos_database)
    from backends.sqlite.webhooks import SqliteWebhookStore

    return SqliteWebhookStore(settings.data_dir)


def open_webhooks(settings: Settings, storage: Any) -> Webhooks:
    webhook_settings = WebhookSettings.from_env()
    sender = HttpWebhookSender(webhook_settings.timeout_seconds, webhook_settings.allow_loopback)
    store = open_webhook_store(settings, storage)
    return Webhooks(store, open_queue(settings, WEBHOOK_QUEUE), sender, webhook_settings)
