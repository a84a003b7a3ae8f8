"""The issuers' signing keys (backends/openid_keys.py): what a JWKS yields, when keys are fetched again and how
that is bounded, and which issuer URLs are allowed. The documents are served by a function standing in for
HTTP here (the tests over HTTP with a real provider are tests/e2e/test_bearer_tokens.py); the clock is a
counter, so that the bounds are checked without waiting."""

from __future__ import annotations

import json

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from backends.openid_keys import (
    RSA_ALGORITHMS,
    UNKNOWN_KEY_REFRESH_SECONDS,
    KeysUnreadable,
    OpenIdSigningKeys,
    signing_keys_of,
)
from core.ports import BackendUnavailable, IdentityProviderUnavailable
from core.settings import Settings, allowed_issuer_url

ISSUER = "https://login.microsoftonline.com/0c1d2e3f-4a5b-4c6d-8e7f-90a1b2c3d4e5/v2.0"
JWKS_URI = "https://login.microsoftonline.com/0c1d2e3f-4a5b-4c6d-8e7f-90a1b2c3d4e5/discovery/v2.0/keys"


def rsa_jwk(kid: str, **extra) -> dict:
    public = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key()
    return {**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(public)), "kid": kid, "use": "sig", **extra}


class Provider:
    """The two documents, as functions of what the test puts in; counts fetches; fails on demand."""

    def __init__(self, *keys: dict) -> None:
        self.keys = list(keys)
        self.fetched: list[str] = []
        self.down = False
        self.issuer = ISSUER

    def __call__(self, url: str) -> dict:
        self.fetched.append(url)
        if self.down:
            raise KeysUnreadable("URLError")
        if url == ISSUER + "/.well-known/openid-configuration":
            return {"issuer": self.issuer, "jwks_uri": JWKS_URI}
        assert url == JWKS_URI
        return {"keys": self.keys}

    @property
    def jwks_fetches(self) -> int:
        return self.fetched.count(JWKS_URI)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def keys_of(provider: Provider, clock: Clock, refresh: int = 300) -> OpenIdSigningKeys:
    return OpenIdSigningKeys([ISSUER], refresh, clock=clock, fetch=provider)


def test_a_jwks_yields_its_asymmetric_signature_keys_only():
    ec_public = ec.generate_private_key(ec.SECP384R1()).public_key()
    ed_public = ed25519.Ed25519PrivateKey.generate().public_key()
    jwks = {
        "keys": [
            rsa_jwk("entra"),  # as Entra ID publishes: no alg
            rsa_jwk("ps", alg="PS256"),
            {**json.loads(jwt.algorithms.ECAlgorithm.to_jwk(ec_public)), "kid": "ec"},
            {**json.loads(jwt.algorithms.OKPAlgorithm.to_jwk(ed_public)), "kid": "ed"},
            rsa_jwk("encryption", use="enc"),
            rsa_jwk("alg mismatch", alg="ES256"),
            {"kty": "oct", "kid": "symmetric", "k": "c2VjcmV0"},  # public, so never a verifying key
            {"kty": "RSA", "kid": "broken", "n": "AQAB"},
            "not an object",
            rsa_jwk("entra"),  # a duplicate key id: the first one counts
        ]
    }
    keys = signing_keys_of(jwks)
    assert {kid: key.algorithms for kid, key in keys.items()} == {
        "entra": RSA_ALGORITHMS,
        "ps": ("PS256",),
        "ec": ("ES384",),
        "ed": ("EdDSA",),
    }
    assert keys["entra"].public_key.public_numbers().n == jwt.PyJWK(jwks["keys"][0]).key.public_numbers().n
    assert signing_keys_of({}) == {} and signing_keys_of({"keys": None}) == {}


def test_keys_are_fetched_once_then_served_from_memory():
    provider, clock = Provider(rsa_jwk("k1")), Clock()
    keys = keys_of(provider, clock)
    for _ in range(50):
        assert keys.signing_key(ISSUER, "k1").key_id == "k1"
    assert provider.fetched == [ISSUER + "/.well-known/openid-configuration", JWKS_URI]
    assert keys.signing_key("https://another.example/issuer", "k1") is None  # not trusted: nothing fetched
    assert provider.jwks_fetches == 1


def test_an_unknown_key_id_fetches_again_at_most_once_per_interval():
    provider, clock = Provider(rsa_jwk("k1")), Clock()
    keys = keys_of(provider, clock, refresh=300)
    keys.signing_key(ISSUER, "k1")
    for forged in range(1000):  # a flood of forged key ids: no fetch within the interval
        assert keys.signing_key(ISSUER, f"forged-{forged}") is None
    assert provider.jwks_fetches == 1
    provider.keys.append(rsa_jwk("k2"))  # the provider rotates: a new key is published
    assert keys.signing_key(ISSUER, "k2") is None  # not yet: the last fetch is too recent
    clock.now += 300
    assert keys.signing_key(ISSUER, "k2").key_id == "k2"
    assert provider.jwks_fetches == 2
    assert keys.signing_key(ISSUER, "forged-again") is None and provider.jwks_fetches == 2


def test_keys_are_fetched_again_after_an_hour_and_kept_when_the_provider_is_down():
    provider, clock = Provider(rsa_jwk("k1")), Clock()
    keys = keys_of(provider, clock)
    keys.signing_key(ISSUER, "k1")
    clock.now += 3599
    assert keys.signing_key(ISSUER, "k1") is not None and provider.jwks_fetches == 1
    clock.now += 1
    provider.down = True
    assert keys.signing_key(ISSUER, "k1").key_id == "k1"  # the keys held still serve
    attempts = len(provider.fetched)
    assert keys.signing_key(ISSUER, "k1").key_id == "k1"
    assert len(provider.fetched) == attempts  # no fetch per request while the provider is down
    provider.down = False
    provider.keys = [rsa_jwk("k3")]  # k1 withdrawn meanwhile
    clock.now += 300
    assert keys.signing_key(ISSUER, "k3").key_id == "k3"
    assert keys.signing_key(ISSUER, "k1") is None


def test_without_any_keys_a_token_cannot_be_checked_and_retries_are_spaced():
    provider, clock = Provider(rsa_jwk("k1")), Clock()
    provider.down = True
    keys = keys_of(provider, clock)
    for _ in range(20):
        with pytest.raises(BackendUnavailable):
            keys.signing_key(ISSUER, "k1")
    assert len(provider.fetched) == 1
    clock.now += 4
    with pytest.raises(IdentityProviderUnavailable) as down:  # the 503 says the provider, and the real wait
        keys.signing_key(ISSUER, "k1")
    assert down.value.retry_after_seconds == 6
    clock.now += 6
    provider.down = False
    assert keys.signing_key(ISSUER, "k1").key_id == "k1"


def test_a_configuration_naming_another_issuer_gives_no_keys():
    provider, clock = Provider(rsa_jwk("k1")), Clock()
    provider.issuer = "https://login.microsoftonline.com/{tenantid}/v2.0"  # the multi-tenant template
    with pytest.raises(BackendUnavailable):
        keys_of(provider, clock).signing_key(ISSUER, "k1")
    assert JWKS_URI not in provider.fetched


def test_a_token_without_a_key_id_uses_the_issuers_only_key():
    provider, clock = Provider(rsa_jwk("k1")), Clock()
    keys = keys_of(provider, clock)
    assert keys.signing_key(ISSUER, None).key_id == "k1"
    provider.keys.append(rsa_jwk("k2"))
    clock.now += 300
    assert keys.signing_key(ISSUER, "k2") is not None
    assert keys.signing_key(ISSUER, None) is None  # which one? none


def test_issuers_must_be_https_except_on_loopback(monkeypatch):
    for allowed in (
        ISSUER,
        "https://sts.windows.net/0c1d2e3f-4a5b-4c6d-8e7f-90a1b2c3d4e5/",
        "https://idp.example.com:8443/realms/pos",
        "http://127.0.0.1:8000/tenant/v2.0",
        "http://127.8.9.10/tenant",
        "http://[::1]:8080/x",
        "http://localhost/realms/pos",
    ):
        assert allowed_issuer_url(allowed), allowed
    for refused in (
        "http://login.example.com/tenant/v2.0",
        "http://10.0.0.5/tenant",
        "http://127.0.0.1.example.com/x",
        "ftp://idp.example.com/x",
        "https:///x",
        "https://idp.example.com/x?tenant=1",
        "login.microsoftonline.com/tenant/v2.0",
    ):
        assert not allowed_issuer_url(refused), refused

    monkeypatch.setenv("OAUTH_ISSUER", f"{ISSUER}, http://idp.example.com/realms/pos")
    monkeypatch.setenv("OAUTH_AUDIENCE", "api://pos")
    with pytest.raises(ValueError, match="OAUTH_ISSUER"):
        Settings.from_env()
    monkeypatch.setenv("OAUTH_ISSUER", f"{ISSUER} , https://sts.windows.net/tid/")
    settings = Settings.from_env()
    assert settings.oauth_issuers == (ISSUER, "https://sts.windows.net/tid/")
    assert settings.oauth_audiences == ("api://pos",)
    monkeypatch.delenv("OAUTH_AUDIENCE")
    with pytest.raises(ValueError, match="OAUTH_AUDIENCE is required"):
        Settings.from_env()
    monkeypatch.delenv("OAUTH_ISSUER")
    assert Settings.from_env().oauth_issuers == ()


def test_an_unknown_key_id_is_fetched_again_after_30_seconds_by_default():
    provider, clock = Provider(rsa_jwk("k1")), Clock()
    keys = OpenIdSigningKeys([ISSUER], clock=clock, fetch=provider)
    assert keys.signing_key(ISSUER, "k1") is not None
    provider.keys.append(rsa_jwk("k2"))  # published and signed with at once
    clock.now += 1
    assert keys.signing_key(ISSUER, "k2") is None  # refused: the keys were read a second ago...
    fetched = len(provider.fetched)
    for _ in range(50):  # ...and forged key ids cost nothing more until the floor has passed
        assert keys.signing_key(ISSUER, "forged") is None
    assert len(provider.fetched) == fetched
    clock.now += UNKNOWN_KEY_REFRESH_SECONDS
    assert keys.signing_key(ISSUER, "k2") is not None
