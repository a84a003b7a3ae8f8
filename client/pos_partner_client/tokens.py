"""OAuth 2.0 client credentials (RFC 6749 section 4.4): the access token the client sends as
`Authorization: Bearer ...` in place of (or beside) the API key, once HQ has moved the partner to tokens.

    credentials = ClientCredentials(
        token_url="https://login.microsoftonline.com/<HQ's tenant id>/oauth2/v2.0/token",
        client_id="<the application (client) id HQ registered for you>",
        client_secret=os.environ["POS_CLIENT_SECRET"],
        scope="api://<the service's application id>/.default",
    )
    client = PosClient(base_url, credentials=credentials)

A token is reused until shortly before it expires, then a new one is requested; the transport asks for a new
one at once when the service answers 401 (a token revoked or expired early), once per request. Any other source
of tokens (a certificate with MSAL, a managed identity) fits the TokenSource protocol: one method, `token`.
The secret and the tokens are never printed, logged or put in an error message.
"""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from pos_partner_client.errors import PosApiError

# A token is renewed this long before it expires (or halfway through a shorter lifetime), so that a request
# never leaves with a token that expires on the way or meets a clock a little ahead.
RENEW_BEFORE_EXPIRY_SECONDS = 300
# RFC 6749 section 5.1 only recommends expires_in; without it, a token is used for this long.
DEFAULT_LIFETIME_SECONDS = 600
TOKEN_USER_AGENT = "pos-partner-client/0.1.0"


class TokenSource(Protocol):
    """Where the client's access tokens come from."""

    def token(self, *, renew: bool = False) -> str:
        """A valid access token; `renew`: not the one held (the service refused it)."""
        ...


class TokenError(PosApiError):
    """The token endpoint refused the credentials (retryable False: fix them) or was unavailable (True)."""


@dataclass
class ClientCredentials:
    """Tokens from `token_url` for `client_id` and `client_secret` (sent with HTTP Basic, which RFC 6749
    section 2.3.1 requires every authorization server to accept), for `scope` (Entra ID: `api://.../.default`),
    and for `resource` (RFC 8707 resource indicators: the service's URI, as OpenID providers such as
    `oidc-provider` derive a token's audience from it) or `audience` (the parameter some providers name so):
    each is sent when given."""

    token_url: str
    client_id: str
    client_secret: str = field(repr=False)
    scope: str = ""
    resource: str = ""
    audience: str = ""
    timeout_seconds: float = 30.0
    clock: Callable[[], float] = time.monotonic
    requests: int = 0  # tokens requested so far
    _token: str | None = field(default=None, repr=False)
    _renew_at: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def token(self, *, renew: bool = False) -> str:
        with self._lock:
            if renew or self._token is None or self.clock() >= self._renew_at:
                self._token, lifetime = self._request_token()
                self._renew_at = self.clock() + max(lifetime - RENEW_BEFORE_EXPIRY_SECONDS, lifetime / 2)
            return self._token

    def _request_token(self) -> tuple[str, float]:
        self.requests += 1
        form = {"grant_type": "client_credentials", "scope": self.scope, "resource": self.resource}
        form["audience"] = self.audience
        body = urllib.parse.urlencode({name: value for name, value in form.items() if value}).encode()
        # RFC 6749 section 2.3.1: id and secret are form-encoded before they are joined and base64-encoded.
        pair = f"{urllib.parse.quote_plus(self.client_id)}:{urllib.parse.quote_plus(self.client_secret)}"
        headers = {
            "Authorization": "Basic " + base64.b64encode(pair.encode()).decode("ascii"),
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
            "User-Agent": TOKEN_USER_AGENT,
        }
        request = urllib.request.Request(self.token_url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_seconds) as answer:
                return _token_of(answer.read())
        except urllib.error.HTTPError as error:
            with error:
                raise _refusal(error.code, error.read()) from None
        except (urllib.error.URLError, OSError) as error:  # named: else it reads as the service being down
            reason = getattr(error, "reason", None) or type(error).__name__
            raise TokenError(
                "TOKEN_UNAVAILABLE", f"the token endpoint {self.token_url} could not be reached ({reason})", status=503
            ) from None


def _token_of(body: bytes) -> tuple[str, float]:
    try:
        answer: Any = json.loads(body)
    except ValueError:
        answer = None
    if not isinstance(answer, dict) or not isinstance(answer.get("access_token"), str):
        raise TokenError("TOKEN_UNAVAILABLE", "the token endpoint answered without an access_token", status=502)
    if str(answer.get("token_type", "")).lower() != "bearer":
        raise TokenError("TOKEN_UNAVAILABLE", "the token endpoint gave a token that is not a Bearer token", status=502)
    lifetime = answer.get("expires_in", DEFAULT_LIFETIME_SECONDS)
    try:
        seconds = float(lifetime)  # some servers send it as a string
    except (TypeError, ValueError):
        seconds = DEFAULT_LIFETIME_SECONDS
    return answer["access_token"], max(seconds, 0.0)


def _refusal(status: int, body: bytes) -> TokenError:
    """The token endpoint's error (RFC 6749 section 5.2: `error`, `error_description`), by its status: 5xx and
    429 may pass (retryable), 4xx means the credentials or the scope must change."""
    try:
        answer: Any = json.loads(body)
    except ValueError:
        answer = None
    error = answer.get("error") if isinstance(answer, dict) else None
    described = answer.get("error_description") if isinstance(answer, dict) else None
    detail = f"the token endpoint answered {status}" + (f" {error}" if isinstance(error, str) else "")
    if isinstance(described, str):
        detail += f": {described[:300]}"
    code = "TOKEN_UNAVAILABLE" if status >= 500 or status == 429 else "TOKEN_REFUSED"
    return TokenError(code, detail, status=503 if code == "TOKEN_UNAVAILABLE" else status)
