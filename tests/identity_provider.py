"""A real OpenID Connect identity provider for the tests, served over HTTP on loopback: its own RSA keys, an
OpenID configuration and a JWKS shaped like Microsoft Entra ID's, a token endpoint for client credentials, and
tokens minted with PyJWT as Entra ID mints them (v2: `azp`; v1: `appid`, issuer `.../{tenant}/`).

Two issuers share one key set, as Entra ID's v1 and v2 issuers of one tenant do:
`{base}/{tenant}/v2.0` and `{base}/{tenant}/`. Every request is counted by path, so that tests can see how
often the service fetched the keys.
"""

from __future__ import annotations

import base64
import json
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote_plus

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

TENANT = "0c1d2e3f-4a5b-4c6d-8e7f-90a1b2c3d4e5"
API_APP_ID = "6b4a3c2d-1e0f-4a9b-8c7d-5e6f7a8b9c0d"  # the service's application (client) id: v2 tokens' aud
API_URI = f"api://{API_APP_ID}"  # its application id URI: v1 tokens' aud, and the scope's prefix
SCOPE = f"{API_URI}/.default"
JWKS_PATH = f"/{TENANT}/discovery/v2.0/keys"
TOKEN_PATH = f"/{TENANT}/oauth2/v2.0/token"


@dataclass
class ProviderKey:
    key_id: str
    private_key: object
    algorithm: str
    published: bool = True

    def jwk(self) -> dict:
        public = self.private_key.public_key()  # type: ignore[attr-defined]
        if self.algorithm.startswith("ES"):
            jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(public))
        else:
            jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(public))
        # As Entra ID publishes them: no "alg", a use, the key id twice (kid and x5t).
        return {**jwk, "use": "sig", "kid": self.key_id, "x5t": self.key_id}


class IdentityProvider:
    def __init__(self) -> None:
        self.keys: list[ProviderKey] = []
        self.secrets: dict[str, str] = {}  # client_id -> client_secret
        self.requests: Counter[str] = Counter()
        self.token_lifetime = 3600
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self.issuer = f"{self.base_url}/{TENANT}/v2.0"
        self.issuer_v1 = f"{self.base_url}/{TENANT}/"
        self.jwks_uri = self.base_url + JWKS_PATH
        self.token_url = self.base_url + TOKEN_PATH
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self.new_key()

    def start(self) -> IdentityProvider:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    # --- keys and clients ------------------------------------------------------------------------------------

    def new_key(self, *, published: bool = True, algorithm: str = "RS256") -> ProviderKey:
        private = ec.generate_private_key(ec.SECP256R1()) if algorithm == "ES256" else _rsa_key()
        key = ProviderKey(uuid.uuid4().hex[:27], private, algorithm, published)
        with self._lock:
            self.keys.append(key)
        return key

    @property
    def signing_key(self) -> ProviderKey:
        """The key tokens are signed with unless told otherwise: the newest published one."""
        return [key for key in self.keys if key.published][-1]

    def register_client(self, client_id: str | None = None) -> tuple[str, str]:
        client_id = client_id or str(uuid.uuid4())
        secret = f"Xy7~{uuid.uuid4().hex}.{uuid.uuid4().hex[:6]}_"  # shaped like an Entra ID client secret
        self.secrets[client_id] = secret
        return client_id, secret

    def jwks(self) -> dict:
        with self._lock:
            return {"keys": [key.jwk() for key in self.keys if key.published]}

    def configuration(self, issuer: str) -> dict:
        return {
            "issuer": issuer,
            "jwks_uri": self.jwks_uri,
            "token_endpoint": self.token_url,
            "token_endpoint_auth_methods_supported": ["client_secret_post", "private_key_jwt", "client_secret_basic"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "response_types_supported": ["code", "id_token", "code id_token", "id_token token"],
            "subject_types_supported": ["pairwise"],
        }

    # --- tokens ----------------------------------------------------------------------------------------------

    def token(
        self,
        client_id: str,
        /,
        *,
        version: str = "2.0",
        key: ProviderKey | None = None,
        key_id: str | None = None,
        lifetime: int | None = None,
        now: float | None = None,
        **claims,
    ) -> str:
        """An access token as Entra ID issues it for client credentials; `claims` override or add claims (None
        removes one), `key_id` names another kid in the header than the signing key's."""
        key = key or self.signing_key
        now = time.time() if now is None else now
        lifetime = self.token_lifetime if lifetime is None else lifetime
        payload = {
            "aud": API_APP_ID if version == "2.0" else API_URI,
            "iss": self.issuer if version == "2.0" else self.issuer_v1,
            "iat": int(now) - 5,
            "nbf": int(now) - 5,
            "exp": int(now) + lifetime,
            ("azp" if version == "2.0" else "appid"): client_id,
            ("azpacr" if version == "2.0" else "appidacr"): "1",
            "idp": self.issuer_v1 if version == "2.0" else None,
            "oid": str(uuid.uuid5(uuid.NAMESPACE_URL, client_id)),
            "sub": str(uuid.uuid5(uuid.NAMESPACE_URL, client_id)),
            "roles": ["Partner.Write"],
            "tid": TENANT,
            "ver": version,
            "uti": uuid.uuid4().hex[:22],
        }
        payload.update(claims)
        payload = {name: value for name, value in payload.items() if value is not None}
        headers = {"typ": "JWT", "kid": key_id or key.key_id, "x5t": key_id or key.key_id}
        return jwt.encode(payload, key.private_key, algorithm=key.algorithm, headers=headers)  # type: ignore[arg-type]

    def rfc9068_token(self, client_id: str, audience: str = API_URI, **claims) -> str:
        """An RFC 9068 JWT access token: `client_id`, no azp or appid, typ at+jwt, aud the requested resource."""
        payload = {
            "aud": audience,
            "client_id": client_id,
            "sub": client_id,
            "jti": uuid.uuid4().hex,
            "azp": None,
            "azpacr": None,
            "idp": None,
            "oid": None,
            "tid": None,
            "ver": None,
            "roles": None,
            "uti": None,
            **claims,
        }
        return self.token(client_id, **payload)

    def _issue(self, authorization: str | None, form: dict[str, str]) -> tuple[int, dict]:
        client_id, secret = _basic(authorization) or (form.get("client_id", ""), form.get("client_secret", ""))
        if form.get("grant_type") != "client_credentials":
            return 400, {"error": "unsupported_grant_type"}
        if not client_id or self.secrets.get(client_id) != secret:
            return 401, {"error": "invalid_client", "error_description": "AADSTS7000215: Invalid client secret."}
        target = form.get("resource") or form.get("audience")
        if target:  # RFC 8707 (or `audience`): an RFC 9068 access token for that audience, as generic providers issue
            return 200, {
                "token_type": "Bearer",
                "expires_in": self.token_lifetime,
                "access_token": self.rfc9068_token(client_id, target),
            }
        if form.get("scope") != SCOPE:
            return 400, {"error": "invalid_scope", "error_description": "AADSTS70011: The provided scope is invalid."}
        token = self.token(client_id)
        return 200, {"token_type": "Bearer", "expires_in": self.token_lifetime, "access_token": token}


def _rsa_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _basic(authorization: str | None) -> tuple[str, str] | None:
    if not authorization or not authorization.lower().startswith("basic "):
        return None
    user, _, password = base64.b64decode(authorization[6:]).decode().partition(":")
    return unquote_plus(user), unquote_plus(password)


def _handler(provider: IdentityProvider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            provider.requests[path] += 1
            if path == JWKS_PATH:
                self._answer(200, provider.jwks())
            elif path == f"/{TENANT}/v2.0/.well-known/openid-configuration":
                self._answer(200, provider.configuration(provider.issuer))
            elif path == f"/{TENANT}/.well-known/openid-configuration":
                self._answer(200, provider.configuration(provider.issuer_v1))
            else:
                self._answer(404, {"error": "not_found"})

        def do_POST(self) -> None:
            provider.requests[self.path] += 1
            length = int(self.headers.get("content-length") or 0)
            form = {name: values[0] for name, values in parse_qs(self.rfile.read(length).decode()).items()}
            if self.path != TOKEN_PATH:
                self._answer(404, {"error": "not_found"})
                return
            self._answer(*provider._issue(self.headers.get("authorization"), form))

        def _answer(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args) -> None:
            pass

    return Handler


@pytest.fixture(scope="session")
def identity_provider():
    """One provider per test process; tests that change its keys (rotation) start their own."""
    provider = IdentityProvider().start()
    yield provider
    provider.stop()


def oauth_settings(provider: IdentityProvider, **more: str) -> dict[str, str]:
    """The settings of a host that trusts `provider`'s two issuers (v2 and v1) for the service's audiences."""
    return {
        "OAUTH_ISSUER": f"{provider.issuer},{provider.issuer_v1}",
        "OAUTH_AUDIENCE": f"{API_APP_ID},{API_URI}",
        **more,
    }
