"""The webhook settings (app settings, read like core/settings.py's): the retry schedule, the timeout of
one attempt, when an endpoint failing all along is disabled, loopback for local development."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

# Standard Webhooks' recommended schedule after the first attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h
# (27.6 hours in all: more than a day).
DEFAULT_RETRY_SECONDS = (5, 300, 1800, 7200, 18000, 36000, 36000)
MAX_WAIT_SECONDS = 7 * 24 * 3600  # a queue message's longest delay (Retry-After is capped to it)


@dataclass(frozen=True)
class WebhookSettings:
    retry_seconds: tuple[int, ...] = DEFAULT_RETRY_SECONDS
    timeout_seconds: float = 10.0
    disable_after_seconds: int = 5 * 24 * 3600  # an endpoint failing every attempt for 5 days is disabled
    allow_loopback: bool = False

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> WebhookSettings:
        return cls(
            retry_seconds=_waits(environ.get("WEBHOOK_RETRY_SECONDS", "")),
            timeout_seconds=float(_number(environ, "WEBHOOK_TIMEOUT_SECONDS", 10)),
            disable_after_seconds=int(_number(environ, "WEBHOOK_DISABLE_AFTER_SECONDS", 5 * 24 * 3600)),
            allow_loopback=environ.get("WEBHOOK_ALLOW_LOOPBACK", "").strip().lower() in ("1", "true", "yes", "on"),
        )


def _number(environ: Mapping[str, str], name: str, default: float) -> float:
    raw = environ.get(name, "").strip()
    try:
        value = float(raw) if raw else default
    except ValueError:
        raise ValueError(f"setting {name} must be a number, got {raw!r}") from None
    if value <= 0:
        raise ValueError(f"setting {name} must be positive, got {raw!r}")
    return value


def _waits(raw: str) -> tuple[int, ...]:
    """WEBHOOK_RETRY_SECONDS: the waits before each retry, comma-separated ("" = the default schedule)."""
    if not raw.strip():
        return DEFAULT_RETRY_SECONDS
    try:
        waits = tuple(int(part) for part in raw.split(","))
    except ValueError:
        raise ValueError(
            f"setting WEBHOOK_RETRY_SECONDS must be whole seconds separated by commas, got {raw!r}"
        ) from None
    if any(wait < 0 or wait > MAX_WAIT_SECONDS for wait in waits):
        raise ValueError(f"setting WEBHOOK_RETRY_SECONDS: each wait must be 0 to {MAX_WAIT_SECONDS} seconds")
    return waits
