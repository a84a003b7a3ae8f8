"""Verifying the service's webhooks, as the Standard Webhooks specification defines them: the signature of
`{webhook-id}.{webhook-timestamp}.{body}` with HMAC-SHA256 under the `whsec_` secret, one of the `v1,`
signatures of `webhook-signature` matching, and a timestamp within five minutes of now. The same checks
as the specification's `standardwebhooks` library, in the standard library (the service's tests check one
against the other); use either.

    from pos_partner_client.webhooks import verify
    event = verify(secret, request_body_bytes, request_headers)  # raises WebhookVerificationError
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any

TOLERANCE_SECONDS = 5 * 60


class WebhookVerificationError(Exception):
    """The request is not a valid webhook of the service: answer it 400 and do not act on it."""


def _key(secret: str) -> bytes:
    try:
        return base64.b64decode(secret.removeprefix("whsec_"), validate=True)
    except binascii.Error as error:
        raise ValueError("a webhook secret is whsec_ and base64") from error


def sign(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    content = f"{message_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(_key(secret), content, hashlib.sha256).digest()).decode("ascii")


def verify(
    secret: str,
    body: bytes,
    headers: Mapping[str, str],
    *,
    now: float | None = None,
    tolerance: int = TOLERANCE_SECONDS,
) -> dict[str, Any]:
    """The event (`type`, `timestamp`, `data`) when the request is signed with `secret` (or, during a
    rotation, with the secret either side holds); raises WebhookVerificationError otherwise."""
    lowered = {name.lower(): value for name, value in headers.items()}
    message_id = lowered.get("webhook-id", "")
    stamp = lowered.get("webhook-timestamp", "")
    signatures = lowered.get("webhook-signature", "")
    if not (message_id and stamp and signatures):
        raise WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature")
    try:
        timestamp = int(stamp)
    except ValueError:
        raise WebhookVerificationError("webhook-timestamp is not a number of seconds") from None
    if abs((time.time() if now is None else now) - timestamp) > tolerance:
        raise WebhookVerificationError("webhook-timestamp is too old or too new (replayed?)")
    expected = sign(secret, message_id, timestamp, body)
    if not any(hmac.compare_digest(expected, given) for given in signatures.split(" ") if given.startswith("v1,")):
        raise WebhookVerificationError("no signature matches the secret")
    event: dict[str, Any] = json.loads(body)
    return event
