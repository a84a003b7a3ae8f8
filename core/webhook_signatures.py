"""Signing as the Standard Webhooks specification defines it: HMAC-SHA256 over "{id}.{timestamp}.{body}"
with the key the `whsec_` secret encodes, sent as `v1,<base64>`; several signatures separated by spaces
(a rotation's overlap). A few lines of the standard library, checked against the specification's own
`standardwebhooks` package in tests/unit/test_webhook_signatures.py (decision 0105)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32  # 256 bits: the HMAC key's length, the specification's range is 24 to 64 bytes


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode("ascii")


def signature(secret: str, message_id: str, timestamp: int, body: str) -> str:
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    content = f"{message_id}.{timestamp}.{body}".encode()
    return "v1," + base64.b64encode(hmac.new(key, content, hashlib.sha256).digest()).decode("ascii")


def signed_headers(signing_secrets: list[str], message_id: str, timestamp: int, body: str) -> dict[str, str]:
    """The three headers of one attempt (its timestamp is the attempt's: receivers refuse old ones)."""
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(signature(s, message_id, timestamp, body) for s in signing_secrets),
    }
