"""Webhook subscriptions and deliveries: the data the ports carry, and the rules that need no I/O (which
event ids, which bodies, which answers are retried and when). Decisions 0104-0106."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import uuid
from dataclasses import dataclass
from typing import Any

from core.clock import from_utc_text, from_utc_text_or_none, to_api_text, to_utc_text, to_utc_text_or_none

RECONCILED = "daily_close.reconciled"
OVERDUE = "daily_close.overdue"
PING = "webhook.ping"
EVENT_TYPES = (RECONCILED, OVERDUE, PING)

PENDING, DELIVERED, FAILED = "PENDING", "DELIVERED", "FAILED"
DELIVERY_KEPT_DAYS = 30  # what HQ can list and redeliver; older deliveries leave the store

# The namespace of event ids: an event's id is derived from what it reports, so that publishing it again
# (after a crash, decision 0106) gives the same id, which partners drop duplicates by.
_EVENT_NAMESPACE = uuid.UUID("6f1d6c2e-3b7a-5d0e-9c55-0d2f8e1a4b42")


def event_id(*parts: str) -> str:
    """msg_ and 32 hex digits, as Standard Webhooks' examples write ids."""
    return "msg_" + uuid.uuid5(_EVENT_NAMESPACE, "\x1f".join(parts)).hex


def random_event_id() -> str:
    return "msg_" + uuid.uuid4().hex


def event_body(event_type: str, timestamp: dt.datetime, data: dict[str, Any]) -> str:
    """The JSON text sent on every attempt (the same bytes each time: they are what is signed)."""
    return json.dumps(
        {"type": event_type, "timestamp": to_api_text(timestamp), "data": data},
        ensure_ascii=False,
        separators=(",", ":"),
    )


@dataclass(frozen=True)
class SigningSecret:
    secret: str  # "whsec_" and the base64 of the key, as Standard Webhooks writes it
    expires_at: dt.datetime | None = None  # None: the current secret; a rotation gives the old one an end


@dataclass(frozen=True)
class WebhookEndpoint:
    partner_id: str
    endpoint_id: str
    url: str
    secrets: tuple[SigningSecret, ...]
    created_at: dt.datetime
    active: bool = True
    failing_since: dt.datetime | None = None  # the first failed attempt since the last delivered one
    disabled_at: dt.datetime | None = None

    def signing_secrets(self, now: dt.datetime) -> list[str]:
        """The secrets that sign now: the current one and, during a rotation's overlap, the old one."""
        return [s.secret for s in self.secrets if s.expires_at is None or s.expires_at > now]


@dataclass(frozen=True)
class Attempt:
    at: dt.datetime
    status_code: int | None  # None: no HTTP answer (timeout, refused connection, refused address)
    outcome: str  # what happened, for HQ: "200", "timeout", "connection failed", "address refused: private"


@dataclass(frozen=True)
class WebhookDelivery:
    """One event for one endpoint: its body, every attempt, and what comes next."""

    partner_id: str
    endpoint_id: str
    event_id: str
    event_type: str
    body: str
    created_at: dt.datetime
    state: str = PENDING
    attempts: tuple[Attempt, ...] = ()
    next_attempt_at: dt.datetime | None = None
    round_start: int = 0  # attempts made before the current round (HQ's redeliver starts a new one)


@dataclass(frozen=True)
class DeliveryMessage:
    """The queue message asking for attempt number `attempt` (1-based, counted over the whole delivery)."""

    partner_id: str
    endpoint_id: str
    event_id: str
    attempt: int

    def encode(self) -> str:
        return json.dumps(dataclasses.asdict(self), ensure_ascii=False)

    @classmethod
    def decode(cls, body: bytes | str) -> DeliveryMessage:
        try:
            fields = json.loads(body)
            return cls(
                str(fields["partner_id"]), str(fields["endpoint_id"]), str(fields["event_id"]), int(fields["attempt"])
            )
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError("not a webhook delivery message") from error


# -- stored documents (the same on every backend) -----------------------------------------------------


def endpoint_document(endpoint: WebhookEndpoint) -> dict[str, Any]:
    return {
        "partner_id": endpoint.partner_id,
        "endpoint_id": endpoint.endpoint_id,
        "url": endpoint.url,
        "secrets": [{"secret": s.secret, "expires_at": to_utc_text_or_none(s.expires_at)} for s in endpoint.secrets],
        "created_at": to_utc_text(endpoint.created_at),
        "active": endpoint.active,
        "failing_since": to_utc_text_or_none(endpoint.failing_since),
        "disabled_at": to_utc_text_or_none(endpoint.disabled_at),
    }


def endpoint_of(document: dict[str, Any]) -> WebhookEndpoint:
    return WebhookEndpoint(
        document["partner_id"],
        document["endpoint_id"],
        document["url"],
        tuple(SigningSecret(s["secret"], from_utc_text_or_none(s["expires_at"])) for s in document["secrets"]),
        from_utc_text(document["created_at"]),
        bool(document["active"]),
        from_utc_text_or_none(document.get("failing_since")),
        from_utc_text_or_none(document.get("disabled_at")),
    )


def delivery_document(delivery: WebhookDelivery) -> dict[str, Any]:
    return {
        "partner_id": delivery.partner_id,
        "endpoint_id": delivery.endpoint_id,
        "event_id": delivery.event_id,
        "event_type": delivery.event_type,
        "body": delivery.body,
        "created_at": to_utc_text(delivery.created_at),
        "state": delivery.state,
        "attempts": [
            {"at": to_utc_text(a.at), "status_code": a.status_code, "outcome": a.outcome} for a in delivery.attempts
        ],
        "next_attempt_at": to_utc_text_or_none(delivery.next_attempt_at),
        "round_start": delivery.round_start,
    }


def delivery_of(document: dict[str, Any]) -> WebhookDelivery:
    return WebhookDelivery(
        document["partner_id"],
        document["endpoint_id"],
        document["event_id"],
        document["event_type"],
        document["body"],
        from_utc_text(document["created_at"]),
        document["state"],
        tuple(Attempt(from_utc_text(a["at"]), a["status_code"], a["outcome"]) for a in document["attempts"]),
        from_utc_text_or_none(document.get("next_attempt_at")),
        int(document.get("round_start", 0)),
    )
