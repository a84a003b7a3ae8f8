"""The errors of the partner interface (spec section 7), independent of any web framework.

The HTTP edge turns an ApiError into an RFC 9457 problem document; the domain only raises them.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class FieldProblem:
    """One problem in a request body, located by a path such as `stores[2].time_zone`."""

    path: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}


@dataclass
class ApiError(Exception):
    status: int
    code: str
    detail: str
    errors: list[FieldProblem] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.status} {self.code}: {self.detail}"


def invalid_payload(errors: list[FieldProblem], detail: str | None = None) -> ApiError:
    count = len(errors)
    return ApiError(
        400,
        "INVALID_PAYLOAD",
        detail or f"The request has {count} problem{'s' if count != 1 else ''}; see errors.",
        errors=errors,
    )


def unauthorized() -> ApiError:
    # One message for missing, unknown and revoked keys: the answer must not tell them apart.
    return ApiError(401, "UNAUTHORIZED", "A valid API key is required in the x-functions-key header.")


# RFC 6750 section 3: a bearer token refused, for whatever reason, is `invalid_token`; a request with no
# credentials at all gets the bare challenge (the service accepts API keys too, so it is not an error).
BEARER_CHALLENGE = "Bearer"
INVALID_TOKEN_CHALLENGE = 'Bearer error="invalid_token"'


def invalid_token() -> ApiError:
    # One message for every refused token (malformed, expired, not yet valid, wrong issuer or audience, bad
    # signature, unknown key or client): like a key, the answer does not say which check failed.
    return ApiError(
        401,
        "UNAUTHORIZED",
        "A valid bearer token is required in the Authorization header (or an API key in x-functions-key).",
        headers={"WWW-Authenticate": INVALID_TOKEN_CHALLENGE},
    )


def credentials_disagree() -> ApiError:
    return ApiError(
        401,
        "UNAUTHORIZED",
        "The API key and the bearer token belong to different partners; send one of them.",
        headers={"WWW-Authenticate": INVALID_TOKEN_CHALLENGE},
    )


def partner_inactive() -> ApiError:
    return ApiError(403, "PARTNER_INACTIVE", "The partner account is not active; contact HQ.")


def store_not_allowed(store_ids: list[str], hidden: int = 0) -> ApiError:
    """`hidden` store codes are counted, not named (they look like personal or card data)."""
    listed = sorted(set(store_ids)) + ([f"{hidden} store_id(s) not shown"] if hidden else [])
    return ApiError(
        403,
        "STORE_NOT_ALLOWED",
        f"Store not registered for this partner: {', '.join(listed)}. HQ registers stores before data is sent.",
    )


def batch_too_large(what: str, limit: int, count: int) -> ApiError:
    return ApiError(400, "BATCH_TOO_LARGE", f"{what} holds {count} items; at most {limit} are allowed per batch.")


def payload_too_large(limit: int) -> ApiError:
    return ApiError(413, "PAYLOAD_TOO_LARGE", f"The request body is larger than {limit} bytes.")


def rate_limited(retry_after_seconds: int) -> ApiError:
    return ApiError(
        429,
        "RATE_LIMITED",
        f"Too many requests for this partner; retry after {retry_after_seconds} seconds.",
        headers={"Retry-After": str(retry_after_seconds)},
    )


def not_found(detail: str) -> ApiError:
    return ApiError(404, "NOT_FOUND", detail)


def method_not_allowed(method: str, allowed: list[str]) -> ApiError:
    return ApiError(
        405,
        "METHOD_NOT_ALLOWED",
        f"{method} is not supported here; use {', '.join(allowed)}.",
        headers={"Allow": ", ".join(allowed)},
    )


# Retry-After of a 503 when the backend did not say how long to wait.
DEFAULT_RETRY_AFTER_SECONDS = 30


def service_unavailable(detail: str, retry_after_seconds: int = DEFAULT_RETRY_AFTER_SECONDS) -> ApiError:
    return ApiError(503, "SERVICE_UNAVAILABLE", detail, headers={"Retry-After": str(retry_after_seconds)})
