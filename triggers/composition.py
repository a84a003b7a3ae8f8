"""The composition root: the one place the app opens its backend, from the settings, once per process.

Every trigger reaches storage and the queue through current_backend(). Connections are reused; no
state that matters for correctness lives here (every instance sees the same storage).
"""

from __future__ import annotations

import functools

from backends.factory import Backend, open_backend
from backends.webhook_backend import Webhooks, open_webhooks
from core.settings import Settings
from ingest.bearer_tokens import BearerTokens


@functools.cache
def current_backend() -> Backend:
    return open_backend(Settings.from_env())


@functools.cache
def current_webhooks() -> Webhooks:
    """Webhook endpoints, deliveries, their queue and sender, on the backend's storage (decision 0104)."""
    backend = current_backend()
    return open_webhooks(backend.settings, backend.storage)


@functools.cache
def current_bearer_tokens() -> BearerTokens | None:
    """What checks bearer tokens, with this instance's cache of the issuers' keys; None while OAUTH_ISSUER
    is not set (bearer tokens are then refused)."""
    settings = current_backend().settings
    if not settings.oauth_issuers:
        return None
    from backends.openid_keys import OpenIdSigningKeys  # PyJWT: imported only where tokens are accepted

    keys = OpenIdSigningKeys(settings.oauth_issuers, settings.oauth_keys_refresh_seconds)
    return BearerTokens(settings.oauth_issuers, settings.oauth_audiences, keys)
