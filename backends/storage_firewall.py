"""Azure Storage's firewall refusing the caller's address, told from its other 403s (decision 0067)."""

from __future__ import annotations

from azure.core.exceptions import HttpResponseError

from core.ports import AddressNotAllowed

# Azure Storage names the subsystem that refused a 403 in x-ms-error-code: AuthorizationFailure is the
# account's network rules (firewall, public access off); a missing data role is AuthorizationPermissionMismatch.
NETWORK_REFUSAL_CODE = "AuthorizationFailure"


def refused_address(error: BaseException) -> AddressNotAllowed | None:
    """AddressNotAllowed when `error` is the Storage account's firewall refusing this address; else None."""
    if isinstance(error, HttpResponseError) and error.status_code == 403:
        if getattr(error, "error_code", None) == NETWORK_REFUSAL_CODE:
            return AddressNotAllowed("Azure Storage")
    return None
