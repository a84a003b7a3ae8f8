"""What the service answers when Cosmos DB cannot serve it: every error that means "not now" becomes
BackendUnavailable (answered 503, the partner's retry completes the batch, since the marker is written
last); any other error is a bug and propagates as it is."""

from __future__ import annotations

import functools

from azure.core.exceptions import ClientAuthenticationError, ServiceRequestError, ServiceResponseError
from azure.cosmos.exceptions import CosmosClientTimeoutError, CosmosHttpResponseError

from backends.cosmos.conditional import ContentionNotSettled
from core.ports import BackendUnavailable

# A status that means "Cosmos DB cannot serve us now": answered 503, the request may be retried.
# 401/403 are a credential or firewall problem of this deployment, not of the partner's request.
OUTAGE_STATUS = {401, 403, 408, 410, 429, 449, 500, 502, 503, 504}
# Raised by the SDK (after its own retries) when the account cannot be reached at all.
UNREACHABLE = (ServiceRequestError, ServiceResponseError, ClientAuthenticationError, CosmosClientTimeoutError)


def outage_as_unavailable(method):
    """A Cosmos DB outage (after the SDK's own retries) becomes BackendUnavailable: answered 503."""

    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except CosmosHttpResponseError as error:
            if error.status_code in OUTAGE_STATUS:
                raise BackendUnavailable(f"Cosmos DB answered {error.status_code}") from error
            raise
        except UNREACHABLE as error:
            raise BackendUnavailable(f"Cosmos DB cannot be reached: {type(error).__name__}") from error
        except ContentionNotSettled as error:
            raise BackendUnavailable(str(error)) from error

    return guarded
