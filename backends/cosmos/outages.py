"""What the service answers when Cosmos DB cannot serve it: every error that means "not now" becomes
BackendUnavailable (answered 503, the partner's retry completes the batch, since the marker is written
last); any other error is a bug and propagates as it is. A 429 the SDK gave up on (decision
0058) carries Cosmos DB's own retry-after, so the 503 tells the partner when to retry.
A 403 of the account's firewall becomes AddressNotAllowed (a BackendUnavailable), so that `hq` says "your
address is not allowed" instead of "unavailable"."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterator
from typing import NoReturn, ParamSpec, TypeVar

from azure.core.exceptions import ClientAuthenticationError, ServiceRequestError, ServiceResponseError
from azure.cosmos.exceptions import CosmosClientTimeoutError, CosmosHttpResponseError

from backends.cosmos.conditional import ContentionNotSettled
from core.ports import AddressNotAllowed, BackendUnavailable

# A status that means "Cosmos DB cannot serve us now": answered 503, the request may be retried.
# 401/403 are a credential or firewall problem of this deployment, not of the partner's request.
OUTAGE_STATUS = {401, 403, 408, 410, 429, 449, 500, 502, 503, 504}
THROTTLED = 429
RETRY_AFTER_MS_HEADER = "x-ms-retry-after-ms"  # what Cosmos DB puts on a 429: when the partition has room again
FORBIDDEN = 403
# Cosmos DB's 403 for an address its network rules refuse names the path the request came by ("Request
# originated from client IP 203.0.113.7 through public internet. This is blocked by your Cosmos DB account
# firewall settings."; docs: Azure Cosmos DB, "Diagnose and troubleshoot forbidden exceptions").
FIREWALL_MARK = "firewall"
_CLIENT_ADDRESS = re.compile(r"originated from client IP ([0-9A-Fa-f.:]+)")
# Raised by the SDK (after its own retries) when the account cannot be reached at all.
UNREACHABLE = (ServiceRequestError, ServiceResponseError, ClientAuthenticationError, CosmosClientTimeoutError)


def retry_after_seconds(error: CosmosHttpResponseError) -> int | None:
    """Whole seconds to wait after a 429, from its x-ms-retry-after-ms, rounded up and at least 1 (HTTP's
    Retry-After has no fractions, and 0 would invite an immediate retry); None for another error or
    when the header is missing or unreadable."""
    if error.status_code != THROTTLED:
        return None
    value = (error.headers or {}).get(RETRY_AFTER_MS_HEADER)
    try:
        milliseconds = float(value) if value is not None else math.nan
    except ValueError:
        return None
    if not math.isfinite(milliseconds) or milliseconds < 0:
        return None
    return max(1, math.ceil(milliseconds / 1000))


def refused_address(error: BaseException) -> AddressNotAllowed | None:
    """AddressNotAllowed when `error` is Cosmos DB's firewall 403 (not a missing data role, which is a 403
    too, substatus 5301), with the client address Cosmos DB saw when it names one; else None."""
    if not isinstance(error, CosmosHttpResponseError) or error.status_code != FORBIDDEN:
        return None
    text = str(error.message or error)
    if FIREWALL_MARK not in text.lower():
        return None
    address = _CLIENT_ADDRESS.search(text)
    return AddressNotAllowed("Cosmos DB", address.group(1) if address else None)


def as_unavailable(error: Exception) -> Exception:
    """What a Cosmos DB error is to the caller: BackendUnavailable (or AddressNotAllowed) for an outage,
    else the error itself (a bug)."""
    if isinstance(error, CosmosHttpResponseError):
        refused = refused_address(error)
        if refused is not None:
            return refused
        if error.status_code in OUTAGE_STATUS:
            return BackendUnavailable(
                f"Cosmos DB answered {error.status_code}", retry_after_seconds=retry_after_seconds(error)
            )
        return error
    if isinstance(error, UNREACHABLE):
        return BackendUnavailable(f"Cosmos DB cannot be reached: {type(error).__name__}")
    if isinstance(error, ContentionNotSettled):
        return BackendUnavailable(str(error))
    return error


_CAUGHT = (CosmosHttpResponseError, *UNREACHABLE, ContentionNotSettled)


Params = ParamSpec("Params")
Returned = TypeVar("Returned")
Yielded = TypeVar("Yielded")


def outage_as_unavailable(method: Callable[Params, Returned]) -> Callable[Params, Returned]:
    """A Cosmos DB outage (after the SDK's own retries) becomes BackendUnavailable: answered 503."""

    @functools.wraps(method)
    def guarded(*args: Params.args, **kwargs: Params.kwargs) -> Returned:
        try:
            return method(*args, **kwargs)
        except _CAUGHT as error:
            _raise_as_unavailable(error)

    return guarded


def outages_while_read(method: Callable[Params, Iterator[Yielded]]) -> Callable[Params, Iterator[Yielded]]:
    """outage_as_unavailable for a method that returns an iterator read page by page: an outage met on a
    later page (while the caller consumes it) becomes BackendUnavailable too."""

    @functools.wraps(method)
    def guarded(*args: Params.args, **kwargs: Params.kwargs) -> Iterator[Yielded]:
        try:
            yield from method(*args, **kwargs)
        except _CAUGHT as error:
            _raise_as_unavailable(error)

    return guarded


def _raise_as_unavailable(error: Exception) -> NoReturn:
    """Raise the outage `error` is as BackendUnavailable, or `error` itself when it is none."""
    raised = as_unavailable(error)
    if raised is error:
        raise error
    raise raised from error
