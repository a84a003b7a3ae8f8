"""What the service answers when Cosmos DB cannot serve it: every error that means "not now" becomes
BackendUnavailable (answered 503, the partner's retry completes the batch, since the marker is written
last); any other error is a bug and propagates as it is. A 429 the SDK gave up on (docs/decisions.md,
"Cosmos DB throttling") carries Cosmos DB's own retry-after, so the 503 tells the partner when to retry."""

from __future__ import annotations

import functools
import math

from azure.core.exceptions import ClientAuthenticationError, ServiceRequestError, ServiceResponseError
from azure.cosmos.exceptions import CosmosClientTimeoutError, CosmosHttpResponseError

from backends.cosmos.conditional import ContentionNotSettled
from core.ports import BackendUnavailable

# A status that means "Cosmos DB cannot serve us now": answered 503, the request may be retried.
# 401/403 are a credential or firewall problem of this deployment, not of the partner's request.
OUTAGE_STATUS = {401, 403, 408, 410, 429, 449, 500, 502, 503, 504}
THROTTLED = 429
RETRY_AFTER_MS_HEADER = "x-ms-retry-after-ms"  # what Cosmos DB puts on a 429: when the partition has room again
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


def outage_as_unavailable(method):
    """A Cosmos DB outage (after the SDK's own retries) becomes BackendUnavailable: answered 503."""

    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except CosmosHttpResponseError as error:
            if error.status_code in OUTAGE_STATUS:
                raise BackendUnavailable(
                    f"Cosmos DB answered {error.status_code}", retry_after_seconds=retry_after_seconds(error)
                ) from error
            raise
        except UNREACHABLE as error:
            raise BackendUnavailable(f"Cosmos DB cannot be reached: {type(error).__name__}") from error
        except ContentionNotSettled as error:
            raise BackendUnavailable(str(error)) from error

    return guarded
