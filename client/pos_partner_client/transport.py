"""HTTP to the service with the retries a partner needs, on the standard library's urllib.

Retried: 429 after its Retry-After; 502, 503, 504 and connection errors (refused, reset, cut before the answer,
timed out) with exponential backoff and jitter; bounded in attempts and in time. Never retried: any other 4xx
or 5xx, which would fail the same way again. A retry sends the very same bytes (the body is encoded once by the
caller), so a write the service did receive before the cut is answered ALREADY_RECEIVED, never stored twice.

The client also paces itself by the RateLimit header (IETF draft): when nothing is left of the window, the next
request waits for the window's end instead of drawing a 429.

With OAuth client credentials (tokens.py) a request carries `Authorization: Bearer <token>`; a 401 gets one
immediate resend with a new token (the one held may have been revoked or expired early), not a retry.
"""

from __future__ import annotations

import http.client
import json
import random
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pos_partner_client.errors import PosApiError, ProblemItem
from pos_partner_client.tokens import TokenError, TokenSource

USER_AGENT = "pos-partner-client/0.1.0"
RETRIED_STATUSES = frozenset({429, 502, 503, 504})
_RATE_LIMIT = re.compile(r";\s*r=(\d+).*?;\s*t=(\d+)|;\s*t=(\d+).*?;\s*r=(\d+)")


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try: at most `max_attempts` sends of one request within `max_elapsed_seconds`; between them
    a delay drawn from [d/2, d] where d doubles from `base_delay_seconds` up to `max_delay_seconds` (a 429 waits
    its Retry-After instead). A Retry-After beyond `max_retry_after_seconds` is not waited for: the request fails.
    """

    max_attempts: int = 8
    max_elapsed_seconds: float = 300.0
    base_delay_seconds: float = 1.0
    max_delay_seconds: float = 30.0
    max_retry_after_seconds: float = 120.0

    def backoff_seconds(self, retry: int, rng: random.Random) -> float:
        """The delay before retry number `retry` (1 for the first retry)."""
        ceiling = min(self.max_delay_seconds, self.base_delay_seconds * 2 ** (retry - 1))
        return rng.uniform(ceiling / 2, ceiling)


@dataclass(frozen=True)
class Wait:
    """A pause of the client, reported to `on_wait`: why (`RATE_LIMITED`, `SERVICE_UNAVAILABLE`, `CONNECTION`,
    `PACING`), how long, and which retry of the request it precedes (0 for pacing)."""

    reason: str
    seconds: float
    retry: int
    detail: str = ""


@dataclass(frozen=True)
class Response:
    """An answer; header names in lower case."""

    status: int
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@dataclass(frozen=True)
class _Retry:
    failure: PosApiError
    delay: float | None = None  # None: the policy's backoff; else the service's Retry-After


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """The service never redirects: a redirect is answered as a failure, and the key never follows it elsewhere."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


@dataclass
class Transport:
    """Sends requests to `base_url` with the partner's key or its access tokens (or both: the service then
    checks that they name the same partner); one per call of `request`, retried as above."""

    base_url: str
    key: str | None
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    timeout_seconds: float = 60.0
    on_wait: Callable[[Wait], None] | None = None
    sleep: Callable[[float], None] = time.sleep
    rng: random.Random = field(default_factory=random.Random)
    credentials: TokenSource | None = None
    _resume_at: float = 0.0

    def request(self, method: str, path: str, body: bytes | None = None) -> Response:
        """The service's answer (2xx); PosApiError for a problem, or when every retry is spent."""
        started = time.monotonic()
        retry = 0
        while True:
            self._pace()
            outcome = self._attempt(method, path, body)
            if isinstance(outcome, Response):
                return outcome
            retry += 1
            delay = self.policy.backoff_seconds(retry, self.rng) if outcome.delay is None else outcome.delay
            out_of_time = time.monotonic() - started + delay > self.policy.max_elapsed_seconds
            if retry >= self.policy.max_attempts or out_of_time:
                raise outcome.failure
            reason = outcome.failure.code if outcome.failure.status else "CONNECTION"
            self._wait(Wait(reason, delay, retry, outcome.failure.detail))

    def _attempt(self, method: str, path: str, body: bytes | None) -> Response | _Retry:
        """One send: the answer, or what to retry; raises the failure that must not be retried."""
        try:
            response = self._send_once(method, path, body)
            if response.status == 401 and self.credentials is not None:
                response = self._send_once(method, path, body, renew_token=True)
        except TokenError as refused:
            if refused.retryable:
                return _Retry(refused)
            raise
        except (urllib.error.URLError, http.client.HTTPException, OSError) as error:
            cause = getattr(error, "reason", error)
            return _Retry(PosApiError("UNREACHABLE", f"{method} {self._url(path)}: {type(cause).__name__}: {cause}"))
        self._note_rate_limit(response.headers)
        if 200 <= response.status < 300:
            return response
        failure = problem_of(response)
        if response.status not in RETRIED_STATUSES:
            raise failure
        retry_after = _seconds(response.headers.get("retry-after")) if response.status == 429 else None
        if retry_after is not None and retry_after > self.policy.max_retry_after_seconds:
            raise failure
        return _Retry(failure, retry_after)

    def _url(self, path: str) -> str:
        return f"{self.base_url.rstrip('/')}/{path.lstrip('/')}"

    def _send_once(self, method: str, path: str, body: bytes | None, *, renew_token: bool = False) -> Response:
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if self.key is not None:
            headers["x-functions-key"] = self.key
        if self.credentials is not None:
            headers["Authorization"] = "Bearer " + self.credentials.token(renew=renew_token)
        if body is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self._url(path), data=body, headers=headers, method=method)
        try:
            with _OPENER.open(request, timeout=self.timeout_seconds) as answer:
                return Response(answer.status, _lower(answer.headers.items()), answer.read())
        except urllib.error.HTTPError as error:  # a status of 300 or more: an answer, not a failure to connect
            with error:
                return Response(error.code, _lower(error.headers.items()), error.read())

    def _note_rate_limit(self, headers: Mapping[str, str]) -> None:
        """Nothing left of the window: hold the next request until the window ends."""
        found = _RATE_LIMIT.search(headers.get("ratelimit", ""))
        if found:
            remaining, reset = (found.group(1), found.group(2)) if found.group(1) else (found.group(4), found.group(3))
            if int(remaining) == 0:
                self._resume_at = time.monotonic() + int(reset)

    def _pace(self) -> None:
        if (seconds := self._resume_at - time.monotonic()) > 0:
            self._wait(Wait("PACING", seconds, 0, "no request left in the rate limit's window"))

    def _wait(self, wait: Wait) -> None:
        if self.on_wait is not None:
            self.on_wait(wait)
        self.sleep(wait.seconds)


def _lower(items: Iterable[tuple[str, str]]) -> dict[str, str]:
    return {name.lower(): value for name, value in items}


def _seconds(value: str | None) -> float | None:
    try:
        return max(float(value), 0.0) if value is not None else None
    except ValueError:
        return None  # an HTTP date: rare from this service; the backoff applies instead


def problem_of(response: Response) -> PosApiError:
    """The answer's problem document as PosApiError; an answer without one (a platform's 429, a proxy's 502)
    gets the code HTTP_<status>."""
    headers = response.headers
    try:
        problem = response.json()
    except ValueError:
        problem = None
    if not isinstance(problem, dict) or "code" not in problem:
        text = response.body.decode("utf-8", "replace").strip()[:200]
        return PosApiError(
            f"HTTP_{response.status}",
            text or "no problem document",
            status=response.status,
            request_id=headers.get("x-request-id"),
        )
    errors = tuple(
        ProblemItem(str(item.get("path", "")), str(item.get("message", ""))) for item in problem.get("errors") or ()
    )
    return PosApiError(
        str(problem["code"]),
        str(problem.get("detail", "")),
        status=response.status,
        request_id=problem.get("request_id") or headers.get("x-request-id"),
        errors=errors,
    )
