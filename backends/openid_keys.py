"""The identity providers' signing keys (OpenID Connect Discovery 1.0, RFC 7517): for each issuer HQ trusts,
`{issuer}/.well-known/openid-configuration` names the issuer's `jwks_uri`, whose public keys verify its
access tokens.

Kept in memory on each instance: fetched at the first token, again after KEYS_MAX_AGE_SECONDS, and when a
token names a key id the issuer's set does not hold (a provider publishes a new key and may sign with it at
once), but then at most once per `refresh_seconds` (30 s) per issuer, so that forged key ids cannot make the
service fetch on every request. An hour as the keys' age (Microsoft.IdentityModel's ConfigurationManager: 12):
a key the provider withdraws (compromised) stops verifying within the hour, for two small GETs an hour per
instance.
Only https, or http on a loopback address (the tests' provider and the local host's); no redirect is followed.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from math import ceil
from typing import Any

import jwt

from core.clients import SigningKey
from core.ports import IdentityProviderUnavailable
from core.settings import allowed_issuer_url
from core.stored_json import JsonObject

KEYS_MAX_AGE_SECONDS = 3600
# The least time between two fetches of an issuer's keys for a key id it does not hold (OAUTH_KEYS_REFRESH_SECONDS):
# a key a provider publishes and signs with at once is accepted within this, and forged key ids cost at most one
# fetch (two small GETs) per issuer and instance in this time (decision 0102).
UNKNOWN_KEY_REFRESH_SECONDS = 30
# An issuer whose keys could never be read is tried again after this (or refresh_seconds, if shorter): its
# tokens are answered 503 meanwhile, without a fetch per request.
RETRY_WITHOUT_KEYS_SECONDS = 10
FETCH_TIMEOUT_SECONDS = 10
MAX_DOCUMENT_BYTES = 1_000_000
DISCOVERY_PATH = "/.well-known/openid-configuration"

# Asymmetric algorithms only: a symmetric key (kty "oct") in a JWKS would be public, and accepting HS256
# beside RS256 is the classic algorithm confusion (RFC 8725 section 2.1).
RSA_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512")
EC_ALGORITHMS = {"P-256": "ES256", "P-384": "ES384", "P-521": "ES512"}
ALLOWED_ALGORITHMS = frozenset((*RSA_ALGORITHMS, *EC_ALGORITHMS.values(), "EdDSA"))

log = logging.getLogger("pos.access")


class KeysUnreadable(Exception):
    """The OpenID configuration or the JWKS could not be fetched or made no sense."""


def fetch_json(url: str) -> JsonObject:
    """A JSON object from `url`: https or loopback http, no redirect, at most MAX_DOCUMENT_BYTES."""
    if not allowed_issuer_url(url):
        raise KeysUnreadable("not an https URL")
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with _OPENER.open(request, timeout=FETCH_TIMEOUT_SECONDS) as answer:
            body = answer.read(MAX_DOCUMENT_BYTES + 1)
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise KeysUnreadable(type(error).__name__) from error
    if len(body) > MAX_DOCUMENT_BYTES:
        raise KeysUnreadable("document too large")
    try:
        document = json.loads(body)
    except ValueError as error:
        raise KeysUnreadable("not JSON") from error
    if not isinstance(document, dict):
        raise KeysUnreadable("not a JSON object")
    return document


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a redirect is a failure: it could lead off https


_OPENER = urllib.request.build_opener(_NoRedirect)


def signing_keys_of(jwks: JsonObject) -> dict[str | None, SigningKey]:
    """The usable signature keys of a JWKS by key id: asymmetric, `use` absent or "sig", an allowed `alg` when
    one is named (else every algorithm of the key's type). Other members are skipped, not fatal: a provider
    may publish encryption keys or key types this service does not use."""
    keys: dict[str | None, SigningKey] = {}
    for member in jwks.get("keys") or ():
        key = _signing_key(member)
        if key is not None:
            keys.setdefault(key.key_id, key)  # a key id given twice: the first one
    return keys


def _signing_key(member: object) -> SigningKey | None:
    if not isinstance(member, dict) or member.get("use", "sig") != "sig":
        return None
    algorithms = _algorithms(member)
    if not algorithms:
        return None
    try:
        public_key = jwt.PyJWK(member, algorithms[0]).key
    except jwt.PyJWTError:
        return None
    key_id = member.get("kid")
    return SigningKey(key_id if isinstance(key_id, str) else None, public_key, algorithms)


def _algorithms(member: JsonObject) -> tuple[str, ...]:
    named = member.get("alg")
    if named is not None:
        return (named,) if named in ALLOWED_ALGORITHMS and _fits(member, named) else ()
    kty = member.get("kty")
    if kty == "RSA":
        return RSA_ALGORITHMS
    if kty == "EC" and member.get("crv") in EC_ALGORITHMS:
        return (EC_ALGORITHMS[member["crv"]],)
    if kty == "OKP" and member.get("crv") in ("Ed25519", "Ed448"):
        return ("EdDSA",)
    return ()


def _fits(member: JsonObject, algorithm: str) -> bool:
    kty = member.get("kty")
    if algorithm in RSA_ALGORITHMS:
        return kty == "RSA"
    if algorithm == "EdDSA":
        return kty == "OKP"
    return kty == "EC" and EC_ALGORITHMS.get(member.get("crv", "")) == algorithm


def fetch_signing_keys(issuer: str, fetch: Callable[[str], JsonObject] = fetch_json) -> dict[str | None, SigningKey]:
    """The issuer's keys: its OpenID configuration, which must name the issuer itself (Discovery section 4.3),
    then its JWKS."""
    configuration = fetch(issuer.rstrip("/") + DISCOVERY_PATH)
    if configuration.get("issuer") != issuer:
        raise KeysUnreadable("the OpenID configuration names another issuer")
    jwks_uri = configuration.get("jwks_uri")
    if not isinstance(jwks_uri, str) or not allowed_issuer_url(jwks_uri):
        raise KeysUnreadable("the OpenID configuration has no https jwks_uri")
    return signing_keys_of(fetch(jwks_uri))


@dataclass
class _IssuerKeys:
    issuer: str
    keys: dict[str | None, SigningKey] | None = None  # None until first read
    fetched_at: float = 0.0
    attempted_at: float | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class OpenIdSigningKeys:
    """The SigningKeys port over the issuers' OpenID configurations. Thread-safe: a known key is found without
    a lock; one thread per issuer fetches while the others wait for its answer."""

    def __init__(
        self,
        issuers: Iterable[str],
        refresh_seconds: int = UNKNOWN_KEY_REFRESH_SECONDS,
        *,
        max_age_seconds: float = KEYS_MAX_AGE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        fetch: Callable[[str], JsonObject] = fetch_json,
    ) -> None:
        self._issuers = {issuer: _IssuerKeys(issuer) for issuer in issuers}
        self.refresh_seconds = refresh_seconds
        self.max_age_seconds = max_age_seconds
        self.clock = clock
        self.fetch = fetch
        self.fetches = 0  # how many times keys were fetched (tests, bench)

    def signing_key(self, issuer: str, key_id: str | None) -> SigningKey | None:
        state = self._issuers.get(issuer)
        if state is None:
            return None
        keys = state.keys
        if keys is None or self.clock() - state.fetched_at >= self.max_age_seconds:
            keys = self._refresh(state, unknown_key_id=False)
        found = _find(keys, key_id)
        if found is None:
            found = _find(self._refresh(state, unknown_key_id=True), key_id)
        return found

    def _refresh(self, state: _IssuerKeys, *, unknown_key_id: bool) -> dict[str | None, SigningKey]:
        """The issuer's keys, fetched again if allowed now; the ones held when not (or when the fetch fails).
        BackendUnavailable when there are none to fall back on."""
        seen = state.keys
        with state.lock:
            if state.keys is not seen and state.keys is not None:
                return state.keys  # another thread fetched them while this one waited
            now = self.clock()
            stale = state.keys is not None and now - state.fetched_at >= self.max_age_seconds
            if (unknown_key_id or stale or state.keys is None) and self._may_fetch(state, now):
                state.attempted_at = now
                self.fetches += 1
                try:
                    state.keys, state.fetched_at = fetch_signing_keys(state.issuer, self.fetch), now
                except KeysUnreadable as failure:
                    log.warning("the keys of an OAuth issuer could not be read", extra={"reason": str(failure)})
            if state.keys is None:
                since = now if state.attempted_at is None else state.attempted_at
                wait = self._wait(state) - (self.clock() - since)
                raise IdentityProviderUnavailable(
                    "the identity provider's signing keys cannot be read now", retry_after_seconds=max(1, ceil(wait))
                )
            return state.keys

    def _wait(self, state: _IssuerKeys) -> float:
        """The least time between two fetches of the issuer's keys (after a failed first fetch: shorter)."""
        return self.refresh_seconds if state.keys is not None else min(self.refresh_seconds, RETRY_WITHOUT_KEYS_SECONDS)

    def _may_fetch(self, state: _IssuerKeys, now: float) -> bool:
        return state.attempted_at is None or now - state.attempted_at >= self._wait(state)


def _find(keys: dict[str | None, SigningKey], key_id: str | None) -> SigningKey | None:
    if key_id is not None:
        return keys.get(key_id)
    return next(iter(keys.values())) if len(keys) == 1 else None  # no key id: only an issuer's only key
