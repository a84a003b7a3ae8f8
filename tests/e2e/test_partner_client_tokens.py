"""The partner client with OAuth 2.0 client credentials (decision 0038), over real HTTP: tokens from a real identity
provider on loopback (tests/identity_provider.py), the local host on SQLite and on the Cosmos DB and Azurite
emulators. One partner pushes a whole day to MATCHED with tokens only, another with its key, side by side; the
token is reused, renewed once on a 401, and never printed; `pos-partner` takes the credentials from the
environment."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
import requests
from pos_partner_client import ClientCredentials, PosApiError, PosClient, TokenError
from pos_partner_client.cli import EXIT_OK, EXIT_REFUSED, EXIT_UNAVAILABLE, EXIT_USAGE

from tests.conftest import ROOT, make_partner, start_azure_host, start_host
from tests.e2e.test_bearer_tokens import bearer
from tests.e2e.test_partner_cli import day_folder
from tests.e2e.test_partner_client import DAY, QUICK, assert_matched_once, close_of, records_of_day, set_up
from tests.identity_provider import API_URI, SCOPE, TOKEN_PATH, IdentityProvider, oauth_settings

REFRESH_SECONDS = 1


@pytest.fixture(scope="module", params=["sqlite", "azure"])
def oauth_backend_host(request, tmp_path_factory, identity_provider):
    """The local host trusting the test provider, on each backend in turn (its own Azurite for the Azure one)."""
    tmp = tmp_path_factory.mktemp(f"oauth-{request.param}")
    settings = oauth_settings(identity_provider, OAUTH_KEYS_REFRESH_SECONDS=str(REFRESH_SECONDS))
    if request.param == "sqlite":
        running = start_host(tmp, **settings)
        yield running
        running.stop()
        return
    from devhost.azurite_emulator import start_azurite

    azurite = start_azurite(tmp)
    running = start_azure_host(tmp, request.getfixturevalue("cosmos_emulator"), azurite.connection_string, **settings)
    yield running
    running.stop()
    azurite.stop()


def credentials_of(host, provider: IdentityProvider, partner) -> ClientCredentials:
    """A client registered at the provider (id and secret) and mapped to the partner by HQ."""
    client_id, secret = provider.register_client()
    added = host.hq_in_process("partner", "client", "add", partner.partner_id, client_id, "--issuer", provider.issuer)
    assert added.returncode == 0, added.stderr
    return ClientCredentials(provider.token_url, client_id, secret, SCOPE)


def test_a_day_reaches_matched_with_tokens_only_beside_a_partner_with_its_key(oauth_backend_host, identity_provider):
    by_token, by_key = make_partner(oauth_backend_host, ("S1",)), make_partner(oauth_backend_host, ("S1",))
    credentials = credentials_of(oauth_backend_host, identity_provider, by_token)
    clients = {
        "token": PosClient(oauth_backend_host.base_url, credentials=credentials, retry=QUICK),
        "key": PosClient(oauth_backend_host.base_url, by_key.key, retry=QUICK),
    }
    assert clients["token"].transport.key is None  # tokens only: no x-functions-key is ever sent
    days = {name: records_of_day("S1", 12) for name in clients}
    for name, client in clients.items():
        set_up(client, "S1")
        assert client.get_mappings().partner_id == (by_token if name == "token" else by_key).partner_id
        pushed = client.push_day("S1", DAY, days[name], close_of(days[name]))
        assert [batch.result.status for batch in pushed.batches] == ["ACCEPTED"]
    for name, client in clients.items():
        assert_matched_once(client, "S1", days[name], batch_count=1)
    assert credentials.requests == 1  # one token served the whole day


def test_a_refused_token_is_renewed_once_then_the_401_is_raised(tmp_path):
    provider = IdentityProvider().start()  # its own: the provider's keys change here
    host = start_host(tmp_path, **oauth_settings(provider, OAUTH_KEYS_REFRESH_SECONDS=str(REFRESH_SECONDS)))
    try:
        partner = make_partner(host, ("S1",))
        credentials = credentials_of(host, provider, partner)
        client = PosClient(host.base_url, credentials=credentials, retry=QUICK)
        assert client.get_mappings().partner_id == partner.partner_id and credentials.requests == 1

        # The provider withdraws the key the held token was signed with. Once the service has fetched the keys
        # again (here: for a token signed with the new key), it refuses the held token; the client asks for a
        # new one (signed with the new key) and the same request goes through.
        old = provider.signing_key
        provider.new_key()
        old.published = False
        time.sleep(REFRESH_SECONDS + 0.2)
        other = requests.get(host.url("reference/order-types"), headers=bearer(provider.token(credentials.client_id)))
        assert other.status_code == 200
        assert client.get_mappings().partner_id == partner.partner_id
        assert credentials.requests == 2

        # HQ removes the client: the renewed token is refused too, and the 401 is raised after one renewal.
        assert (
            host.hq_in_process("partner", "client", "remove", partner.partner_id, credentials.client_id).returncode == 0
        )
        with pytest.raises(PosApiError) as refused:
            client.get_mappings()
        assert refused.value.status == 401 and refused.value.code == "UNAUTHORIZED"
        assert credentials.requests == 3
    finally:
        host.stop()
        provider.stop()


def test_a_token_is_reused_until_shortly_before_it_expires(identity_provider):
    client_id, secret = identity_provider.register_client()
    clock = [0.0]
    credentials = ClientCredentials(identity_provider.token_url, client_id, secret, SCOPE, clock=lambda: clock[0])
    first = credentials.token()
    clock[0] = 3000  # an hour's token, renewed 5 minutes before its end
    assert credentials.token() == first and credentials.requests == 1
    clock[0] = 3300
    assert credentials.token() != first and credentials.requests == 2
    assert credentials.token(renew=True) and credentials.requests == 3
    assert identity_provider.requests[TOKEN_PATH] >= 3
    assert secret not in repr(credentials) and first not in repr(credentials)


def test_the_token_endpoints_refusals_say_what_to_fix(identity_provider):
    client_id, secret = identity_provider.register_client()
    wrong_secret = ClientCredentials(identity_provider.token_url, client_id, secret + "x", SCOPE)
    with pytest.raises(TokenError) as refused:
        wrong_secret.token()
    assert refused.value.code == "TOKEN_REFUSED" and refused.value.status == 401 and not refused.value.retryable
    assert "invalid_client" in str(refused.value) and secret not in str(refused.value)
    wrong_scope = ClientCredentials(identity_provider.token_url, client_id, secret, "api://another/.default")
    with pytest.raises(TokenError, match="invalid_scope"):
        wrong_scope.token()


def test_a_resource_indicator_gets_an_rfc_9068_token_the_service_accepts(tmp_path, identity_provider):
    host = start_host(tmp_path, **oauth_settings(identity_provider))
    try:
        partner = make_partner(host, ("S1",))
        mapped = credentials_of(host, identity_provider, partner)
        for target in ({"resource": API_URI}, {"audience": API_URI}):  # no scope: the provider reads the target
            credentials = ClientCredentials(mapped.token_url, mapped.client_id, mapped.client_secret, **target)
            assert PosClient(host.base_url, credentials=credentials, retry=QUICK).get_mappings().partner_id == (
                partner.partner_id
            )
    finally:
        host.stop()


def test_an_unreachable_token_url_is_named(tmp_path, identity_provider):
    closed = IdentityProvider().start()
    closed.stop()  # gone: nothing listens at its token URL
    credentials = ClientCredentials(closed.token_url, "client", "secret", SCOPE)
    with pytest.raises(TokenError) as unreachable:
        credentials.token()
    assert unreachable.value.code == "TOKEN_UNAVAILABLE" and unreachable.value.retryable
    assert closed.token_url in str(unreachable.value) and "secret" not in str(unreachable.value)
    env = {
        "POS_TOKEN_URL": closed.token_url,
        "POS_CLIENT_ID": "client",
        "POS_CLIENT_SECRET": "s3cret",
        "POS_SCOPE": SCOPE,
    }
    host = start_host(tmp_path, **oauth_settings(identity_provider))
    try:  # pos-partner says which URL it could not reach: the token endpoint's, not the service's
        status = pos_partner(host, env, "status", "S1", DAY, "--give-up-after", "1")
    finally:
        host.stop()
    assert status.returncode == EXIT_UNAVAILABLE and closed.token_url in status.stdout + status.stderr
    assert "s3cret" not in status.stdout + status.stderr


def pos_partner(host, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pos_partner_client", *args],
        cwd=ROOT,
        env={"PATH": os.environ["PATH"], "POS_BASE_URL": host.base_url, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_pos_partner_pushes_a_day_with_client_credentials_from_the_environment(identity_provider, tmp_path):
    oauth_backend_host = start_host(tmp_path, **oauth_settings(identity_provider))
    try:
        _push_with_credentials(oauth_backend_host, identity_provider, tmp_path)
    finally:
        oauth_backend_host.stop()


def _push_with_credentials(oauth_backend_host, identity_provider, tmp_path) -> None:
    partner = make_partner(oauth_backend_host, ("S1",))
    credentials = credentials_of(oauth_backend_host, identity_provider, partner)
    env = {
        "POS_TOKEN_URL": credentials.token_url,
        "POS_CLIENT_ID": credentials.client_id,
        "POS_CLIENT_SECRET": credentials.client_secret,
        "POS_SCOPE": SCOPE,
    }
    records = records_of_day("S1", 3)
    folder = day_folder(tmp_path / "day", "S1", records, close_of(records))
    pushed = pos_partner(oauth_backend_host, env, "push", str(folder), "--timeout", "60")
    assert pushed.returncode == EXIT_OK, pushed.stdout + pushed.stderr
    assert "result: every store-day MATCHED" in pushed.stdout
    assert credentials.client_secret not in pushed.stdout + pushed.stderr

    both = pos_partner(oauth_backend_host, {**env, "POS_API_KEY": partner.key}, "status", "S1", DAY)
    assert both.returncode == EXIT_OK, both.stdout + both.stderr
    partial = pos_partner(oauth_backend_host, {"POS_TOKEN_URL": credentials.token_url}, "status", "S1", DAY)
    assert partial.returncode == EXIT_USAGE and "POS_CLIENT_ID, POS_CLIENT_SECRET, POS_SCOPE" in partial.stderr
    wrong = pos_partner(oauth_backend_host, {**env, "POS_CLIENT_SECRET": "not-the-secret"}, "status", "S1", DAY)
    assert wrong.returncode == EXIT_REFUSED and "TOKEN_REFUSED" in wrong.stdout + wrong.stderr
