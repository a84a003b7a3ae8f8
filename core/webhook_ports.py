"""What the webhook use cases need: where subscriptions and deliveries are kept (every backend:
backends/sqlite/webhooks.py, backends/cosmos/webhooks.py, backends/memory/webhooks.py) and what sends
one signed request (backends/webhook_http.py). Decision 0104."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Protocol

from core.webhooks import WebhookDelivery, WebhookEndpoint


class WebhookStore(Protocol):
    def add_endpoint(self, endpoint: WebhookEndpoint) -> None: ...
    def endpoint(self, partner_id: str, endpoint_id: str) -> WebhookEndpoint | None: ...
    def endpoints(self, partner_id: str) -> list[WebhookEndpoint]:
        """The partner's endpoints, oldest first."""
        ...

    def remove_endpoint(self, partner_id: str, endpoint_id: str) -> bool: ...
    def replace_secrets(self, endpoint: WebhookEndpoint) -> None:
        """Store `endpoint.secrets` (a rotation), leaving its other fields as they are stored."""
        ...

    def set_health(self, partner_id: str, endpoint_id: str, *, active: bool, failing_since: dt.datetime | None) -> None:
        """Store whether it is active and since when it fails (disabled_at set when it turns inactive,
        cleared when it turns active), leaving its URL and secrets as they are stored."""
        ...

    def add_delivery(self, delivery: WebhookDelivery) -> WebhookDelivery:
        """Store a new delivery unless one of that endpoint and event exists; returns the stored one."""
        ...

    def delivery(self, partner_id: str, endpoint_id: str, event_id: str) -> WebhookDelivery | None: ...
    def save_delivery(self, delivery: WebhookDelivery) -> None: ...
    def deliveries(self, partner_id: str, limit: int) -> list[WebhookDelivery]:
        """The partner's latest deliveries (every endpoint), newest first."""
        ...


@dataclass(frozen=True)
class SendResult:
    status_code: int | None  # None: no HTTP answer
    outcome: str  # "200", "timeout", "connection failed: ...", "address refused: ..."
    retry_after_seconds: float | None = None  # a 429's or 503's Retry-After, when it gave one
    refused: bool = False  # the target was refused (its address): never retried


class WebhookSender(Protocol):
    def check_target(self, url: str) -> None:
        """Raise core.webhook_addresses.TargetRefused when the URL or what its name resolves to now is refused."""
        ...

    def post(self, url: str, headers: dict[str, str], body: bytes) -> SendResult:
        """POST to the address checked on this very call (no second lookup to rebind)."""
        ...
