"""Who is calling, and may they: API keys, partner status, registered stores, rate limit (spec 5).

Keys are 256-bit random secrets. Only their SHA-256 is stored; a presented key is hashed, looked up
by hash and compared in constant time. A fast hash is right here: the secret has full entropy, so
there is nothing to brute-force that a slow hash would protect.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import logging
import re
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass

from core import errors
from core.clock import utc_now
from core.ports import Admission, BackendUnavailable
from core.records import KeyOwner, Partner
from ingest.card_numbers import contains_card_number
from ingest.personal_data import is_email_address

KEY_PREFIX = "posk_"  # makes a leaked key easy to recognise for secret scanners
KEY_BYTES = 32
KEY_ID_PREFIX = "key_"
log = logging.getLogger("pos.access")


@dataclass(frozen=True)
class NewKey:
    key_id: str
    secret: str
    key_hash: str


def hash_key(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def new_key() -> NewKey:
    secret = KEY_PREFIX + secrets.token_urlsafe(KEY_BYTES)
    return NewKey(KEY_ID_PREFIX + secrets.token_hex(6), secret, hash_key(secret))


def is_key_id(text: str) -> bool:
    """The form new_key gives key ids: anything else may be a key pasted by mistake, not to be echoed."""
    return re.fullmatch(KEY_ID_PREFIX + r"[0-9a-f]{12}", text) is not None


def authenticate(storage: Admission, presented: str | None) -> KeyOwner:
    """The key's owner (partner and key id, to log) when the key is known, not revoked and its partner
    active; else 401 UNAUTHORIZED or 403 PARTNER_INACTIVE."""
    if not presented:
        raise errors.unauthorized()
    digest = hash_key(presented)
    owner = storage.find_key(digest)
    if owner is None or not hmac.compare_digest(owner.key_hash, digest) or owner.revoked:
        raise errors.unauthorized()
    if not owner.partner.active:
        raise errors.partner_inactive()
    return owner


def note_key_use(storage: Admission, owner: KeyOwner, now: dt.datetime | None = None) -> None:
    """Keep the hour of the key's last accepted request (`hq key list`). The lookup already returned the
    stored hour, so only the first request of a new hour writes: no write per request. Best effort: a
    failure to note it never refuses a request that is otherwise fine."""
    hour = (now or utc_now()).astimezone(dt.UTC).replace(minute=0, second=0, microsecond=0)
    if owner.last_used_at is not None and owner.last_used_at >= hour:
        return
    try:
        storage.record_key_use(owner.key_hash, hour)
    except BackendUnavailable:
        log.warning("the last-used hour of a key was not recorded", extra={"key_id": owner.key_id})


def require_registered(storage: Admission, partner_id: str, store_ids: Iterable[str]) -> None:
    """403 STORE_NOT_ALLOWED unless every store_id is registered for this partner. The answer names
    the store codes refused, except one that holds a card number or an e-mail address: a code that is
    not registered may be anything the partner typed, and such data is never echoed."""
    refuse_unregistered(storage.unregistered(partner_id, set(store_ids)))


def refuse_unregistered(missing: set[str]) -> None:
    """403 STORE_NOT_ALLOWED for the store codes not registered (`require_registered`), if any."""
    if missing:
        named = sorted(code for code in missing if not contains_card_number(code) and not is_email_address(code))
        raise errors.store_not_allowed(named, hidden=len(missing) - len(named))


RATE_WINDOW_SECONDS = 60


@dataclass(frozen=True, slots=True)
class Quota:
    """A partner's rate limit as this request left it: `used` counts this request too."""

    limit: int
    used: int
    reset_seconds: int  # until the window ends (at least 1, as Retry-After)

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.used)

    @property
    def exceeded(self) -> bool:
        return self.used > self.limit


def limit_of(partner: Partner, default_per_minute: int) -> int:
    """The partner's own limit when HQ set one (`hq partner rate-limit`), else the service's default
    (RATE_LIMIT_PER_MINUTE): a chain of 10,000 stores and a café share no sensible single value."""
    return default_per_minute if partner.rate_limit_per_minute is None else partner.rate_limit_per_minute


def count_request(storage: Admission, partner_id: str, limit_per_minute: int, now: float | None = None) -> Quota | None:
    """Count this request in the partner's fixed one-minute window, counted in the shared backend so that
    every instance of the app sees the same count; None when the limit is off (0)."""
    if limit_per_minute <= 0:
        return None
    now = time.time() if now is None else now
    window_start = int(now // RATE_WINDOW_SECONDS) * RATE_WINDOW_SECONDS
    used = storage.count_request(partner_id, window_start)
    return Quota(limit_per_minute, used, max(1, int(window_start + RATE_WINDOW_SECONDS - now + 0.999)))
