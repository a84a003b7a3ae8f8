"""Failed authentications limited per client address, in memory on each instance (decision 0037).

Every function is anonymous to the Functions host; the app checks x-functions-key itself, and each
unknown key costs a storage read (Cosmos DB in Azure). Bearer tokens count the same way (a refused token is
a failure; an accepted one is known by its hash, like an accepted key). An address that sent more than the limit of
bad keys within a minute is answered 429 RATE_LIMITED before anything is read, until its minute ends.
A key this instance has already accepted still goes through (and is still read and checked): a
partner sharing an address with a flood keeps working. Why: decision 0037.

The client address is the right-most X-Forwarded-For entry: the one the platform's front end appends
(`ip:port`) behind anything the client sent. The local host appends it the same way.
"""

from __future__ import annotations

import functools
import ipaddress
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from core.errors import ApiError
from core.settings import Settings
from ingest.access import hash_key

FORWARDED_FOR = "x-forwarded-for"
WINDOW_SECONDS = 60
MAX_ADDRESSES = 10_000  # with as many known keys, under 5 MB (decision 0037); oldest go first
MAX_KNOWN_KEYS = 10_000
UNKNOWN_ADDRESS = "unknown"


def client_address(headers: Mapping[str, str]) -> str:
    """The address the front end appended (right-most X-Forwarded-For entry), without its port; an IPv6
    address stands for its /64, which one subscriber usually holds whole. Entries a client put before
    it are ignored: a client can write anything there."""
    entries = (headers.get(FORWARDED_FOR) or "").rsplit(",", 1)
    return _limit_key(entries[-1].strip()) if entries[-1].strip() else UNKNOWN_ADDRESS


def _limit_key(entry: str) -> str:
    host = _without_port(entry)
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return entry[:64]  # not an address (the front end always sends one): bounded, counted as given
    if address.version == 4:
        return str(address)
    if address.ipv4_mapped is not None:  # ::ffff:203.0.113.7 is that IPv4 address
        return str(address.ipv4_mapped)
    return str(ipaddress.ip_network(f"{address}/64", strict=False))


def _without_port(entry: str) -> str:
    if entry.startswith("["):  # [2001:db8::1]:443
        return entry[1:].split("]", 1)[0]
    if entry.count(":") == 1:  # 203.0.113.7:50432
        return entry.split(":", 1)[0]
    return entry  # a bare IPv4 or IPv6 address


def rate_limited(retry_after_seconds: int) -> ApiError:
    return ApiError(
        429,
        "RATE_LIMITED",
        f"Too many requests with a missing or unknown API key from this address; retry after "
        f"{retry_after_seconds} seconds.",
        headers={"Retry-After": str(retry_after_seconds)},
    )


@dataclass(slots=True)
class _Window:
    started: float
    failures: int


class FailureLimiter:
    """At most `limit` failed authentications per address per minute (a window opened by the address's
    first failure); 0 turns it off. Thread-safe: the worker serves requests on a thread pool."""

    def __init__(
        self,
        limit: int,
        *,
        max_addresses: int = MAX_ADDRESSES,
        max_known_keys: int = MAX_KNOWN_KEYS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.max_addresses = max_addresses
        self.max_known_keys = max_known_keys
        self.clock = clock
        self._windows: OrderedDict[str, _Window] = OrderedDict()
        self._known_keys: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def check(self, address: str, presented: str | None, token: str | None = None) -> None:
        """Raise 429 if the address is over the limit, unless every credential presented (API key, bearer
        token) is one this instance accepted."""
        if self.limit <= 0:
            return
        now = self.clock()
        with self._lock:
            window = self._current(address, now)
            if window is None or window.failures < self.limit:
                return
            credentials = [credential for credential in (presented, token) if credential]
            if credentials and all(hash_key(credential) in self._known_keys for credential in credentials):
                return
            retry_after = max(1, int(window.started + WINDOW_SECONDS - now + 0.999))
        raise rate_limited(retry_after)

    def failed(self, address: str, presented: str | None, token: str | None = None) -> None:
        """A missing, unknown or revoked key, or a refused token, from `address` (what was presented is no
        longer known)."""
        if self.limit <= 0:
            return
        now = self.clock()
        with self._lock:
            if self._known_keys:
                for credential in (presented, token):
                    if credential:
                        self._known_keys.pop(hash_key(credential), None)
            window = self._current(address, now)
            if window is None:
                window = self._windows[address] = _Window(now, 0)
                while len(self._windows) > self.max_addresses:
                    self._windows.popitem(last=False)
            window.failures += 1
            self._windows.move_to_end(address)

    def accepted(self, key_hash: str | None, token_hash: str | None = None) -> None:
        """The key (by its stored hash) and/or token (by hash_key of it) authenticated: remembered, so that
        they pass an address's limit."""
        if self.limit <= 0:
            return
        with self._lock:
            for credential_hash in (key_hash, token_hash):
                if credential_hash is not None:
                    self._known_keys[credential_hash] = None
                    self._known_keys.move_to_end(credential_hash)
            while len(self._known_keys) > self.max_known_keys:
                self._known_keys.popitem(last=False)

    def tracked_addresses(self) -> int:
        return len(self._windows)

    def _current(self, address: str, now: float) -> _Window | None:
        window = self._windows.get(address)
        if window is not None and now - window.started >= WINDOW_SECONDS:
            del self._windows[address]
            return None
        return window


@functools.cache
def limiter() -> FailureLimiter:
    """This instance's limiter, from AUTH_FAILURES_PER_MINUTE (read once, like the backend)."""
    return FailureLimiter(Settings.from_env().auth_failures_per_minute)
