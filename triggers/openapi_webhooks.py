"""The OpenAPI document's `webhooks` section: the events the service pushes to a partner's endpoint, with
the Standard Webhooks headers each request carries (decisions 0104-0106). triggers/openapi.py puts it in."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, Field

from core.stored_json import JsonObject
from core.webhooks import OVERDUE, PING, RECONCILED
from ingest.wire.responses import DailyCloseStatus


class DailyCloseReconciledEvent(BaseModel):
    """A store-day got a result, or its result changed (a later close, records or mapping): `data` is the
    store-day as GET /daily-close/{store_id}/{business_date} answers it now."""

    type: Literal["daily_close.reconciled"]
    timestamp: dt.datetime = Field(description="When the result was computed (UTC)")
    data: DailyCloseStatus


class DailyCloseOverdueEvent(BaseModel):
    """A daily close has no result past its due time (reconciliation is late); `data` is the store-day as
    GET /daily-close answers it, still RECEIVED, with its new reconciliation_due_at."""

    type: Literal["daily_close.overdue"]
    timestamp: dt.datetime = Field(description="When the close was found overdue (UTC)")
    data: DailyCloseStatus


class WebhookPingEvent(BaseModel):
    """Sent when HQ tests the endpoint (`hq partner webhook test`); nothing to do but answer 2xx."""

    type: Literal["webhook.ping"]
    timestamp: dt.datetime
    data: dict[str, str] = Field(description="endpoint_id: the endpoint HQ tested (ep_...)")


EVENTS = {RECONCILED: DailyCloseReconciledEvent, OVERDUE: DailyCloseOverdueEvent, PING: WebhookPingEvent}

_HEADERS = {
    "webhook-id": "The event's id (msg_...): the same on every retry and redelivery; drop an id already handled",
    "webhook-timestamp": "Seconds since 1970-01-01 UTC when this attempt was signed; refuse one over 5 minutes off",
    "webhook-signature": "Space-separated `v1,<base64 HMAC-SHA256>` of `{webhook-id}.{webhook-timestamp}.{body}` "
    "under the endpoint's whsec_ secret (two during a secret rotation); accept the request if one matches",
}


def _webhook(event_type: str, model: type[BaseModel]) -> JsonObject:
    return {
        "post": {
            "summary": event_type,
            "description": (model.__doc__ or "").strip() + " Signed as the Standard Webhooks specification defines "
            "(https://www.standardwebhooks.com). Answer 2xx within 10 seconds; 429 and 5xx (and no answer) are "
            "retried for more than a day, other answers are not.",
            "parameters": [
                {"name": name, "in": "header", "required": True, "description": text, "schema": {"type": "string"}}
                for name, text in _HEADERS.items()
            ],
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": _schema(model)}},
            },
            "responses": {"2XX": {"description": "Received (the body of the answer is ignored)"}},
        }
    }


def _schema(model: type[BaseModel]) -> JsonObject:
    """The event's schema, naming the components GET /daily-close's answer defines already."""
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    schema.pop("$defs", None)
    return schema


WEBHOOKS = {event_type: _webhook(event_type, model) for event_type, model in EVENTS.items()}
