"""The one exception the client raises for a problem the service answered, or for a service it could not reach."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProblemItem:
    """One problem of an INVALID_PAYLOAD answer, at its path (`trade_records[3].items[0].unit_price`)."""

    path: str
    message: str


class PosApiError(Exception):
    """A problem document (RFC 9457) from the service, or a failure to reach it after every retry.

    `code` is the service's code (INVALID_PAYLOAD, UNAUTHORIZED, RATE_LIMITED, SERVICE_UNAVAILABLE, ...), or
    UNREACHABLE when no answer came; `status` the HTTP status (None when unreachable); `request_id` the id to
    quote to HQ support; `errors` every problem found, with its path.
    """

    def __init__(
        self,
        code: str,
        detail: str,
        *,
        status: int | None = None,
        request_id: str | None = None,
        errors: tuple[ProblemItem, ...] = (),
    ) -> None:
        super().__init__(f"{code}: {detail}" if status is None else f"{status} {code}: {detail}")
        self.code = code
        self.detail = detail
        self.status = status
        self.request_id = request_id
        self.errors = errors

    @property
    def retryable(self) -> bool:
        """True when trying again later may succeed (the service was busy or out of reach); False when the
        request itself must change (the data, the key, the store's registration)."""
        return self.status is None or self.status in (429, 502, 503, 504)
