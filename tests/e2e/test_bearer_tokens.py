"""OAuth 2.0 bearer tokens beside the API keys (decision 0038; spec 5.8 and 9), over real HTTP on the local host,
against a real identity provider on loopback (tests/identity_provider.py: its own RSA keys, OpenID configuration
and JWKS, tokens minted with PyJWT as Microsoft Entra ID mints them, v1 and v2)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
import uuid

import pytest
import requests
from cryptography.hazmat.primitives import serialization

from tests.conftest import make_partner, start_host
from tests.e2e.test_auth import ENDPOINTS
from tests.e2e.test_bad_keys import bad_key, get_from
from tests.identity_provider import API_URI, JWKS_PATH, IdentityProvider, oauth_settings
from tests.payloads import problem_of, store, stores_batch

PATH = "mappings/transaction-types"
REFRESH_SECONDS = 1  # the hosts here may fetch an issuer's keys again one second after the last fetch
INVALID_TOKEN = 'Bearer error="invalid_token"'


@pytest.fixture(scope="module")
def oauth_host(tmp_path_factory, identity_provider):
    running = start_host(
        tmp_path_factory.mktemp("oauth"),
        **oauth_settings(identity_provider, OAUTH_KEYS_REFRESH_SECONDS=str(REFRESH_SECONDS)),
        RATE_LIMIT_PER_MINUTE="1000",
    )
    yield running
    running.stop()


def token_partner(host, provider: IdentityProvider, stores=("S1",)):
    """A partner with a key (partner.key) and an OAuth client mapped to it by `hq partner client add`."""
    partner = make_partner(host, tuple(stores))
    client_id, _ = provider.register_client()
    issuers = ("--issuer", provider.issuer, "--issuer", provider.issuer_v1)  # Entra ID's v2 and v1: two issuers
    added = host.hq_in_process("partner", "client", "add", partner.partner_id, client_id, *issuers)
    assert added.returncode == 0, added.stderr
    partner.client_id = client_id
    return partner


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def get(host, headers: dict[str, str], path: str = PATH) -> requests.Response:
    return requests.get(host.url(path), headers=headers, timeout=30)


def assert_invalid_token(response: requests.Response) -> dict:
    problem = problem_of(response, 401, "UNAUTHORIZED")
    assert response.headers["WWW-Authenticate"] == INVALID_TOKEN
    assert "RateLimit" not in response.headers
    return {name: value for name, value in problem.items() if name != "request_id"}


# --- accepted ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda endpoint: f"{endpoint[0]} {endpoint[1]}")
def test_a_token_of_a_mapped_client_opens_every_endpoint(oauth_host, identity_provider, endpoint):
    partner = token_partner(oauth_host, identity_provider)
    method, path, make_body = endpoint
    headers = bearer(identity_provider.token(partner.client_id))
    body = None if make_body is None else make_body()
    response = requests.request(method, oauth_host.url(path), json=body, headers=headers, timeout=30)
    assert response.status_code in (200, 202), response.text
    assert response.headers["RateLimit-Policy"] == '"default";q=1000;w=60'


def test_entra_id_v1_and_v2_tokens_speak_for_the_clients_partner(oauth_host, identity_provider):
    partner, other = token_partner(oauth_host, identity_provider), token_partner(oauth_host, identity_provider)
    for version in ("2.0", "1.0"):  # v2: azp, aud the API's app id; v1: appid, aud its api:// URI, issuer .../tid/
        for owner in (partner, other):
            answer = get(oauth_host, bearer(identity_provider.token(owner.client_id, version=version)))
            assert answer.status_code == 200, answer.text
            assert answer.json()["partner_id"] == owner.partner_id
    # The scheme is case-insensitive (RFC 9110 section 11.1); the token is what follows it.
    token = identity_provider.token(partner.client_id)
    assert get(oauth_host, {"Authorization": f"bearer  {token}"}).json()["partner_id"] == partner.partner_id


def test_an_rfc_9068_token_speaks_by_client_id_and_two_client_claims_must_agree(oauth_host, identity_provider):
    partner, other = token_partner(oauth_host, identity_provider), token_partner(oauth_host, identity_provider)
    standard = identity_provider.rfc9068_token(partner.client_id)  # client_id, no azp (RFC 9068 section 2.2)
    assert get(oauth_host, bearer(standard)).json()["partner_id"] == partner.partner_id
    both = identity_provider.token(partner.client_id, client_id=partner.client_id)  # Keycloak writes both
    assert get(oauth_host, bearer(both)).json()["partner_id"] == partner.partner_id
    assert_invalid_token(get(oauth_host, bearer(identity_provider.token(partner.client_id, client_id=other.client_id))))
    assert "client claims differ" in oauth_host.log()


def test_a_provider_down_is_a_503_that_says_so_with_the_wait_used(tmp_path):
    provider = IdentityProvider().start()
    provider.stop()  # gone: its address refuses connections
    host = start_host(tmp_path, **oauth_settings(provider))
    try:
        partner = token_partner(host, provider)
        answers = [get(host, bearer(provider.token(partner.client_id))) for _ in range(2)]
        for answer in answers:
            problem = problem_of(answer, 503, "SERVICE_UNAVAILABLE")
            assert "identity provider" in problem["detail"] and "torage" not in problem["detail"]
            assert 1 <= int(answer.headers["Retry-After"]) <= 10  # the provider is tried again after 10 s
        assert get(host, partner.headers()).status_code == 200  # the key still works
    finally:
        host.stop()


def test_a_token_within_the_clock_skew_is_accepted(oauth_host, identity_provider):
    partner = token_partner(oauth_host, identity_provider)
    now = int(time.time())
    for claims in ({"exp": now - 20}, {"nbf": now + 20, "iat": now + 20}):
        assert get(oauth_host, bearer(identity_provider.token(partner.client_id, **claims))).status_code == 200


# --- refused ----------------------------------------------------------------------------------------------


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unsigned(provider: IdentityProvider, client_id: str) -> str:
    """alg "none": a token without a signature."""
    payload = json.loads(base64.urlsafe_b64decode(provider.token(client_id).split(".")[1] + "=="))
    return f"{_b64(json.dumps({'alg': 'none', 'typ': 'JWT'}).encode())}.{_b64(json.dumps(payload).encode())}."


def _hmac_with_the_public_key(provider: IdentityProvider, client_id: str) -> str:
    """The algorithm confusion attack: HS256 keyed with the provider's public key, which anyone can fetch."""
    public = provider.signing_key.private_key.public_key().public_bytes(  # type: ignore[attr-defined]
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    genuine = provider.token(client_id).split(".")
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": provider.signing_key.key_id}).encode())
    signature = hmac.new(public, f"{header}.{genuine[1]}".encode(), hashlib.sha256).digest()
    return f"{header}.{genuine[1]}.{_b64(signature)}"


def _tampered(provider: IdentityProvider, client_id: str, victim: str) -> str:
    """A genuine token whose client was changed to another partner's: the signature no longer matches."""
    header, payload, signature = provider.token(client_id).split(".")
    claims = {**json.loads(base64.urlsafe_b64decode(payload + "==")), "azp": victim}
    return f"{header}.{_b64(json.dumps(claims).encode())}.{signature}"


REFUSED = {
    "expired": lambda p, c, now: p.token(c, lifetime=-120),
    "not yet valid": lambda p, c, now: p.token(c, nbf=now + 600, iat=now + 600),
    "wrong audience": lambda p, c, now: p.token(c, aud="api://another-api-of-the-tenant"),
    "audience of v1 in a v2 token's place": lambda p, c, now: p.token(c, aud=API_URI + "/other"),
    "wrong issuer": lambda p, c, now: p.token(c, iss="https://login.microsoftonline.com/another-tenant/v2.0"),
    "bad signature": lambda p, c, now: p.token(c, key=p.new_key(published=False), key_id=p.signing_key.key_id),
    "unknown key id": lambda p, c, now: p.token(c, key=p.new_key(published=False)),
    "an empty key id": lambda p, c, now: p.token(c, key_id=" "),
    "no expiry": lambda p, c, now: p.token(c, exp=None),
    "no client claim": lambda p, c, now: p.token(c, azp=None),
    "unknown client": lambda p, c, now: p.token(str(uuid.uuid4())),
    "alg none": lambda p, c, now: _unsigned(p, c),
    "HS256 keyed with the public key": lambda p, c, now: _hmac_with_the_public_key(p, c),
    "ES256 over an RSA key id": lambda p, c, now: p.token(
        c, key=p.new_key(published=False, algorithm="ES256"), key_id=p.signing_key.key_id
    ),
    "not a JWT": lambda p, c, now: "0123456789abcdef",
    "three dots of nothing": lambda p, c, now: "a.b.c",
    "empty": lambda p, c, now: "",
    "too long": lambda p, c, now: "e" * 20_000,
    "an API key sent as a token": lambda p, c, now: bad_key(),
}


def test_every_refused_token_gets_the_same_401_invalid_token(oauth_host, identity_provider):
    partner = token_partner(oauth_host, identity_provider)
    victim = token_partner(oauth_host, identity_provider)
    now = int(time.time())
    answers = {}
    for case, make in {
        **REFUSED,
        "tampered client": lambda p, c, now: _tampered(p, c, victim.client_id),
    }.items():
        answers[case] = assert_invalid_token(get(oauth_host, bearer(make(identity_provider, partner.client_id, now))))
    assert len({json.dumps(answer, sort_keys=True) for answer in answers.values()}) == 1, answers
    # The partner's own genuine token still works: nothing above was a partial success.
    assert get(oauth_host, bearer(identity_provider.token(partner.client_id))).status_code == 200


def test_a_refused_write_stores_nothing(oauth_host, identity_provider):
    partner = token_partner(oauth_host, identity_provider)
    body = stores_batch(store("S1"))
    refused = partner.put("stores", body, headers=bearer(identity_provider.token(partner.client_id, lifetime=-300)))
    assert_invalid_token(refused)
    assert oauth_host.storage().get_store(partner.partner_id, "S1") is None
    good = identity_provider.token(partner.client_id)
    assert requests.put(oauth_host.url("stores"), json=body, headers=bearer(good), timeout=30).status_code == 202


def test_a_removed_client_is_refused_and_an_inactive_partner_gets_403(oauth_host, identity_provider):
    partner = token_partner(oauth_host, identity_provider)
    token = identity_provider.token(partner.client_id)
    hq = oauth_host.hq_in_process
    assert hq("partner", "deactivate", partner.partner_id).returncode == 0
    inactive = get(oauth_host, bearer(token))
    problem_of(inactive, 403, "PARTNER_INACTIVE")
    assert "WWW-Authenticate" not in inactive.headers
    assert hq("partner", "activate", partner.partner_id).returncode == 0
    assert get(oauth_host, bearer(token)).status_code == 200
    assert hq("partner", "client", "remove", partner.partner_id, partner.client_id).returncode == 0
    assert_invalid_token(get(oauth_host, bearer(token)))  # the same token, from now on
    assert get(oauth_host, partner.headers()).status_code == 200  # the partner's key is untouched


def test_a_request_without_credentials_is_challenged_for_a_bearer_token(oauth_host):
    for headers in ({}, {"x-functions-key": bad_key()}, {"Authorization": "Basic dXNlcjpwYXNz"}):
        response = get(oauth_host, headers)
        problem_of(response, 401, "UNAUTHORIZED")
        assert response.headers["WWW-Authenticate"] == "Bearer"  # RFC 6750 section 3: no error without a token


# --- a key and a token together ---------------------------------------------------------------------------


def test_a_key_and_a_token_are_accepted_only_when_they_name_the_same_partner(oauth_host, identity_provider):
    partner, other = token_partner(oauth_host, identity_provider), token_partner(oauth_host, identity_provider)
    token = identity_provider.token(partner.client_id)
    both = get(oauth_host, {**partner.headers(), **bearer(token)})
    assert both.status_code == 200 and both.json()["partner_id"] == partner.partner_id

    crossed = get(oauth_host, {**other.headers(), **bearer(token)})
    problem = problem_of(crossed, 401, "UNAUTHORIZED")
    assert "different partners" in problem["detail"] and crossed.headers["WWW-Authenticate"] == INVALID_TOKEN
    problem_of(get(oauth_host, {"x-functions-key": bad_key(), **bearer(token)}), 401, "UNAUTHORIZED")
    expired = identity_provider.token(partner.client_id, lifetime=-300)
    assert_invalid_token(get(oauth_host, {**partner.headers(), **bearer(expired)}))
    # Another scheme in Authorization is not a token: the key decides, as before.
    basic = get(oauth_host, {**partner.headers(), "Authorization": "Basic dXNlcjpwYXNz"})
    assert basic.status_code == 200


def test_keys_and_tokens_count_toward_one_rate_limit(oauth_host, identity_provider):
    partner = token_partner(oauth_host, identity_provider)
    token = identity_provider.token(partner.client_id)
    for _ in range(3):  # a window may end between two requests: then look again in the next one
        by_key, by_token = get(oauth_host, partner.headers()), get(oauth_host, bearer(token))
        first, second = (_remaining(answer) for answer in (by_key, by_token))
        if second[1] <= first[1]:
            assert second[0] == first[0] - 1, (by_key.headers, by_token.headers)
            return
    pytest.fail("the rate-limit window ended between the two requests three times")


def _remaining(response: requests.Response) -> tuple[int, int]:
    fields = dict(part.split("=") for part in response.headers["RateLimit"].split(";")[1:])
    return int(fields["r"]), int(fields["t"])


# --- keys: rotation, bounded refresh ----------------------------------------------------------------------


def test_a_new_key_in_the_jwks_is_picked_up_and_a_removed_one_refused(tmp_path):
    provider = IdentityProvider().start()  # its own: this test changes the provider's keys
    host = start_host(tmp_path, **oauth_settings(provider, OAUTH_KEYS_REFRESH_SECONDS=str(REFRESH_SECONDS)))
    try:
        partner = token_partner(host, provider)
        old = provider.signing_key
        assert get(host, bearer(provider.token(partner.client_id))).status_code == 200
        assert provider.requests[JWKS_PATH] == 1

        new = provider.new_key()  # the provider publishes a new key and signs with it
        time.sleep(REFRESH_SECONDS + 0.2)  # the host may fetch again once this long has passed
        assert get(host, bearer(provider.token(partner.client_id, key=new))).status_code == 200
        assert provider.requests[JWKS_PATH] == 2
        assert get(host, bearer(provider.token(partner.client_id, key=old))).status_code == 200  # still published

        old.published = False  # the old key is withdrawn; the host learns it at its next fetch
        newest = provider.new_key()
        time.sleep(REFRESH_SECONDS + 0.2)
        assert get(host, bearer(provider.token(partner.client_id, key=newest))).status_code == 200
        assert_invalid_token(get(host, bearer(provider.token(partner.client_id, key=old))))
    finally:
        host.stop()
        provider.stop()


def test_a_flood_of_forged_tokens_is_limited_per_address_and_fetches_keys_boundedly(tmp_path, identity_provider):
    # The default refresh bound (300 s): the flood of unknown key ids below may cost at most one fetch.
    host = start_host(tmp_path, **oauth_settings(identity_provider), AUTH_FAILURES_PER_MINUTE="5")
    try:
        partner = token_partner(host, identity_provider)
        accepted = identity_provider.token(partner.client_id)
        assert get_from("127.0.0.21", host, None, **bearer(accepted)).status_code == 200  # this instance knows it
        fetched = identity_provider.requests[JWKS_PATH]
        forger = identity_provider.new_key(published=False)
        for _ in range(5):
            forged = identity_provider.token(partner.client_id, key=forger, key_id=uuid.uuid4().hex)
            assert_invalid_token(get_from("127.0.0.21", host, None, **bearer(forged)))
        for headers in (bearer(identity_provider.token(partner.client_id, key=forger)), {}):
            limited = get_from("127.0.0.21", host, None, **headers)
            problem_of(limited, 429, "RATE_LIMITED")
            assert "address" in limited.json()["detail"] and "WWW-Authenticate" not in limited.headers
        assert identity_provider.requests[JWKS_PATH] - fetched <= 1
        # A token this instance accepted still goes through the limit; a new one waits like any other request.
        assert get_from("127.0.0.21", host, None, **bearer(accepted)).status_code == 200
        problem_of(
            get_from("127.0.0.21", host, None, **bearer(identity_provider.token(partner.client_id))),
            429,
            "RATE_LIMITED",
        )
        assert get_from("127.0.0.22", host, None, **bearer(identity_provider.token(partner.client_id))).ok
    finally:
        host.stop()


# --- logs, settings ---------------------------------------------------------------------------------------


def test_tokens_never_reach_the_host_log(oauth_host, identity_provider):
    partner = token_partner(oauth_host, identity_provider)
    good = identity_provider.token(partner.client_id)
    expired = identity_provider.token(partner.client_id, lifetime=-300)
    foreign = identity_provider.token(str(uuid.uuid4()))
    assert get(oauth_host, bearer(good)).status_code == 200
    assert get(oauth_host, bearer(good), "reference/nothing").status_code == 404
    for token in (expired, foreign):
        assert_invalid_token(get(oauth_host, bearer(token)))
    log = oauth_host.log()
    for token in (good, expired, foreign):
        header, payload, signature = token.split(".")
        for part in (header, payload[:40], signature[:40]):
            assert part not in log
    # A request is logged by its token's client once the signature holds; a refusal by its reason only.
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    ours = [line for line in lines if line.get("client_id") == partner.client_id]
    assert [(line["status"], line["partner_id"]) for line in ours] == [(200, partner.partner_id)] + [
        (404, partner.partner_id)
    ]
    assert any(line.get("token_refused") == "expired" and "client_id" not in line for line in lines)
    unmapped = [line for line in lines if line.get("token_refused") == "unknown client"]
    assert unmapped[-1]["client_id"] == json.loads(base64.urlsafe_b64decode(foreign.split(".")[1] + "=="))["azp"]


def test_without_oauth_settings_a_token_alone_is_refused_and_a_key_still_decides(host, identity_provider):
    partner = make_partner(host)
    token = identity_provider.token(str(uuid.uuid4()))
    assert_invalid_token(get(host, bearer(token)))
    with_key = get(host, {**partner.headers(), **bearer(token)})
    assert with_key.status_code == 200 and with_key.json()["partner_id"] == partner.partner_id
    no_credentials = get(host, {})
    problem_of(no_credentials, 401, "UNAUTHORIZED")
    assert "WWW-Authenticate" not in no_credentials.headers  # the service does not offer tokens here


def test_a_client_id_is_its_issuers_one_providers_client_cannot_speak_for_anothers_partner(tmp_path):
    """Two providers configured (decision 0103): the same client id at each is two clients, mapped apart."""
    first, second = IdentityProvider().start(), IdentityProvider().start()
    settings = {
        "OAUTH_ISSUER": f"{first.issuer},{second.issuer}",
        "OAUTH_AUDIENCE": oauth_settings(first)["OAUTH_AUDIENCE"],
    }
    host = start_host(tmp_path, **settings)
    try:
        partner, victim = make_partner(host), make_partner(host)
        client_id = str(uuid.uuid4())
        refused = host.hq_in_process("partner", "client", "add", victim.partner_id, client_id)
        assert refused.returncode != 0 and "--issuer" in refused.stderr  # which provider's client is it?
        hq = host.hq_in_process
        assert hq("partner", "client", "add", victim.partner_id, client_id, "--issuer", first.issuer).returncode == 0
        assert get(host, bearer(first.token(client_id))).json()["partner_id"] == victim.partner_id
        assert_invalid_token(get(host, bearer(second.token(client_id))))  # the same id at the other provider
        assert hq("partner", "client", "add", partner.partner_id, client_id, "--issuer", second.issuer).returncode == 0
        assert get(host, bearer(second.token(client_id))).json()["partner_id"] == partner.partner_id
        assert get(host, bearer(first.token(client_id))).json()["partner_id"] == victim.partner_id
        listed = hq("partner", "client", "list", partner.partner_id).stdout
        assert second.issuer in listed and first.issuer not in listed
    finally:
        host.stop()
        first.stop()
        second.stop()
