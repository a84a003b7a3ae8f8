"""Who is calling, by OAuth 2.0 bearer token (RFC 6750) beside the API keys (spec 5.8 and 9).

A partner's application gets an access token from the identity provider HQ configures (client credentials,
RFC 6749 section 4.4; Microsoft Entra ID first) and sends `Authorization: Bearer <token>`. The token is a JWT:
its signature is checked against the issuer's published keys (the SigningKeys port), then its issuer,
audience, expiry and not-before (with a small clock skew); its client (`client_id` in RFC 9068 tokens, `azp` in
Entra ID v2 tokens, `appid` in v1 ones; they must agree when several are present) speaks for the partner HQ
mapped it to for that issuer (`hq partner client add`).
Every refusal is the same 401 (core.errors.invalid_token); the reason is kept for the request log only.
A token is never logged, nor any part of it. PyJWT (and cryptography) are imported when the first token is
checked: about 90 ms of a cold start that an instance serving API keys only never pays.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from core import errors
from core.clients import ClientOwner
from core.errors import ApiError
from core.ports import Admission, SigningKeys

CLOCK_SKEW_SECONDS = 60
# The claims that name the token's client (decision 0102): `client_id` (RFC 9068, the standard JWT access
# token), `azp` (Entra ID v2, OpenID Connect), `appid` (Entra ID v1). A provider may write more than one (Keycloak:
# azp and client_id); they must then agree, else the token is refused ("client claims differ").
CLIENT_CLAIMS = ("client_id", "azp", "appid")
# Entra ID's access tokens are 1 to 3 KB; a longer value is refused before anything is decoded.
MAX_TOKEN_CHARS = 16_384
BEARER = "bearer"


class TokenRefused(ApiError):
    """The 401 of a refused token, with why and, once the signature is verified, its client: for the request
    log (HQ sees which client it has not mapped yet), never for the answer."""

    def __init__(self, reason: str, client_id: str | None = None) -> None:
        refusal = errors.invalid_token()
        super().__init__(refusal.status, refusal.code, refusal.detail, headers=refusal.headers)
        self.reason = reason
        self.client_id = client_id


@dataclass(frozen=True)
class TokenClient:
    """A verified token's issuer and client."""

    issuer: str
    client_id: str


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header ("" when the token is missing); None without the
    header or for another scheme (the scheme is case-insensitive, RFC 9110 section 11.1)."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    return token.strip() if scheme.lower() == BEARER else None


class BearerTokens:
    """Checks access tokens of the trusted `issuers` for one of `audiences`, with keys from `keys`."""

    def __init__(
        self,
        issuers: Iterable[str],
        audiences: Iterable[str],
        keys: SigningKeys,
        clock_skew_seconds: int = CLOCK_SKEW_SECONDS,
    ) -> None:
        self.issuers = frozenset(issuers)
        self.audiences = sorted(set(audiences))
        self.keys = keys
        self.clock_skew_seconds = clock_skew_seconds

    def client_of(self, token: str) -> TokenClient:
        """The token's issuer and client when every check passes; TokenRefused otherwise."""
        import jwt

        if not token or len(token) > MAX_TOKEN_CHARS:
            raise TokenRefused("malformed")
        try:
            header = jwt.get_unverified_header(token)
            issuer = jwt.decode(token, options={"verify_signature": False}).get("iss")
        except jwt.PyJWTError:
            raise TokenRefused("malformed") from None
        if not isinstance(issuer, str) or issuer not in self.issuers:
            raise TokenRefused("issuer")
        key = self.keys.signing_key(issuer, header.get("kid"))
        if key is None:
            raise TokenRefused("unknown key")
        try:
            claims = jwt.decode(
                token,
                key.public_key,
                algorithms=list(key.algorithms),
                audience=self.audiences,
                issuer=issuer,
                leeway=self.clock_skew_seconds,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWTError as refused:
            raise TokenRefused(_reason(refused)) from None
        named = {claims[name] for name in CLIENT_CLAIMS if isinstance(claims.get(name), str) and claims[name]}
        if not named:
            raise TokenRefused("no client")
        if len(named) > 1:
            raise TokenRefused("client claims differ")
        client_id = named.pop()
        return TokenClient(issuer, client_id)


def _reason(refused: Exception) -> str:
    import jwt

    reasons = (
        (jwt.ExpiredSignatureError, "expired"),
        (jwt.ImmatureSignatureError, "not yet valid"),
        (jwt.InvalidAudienceError, "audience"),
        (jwt.InvalidIssuerError, "issuer"),
        (jwt.InvalidSignatureError, "signature"),
        (jwt.InvalidAlgorithmError, "algorithm"),
        (jwt.MissingRequiredClaimError, "claims"),
    )
    return next((reason for kind, reason in reasons if isinstance(refused, kind)), "malformed")


def authenticate_token(storage: Admission, tokens: BearerTokens | None, token: str) -> ClientOwner:
    """The partner the token's client speaks for; 401 (invalid_token) for a refused token or a client HQ has
    not mapped (and for any token while OAuth is not configured), 403 PARTNER_INACTIVE for an inactive
    partner. Only a token that passed every check costs a storage read."""
    if tokens is None:
        raise TokenRefused("not configured")
    client = tokens.client_of(token)
    owner = storage.find_client(client.client_id, client.issuer)
    if owner is None:
        raise TokenRefused("unknown client", client.client_id)
    if not owner.partner.active:
        raise errors.partner_inactive()
    return owner
