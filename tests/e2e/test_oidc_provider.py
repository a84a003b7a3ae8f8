"""Bearer tokens from a certified OpenID provider (npm `oidc-provider`, a devDependency, started here on a free
port: tests/oidc/provider.mjs), not our own: client credentials with a resource indicator (RFC 8707) give an
RFC 9068 JWT access token (`client_id`, no `azp`; `aud` the resource; typ at+jwt) that the service accepts
for the partner HQ mapped the client to (decisions 0102, 0103), through the partner client and `pos-partner`."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import uuid

import pytest
import requests
from pos_partner_client import ClientCredentials, PosClient
from pos_partner_client.cli import EXIT_PENDING

from devhost.processes import free_port, stop_process, wait_until_serving
from tests.conftest import ROOT, make_partner, start_host
from tests.e2e.test_partner_client import QUICK
from tests.payloads import store, stores_batch

RESOURCE = "https://pos.example.com/pos/v1"  # the service's URI, as HQ names it to the provider and the partner
SCRIPT = ROOT / "tests" / "oidc" / "provider.mjs"


@pytest.fixture(scope="module")
def provider(tmp_path_factory):
    if not (ROOT / "node_modules" / "oidc-provider").is_dir():
        pytest.fail("oidc-provider is missing from node_modules: run make install")
    port, log = free_port(), tmp_path_factory.mktemp("oidc") / "provider.log"
    client_id, secret = f"acme-pos-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    process = subprocess.Popen(
        ["node", str(SCRIPT), str(port), client_id, secret, RESOURCE],
        cwd=ROOT,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    try:
        wait_until_serving(process, port, "/.well-known/openid-configuration", "oidc-provider", log.read_text)
        issuer = f"http://127.0.0.1:{port}"
        yield {"issuer": issuer, "token_url": f"{issuer}/token", "client_id": client_id, "secret": secret}
    finally:
        stop_process(process)


def test_a_certified_providers_rfc_9068_token_speaks_for_the_mapped_partner(tmp_path, provider):
    host = start_host(tmp_path, OAUTH_ISSUER=provider["issuer"], OAUTH_AUDIENCE=RESOURCE)
    try:
        partner = make_partner(host, ("S1",))
        added = host.hq_in_process("partner", "client", "add", partner.partner_id, provider["client_id"])
        assert added.returncode == 0, added.stderr  # one issuer configured: the client is its
        credentials = ClientCredentials(
            provider["token_url"], provider["client_id"], provider["secret"], resource=RESOURCE
        )
        claims = json.loads(base64.urlsafe_b64decode(credentials.token().split(".")[1] + "=="))
        assert claims["client_id"] == provider["client_id"] and "azp" not in claims and claims["aud"] == RESOURCE
        client = PosClient(host.base_url, credentials=credentials, retry=QUICK)
        assert client.get_mappings().partner_id == partner.partner_id
        token = {"Authorization": f"Bearer {credentials.token()}"}
        put = requests.put(host.url("stores"), json=stores_batch(store("S1")), headers=token, timeout=30)
        assert put.status_code == 202, put.text

        env = {
            "PATH": os.environ["PATH"],
            "POS_BASE_URL": host.base_url,
            "POS_TOKEN_URL": provider["token_url"],
            "POS_CLIENT_ID": provider["client_id"],
            "POS_CLIENT_SECRET": provider["secret"],
            "POS_RESOURCE": RESOURCE,
        }
        status = subprocess.run(
            [sys.executable, "-m", "pos_partner_client", "status", "S1", "2026-11-20"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert status.returncode == EXIT_PENDING, status.stdout + status.stderr  # authenticated: not reconciled yet
        assert "NOT_RECEIVED" in status.stdout and provider["secret"] not in status.stdout + status.stderr

        # Another resource is the provider's refusal (it knows only ours); the service never sees a token.
        elsewhere = ClientCredentials(
            provider["token_url"], provider["client_id"], provider["secret"], resource="https://elsewhere.example/"
        )
        with pytest.raises(Exception, match="invalid_target|TOKEN_REFUSED"):
            elsewhere.token()
    finally:
        host.stop()
