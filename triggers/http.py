"""Shared HTTP glue for the thin handlers: request ids, keys, rate limit, bodies, problem documents.

Every handler is `handle(req, action)`, which admits the request (`admit`: key or token, rate limit) and
answers it: the action gets a PartnerCall (the backend, the authenticated
partner, the body) and returns (status, body); `handle(..., authenticated=False)` gives it a Call, which
has no partner. Errors become RFC 9457 problem documents with the
specification's `code`; nothing a partner sent (key, member_id, card number) is ever echoed, nor
logged: a failure is logged by exception type, causes and frames, never by its message.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal, TypedDict, cast, overload
from urllib.parse import unquote

import azure.functions as func
import orjson

from backends.factory import Backend
from core import errors
from core.errors import ApiError
from core.ports import BackendUnavailable, IdentityProviderUnavailable, Storage
from core.records import KeyOwner, Partner
from ingest import access
from ingest.batches import BatchOutcome
from ingest.bearer_tokens import TokenRefused, authenticate_token, bearer_token
from ingest.data_protection import redacted
from triggers import auth_failures, telemetry
from triggers.composition import current_backend, current_bearer_tokens

MAX_BODY_BYTES = 5 * 1024 * 1024
REQUEST_ID_HEADER = "x-request-id"
VALIDATE_ONLY = "validate_only"  # the query parameter of the partner writes (decision 0022)
log = logging.getLogger("pos.api")


@dataclass
class Call:
    """What a handler's action gets: the request, the backend and the request's id."""

    req: func.HttpRequest
    backend: Backend
    request_id: str

    @property
    def storage(self) -> Storage:
        return self.backend.storage

    def route(self, name: str) -> str:
        return cast(str, self.req.route_params.get(name, ""))  # azure-functions types route_params loosely

    def json_body(self) -> bytes:
        """The raw body of a write: at most 5 MB, sent as application/json."""
        length = self.req.headers.get("content-length")
        if length and length.isdigit() and int(length) > MAX_BODY_BYTES:
            raise errors.payload_too_large(MAX_BODY_BYTES)
        body = self.req.get_body()
        if len(body) > MAX_BODY_BYTES:
            raise errors.payload_too_large(MAX_BODY_BYTES)
        media_type = (self.req.headers.get("content-type") or "").split(";")[0].strip().lower()
        if media_type != "application/json":
            raise errors.invalid_payload(
                [errors.FieldProblem("$", "send the body as Content-Type: application/json")],
                "The request body must be JSON (Content-Type: application/json).",
            )
        if not body:
            raise errors.invalid_payload([errors.FieldProblem("$", "the request body is empty")])
        return body

    def validate_only(self) -> bool:
        """The write's `validate_only` query parameter: true checks the request without storing it."""
        value = self.req.params.get(VALIDATE_ONLY)
        if value is None or value == "false":
            return False
        if value == "true":
            return True
        raise errors.invalid_payload(
            [errors.FieldProblem(VALIDATE_ONLY, f"the query parameter {VALIDATE_ONLY} must be true or false")],
            f"The query parameter {VALIDATE_ONLY} must be true or false.",
        )


@dataclass
class PartnerCall(Call):
    """A partner's call: its API key was checked, counted against its quota, and names `partner`."""

    partner: Partner


Result = tuple[int, object] | tuple[int, object, dict[str, str]]  # (status, body[, headers])


def json_response(
    status: int, body: object, headers: dict[str, str] | None = None, *, media_type: str = "application/json"
) -> func.HttpResponse:
    return func.HttpResponse(orjson.dumps(body), status_code=status, headers=headers or {}, mimetype=media_type)


_TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    413: "Content Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


def problem_response(error: ApiError, request_id: str) -> func.HttpResponse:
    body = {
        "type": f"https://hq.example/problems/{error.code.lower().replace('_', '-')}",
        "title": _TITLES.get(error.status, "Error"),
        "status": error.status,
        "code": error.code,
        "detail": error.detail,
        "request_id": request_id,
    }
    if error.errors or error.code == "INVALID_PAYLOAD":
        body["errors"] = [problem.as_dict() for problem in error.errors]
    headers = {**error.headers, "x-request-id": request_id}
    return json_response(error.status, body, headers, media_type="application/problem+json")


def request_id_for(given: str | None) -> str:
    """The caller's x-request-id if it is short and plain (safe to log and echo), else a new one."""
    if given and len(given) <= 64 and all(c.isascii() and (c.isalnum() or c in "-_.") for c in given):
        return given
    return uuid.uuid4().hex


def _request_id(req: func.HttpRequest) -> str:
    return request_id_for(req.headers.get(REQUEST_ID_HEADER))


@overload
def handle(
    req: func.HttpRequest,
    action: Callable[[PartnerCall], Result],
    context: func.Context | None = None,
    *,
    authenticated: Literal[True] = True,
) -> func.HttpResponse: ...
@overload
def handle(
    req: func.HttpRequest,
    action: Callable[[Call], Result],
    context: func.Context | None = None,
    *,
    authenticated: Literal[False],
) -> func.HttpResponse: ...
def handle(
    req: func.HttpRequest,
    action: Callable[[Any], Result],  # as the overloads say: a PartnerCall when authenticated, else a Call
    context: func.Context | None = None,
    *,
    authenticated: bool = True,
) -> func.HttpResponse:
    """Admit the request (`admit`), answer it with its action, or with the problem document of what failed;
    then the partner's quota headers and the request's log line (`_answered`)."""
    started = time.perf_counter()
    caller = Caller(_request_id(req))
    body: object = None
    try:
        call = admit(req, caller, authenticated)
        status, body, *extra = action(call)
        response = json_response(status, body, {**(extra[0] if extra else {}), "x-request-id": caller.request_id})
    except Exception as error:  # every failure is answered, as a problem document (`_failed`)
        response = _failed(error, req, context, caller)
    return _answered(req, context, caller, response, body, started)


@dataclass
class Caller:
    """What is known of a request's caller as it is admitted: its request id, then (authenticated) its partner,
    key or token client and quota, kept even when admission refuses it, for its answer's headers and its log."""

    request_id: str
    partner_id: str | None = None
    key_id: str | None = None
    client_id: str | None = None
    token_refused: str | None = None
    quota: access.Quota | None = None
    error_code: str | None = None


def admit(req: func.HttpRequest, caller: Caller, authenticated: bool) -> Call:
    """The call an action gets: unauthenticated, a Call; else the partner's, once its API key or bearer token
    is checked and the request counted against its rate limit (429 beyond it). The body is read by the
    action (`Call.json_body`: at most 5 MB of JSON)."""
    if not authenticated:
        return Call(req, current_backend(), caller.request_id)
    # Before the backend is even opened: a flood of bad keys from one address costs no storage read.
    address, presented = auth_failures.client_address(req.headers), req.headers.get("x-functions-key")
    token = bearer_token(req.headers.get("authorization"))
    auth_failures.limiter().check(address, presented, token)
    backend = current_backend()
    owner: KeyOwner | None
    if token is None:  # the API key alone, as before bearer tokens: nothing more is read or built
        owner = _authenticate(backend, address, presented)
        partner = owner.partner
    else:
        partner, owner, caller.client_id = _authenticate_token(backend, address, presented, token)
    caller.partner_id, caller.key_id = partner.partner_id, None if owner is None else owner.key_id
    limit = access.limit_of(partner, backend.settings.rate_limit_per_minute)
    caller.quota = access.count_request(backend.storage, partner.partner_id, limit)
    if caller.quota is not None and caller.quota.exceeded:
        raise errors.rate_limited(caller.quota.reset_seconds)
    if owner is not None:
        access.note_key_use(backend.storage, owner)
    return PartnerCall(req, backend, caller.request_id, partner)


def _failed(error: Exception, req: func.HttpRequest, context: func.Context | None, caller: Caller) -> func.HttpResponse:
    """The problem document of a failure: the ApiError's own, a 503 for a backend that cannot serve now, else
    a 500 (the last two logged by type, causes and frames only: telemetry.exception_fields)."""
    if isinstance(error, ApiError):
        caller.error_code = error.code
        if isinstance(error, TokenRefused):
            caller.token_refused, caller.client_id = error.reason, error.client_id
        return problem_response(_challenged(error), caller.request_id)
    fields = _error_fields(req, context, caller.request_id)
    if isinstance(error, BackendUnavailable):
        telemetry.log_exception(log, "backend unavailable", error, **fields)
        caller.error_code = "SERVICE_UNAVAILABLE"
        return problem_response(unavailable_problem(error), caller.request_id)
    telemetry.log_exception(log, "unexpected error", error, **fields)
    caller.error_code = "INTERNAL_ERROR"
    return problem_response(
        ApiError(
            500,
            "INTERNAL_ERROR",
            "Unexpected error; nothing is lost if you retry the same request. Quote the request_id to HQ support.",
        ),
        caller.request_id,
    )


def _answered(
    req: func.HttpRequest,
    context: func.Context | None,
    caller: Caller,
    response: func.HttpResponse,
    body: object,
    started: float,
) -> func.HttpResponse:
    """The response with the partner's quota (every answer once the partner is known and counted, 429
    included), once the request is logged."""
    if caller.quota is not None:
        response.headers.update(rate_limit_headers(caller.quota))
    telemetry.record_request(
        function=context.function_name if context else "",
        invocation_id=context.invocation_id if context else "",
        request_id=caller.request_id,
        method=req.method,
        path=_path_of(req.url),
        status=response.status_code,
        duration_ms=(time.perf_counter() - started) * 1000,
        partner_id=caller.partner_id,
        key_id=caller.key_id,
        client_id=caller.client_id,
        token_refused=caller.token_refused,
        body=body,
        error_code=caller.error_code,
    )
    return response


def unavailable_problem(error: BackendUnavailable) -> ApiError:
    """The 503 of a backend that cannot serve us now. Throttled (Cosmos DB 429): Retry-After is the wait
    the database asked for; otherwise the default. Either way the batch was not accepted (its marker is
    written last), and the retry of the same request completes it."""
    if isinstance(error, IdentityProviderUnavailable):
        return errors.service_unavailable(
            "The identity provider's signing keys cannot be read now, so bearer tokens cannot be checked; nothing "
            "was stored. Retry after Retry-After seconds (an API key, if you have one, works meanwhile).",
            error.retry_after_seconds or errors.DEFAULT_RETRY_AFTER_SECONDS,
        )
    if error.retry_after_seconds is None:
        return errors.service_unavailable(
            "Storage is temporarily unavailable; nothing was stored. Retry the same request later."
        )
    return errors.service_unavailable(
        "Storage is busy; the request was not completed. Retry the same request after Retry-After seconds.",
        error.retry_after_seconds,
    )


RATE_LIMIT_POLICY = "default"


def rate_limit_headers(quota: access.Quota) -> dict[str, str]:
    """The partner's quota in the structured-field form of draft-ietf-httpapi-ratelimit-headers-11:
    RateLimit-Policy gives the quota `q` per window of `w` seconds, RateLimit what `r` is left of it and
    the seconds `t` until the window ends."""
    return {
        "RateLimit-Policy": f'"{RATE_LIMIT_POLICY}";q={quota.limit};w={access.RATE_WINDOW_SECONDS}',
        "RateLimit": f'"{RATE_LIMIT_POLICY}";r={quota.remaining};t={quota.reset_seconds}',
    }


def _authenticate(backend: Backend, address: str, presented: str | None) -> KeyOwner:
    """The key's owner; a 401 counts against the client address's failed authentications."""
    try:
        owner = access.authenticate(backend.storage, presented)
    except ApiError as error:
        if error.status == 401:
            auth_failures.limiter().failed(address, presented)
        raise
    auth_failures.limiter().accepted(owner.key_hash)
    return owner


def _authenticate_token(
    backend: Backend, address: str, presented: str | None, token: str
) -> tuple[Partner, KeyOwner | None, str | None]:
    """The partner, the key's owner (when a key is sent) and the token's client id (None while OAuth is not
    configured and a key is sent: the key alone decides, as before). The token's client must be mapped to a
    partner, and a key sent beside it must be that partner's. A 401 counts against the client address's
    failed authentications."""
    tokens = current_bearer_tokens()
    if tokens is None and presented:
        by_key = _authenticate(backend, address, presented)
        return by_key.partner, by_key, None
    try:
        client = authenticate_token(backend.storage, tokens, token)
        owner = access.authenticate(backend.storage, presented) if presented else None
        if owner is not None and owner.partner.partner_id != client.partner.partner_id:
            raise errors.credentials_disagree()
    except ApiError as error:
        if error.status == 401:
            auth_failures.limiter().failed(address, presented, token)
        raise
    auth_failures.limiter().accepted(None if owner is None else owner.key_hash, access.hash_key(token))
    return client.partner, owner, client.client_id


def _challenged(error: ApiError) -> ApiError:
    """A 401 carries WWW-Authenticate (RFC 9110 section 11.6.1): a refused token says invalid_token
    (RFC 6750 section 3.1); any other 401, while bearer tokens are accepted, the bare Bearer challenge."""
    if error.status != 401 or "WWW-Authenticate" in error.headers or current_bearer_tokens() is None:
        return error
    return replace(error, headers={**error.headers, "WWW-Authenticate": errors.BEARER_CHALLENGE})


class ErrorFields(TypedDict):
    event: str
    request_id: str
    function: str
    invocation_id: str
    method: str
    path: str


def _error_fields(req: func.HttpRequest, context: func.Context | None, request_id: str) -> ErrorFields:
    """What support needs to find a failed request: the request id the partner was given, and where."""
    return {
        "event": "http_error",
        "request_id": request_id,
        "function": context.function_name if context else "",
        "invocation_id": context.invocation_id if context else "",
        "method": req.method,
        "path": _path_of(req.url),
    }


def _path_of(url: str) -> str:
    return loggable_path(url.split("?", 1)[0].split("://", 1)[-1].partition("/")[2])


def loggable_path(path: str) -> str:
    """The path of a request as logged: never its query string (the API reads only validate_only from it,
    and it could carry anything), decoded, and without card numbers or e-mail addresses a partner may have put in it."""
    return redacted(unquote(path, errors="replace"))


def batch_result(outcome: BatchOutcome) -> Result:
    headers = {"Idempotent-Replayed": "true"} if outcome.replayed else {}
    return outcome.http_status, outcome.as_dict(), headers
