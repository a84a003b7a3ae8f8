"""Decision 0067: with the accounts behind their firewalls (vnetEnabled), `hq` run from an address
they do not allow says so, instead of "unavailable". The real SDKs talk to tests/firewall_stub.py, which
answers as the services document their firewall's 403 (Azure's network rules cannot run here)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from azure.cosmos.exceptions import CosmosHttpResponseError

from backends.azure_queue import AzureQueue
from backends.cosmos import outages
from core.ports import AddressNotAllowed, BackendUnavailable
from devhost.cosmos_emulator import EMULATOR_KEY
from tests.conftest import ROOT
from tests.firewall_stub import SEEN_ADDRESS, firewall

AZURITE_ACCOUNT_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def run_hq(env: dict, *args: str) -> subprocess.CompletedProcess:
    base = {name: value for name, value in os.environ.items() if not name.startswith(("COSMOS_", "AzureWebJobs"))}
    return subprocess.run(
        [sys.executable, "-m", "hq", *args],
        cwd=ROOT,
        env={**base, "POS_BACKEND": "azure", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def not_allowed(result: subprocess.CompletedProcess, service: str) -> str:
    assert result.returncode == 1, (result.stdout, result.stderr)
    message = result.stderr.strip()
    assert message.startswith("error: ") and "Traceback" not in message and "\n" not in message, message
    assert f"{service} refused the request" in message and "your address" in message, message
    assert "not allowed" in message and "unavailable" not in message, message
    assert "docs/operator-guide.md, HQ's way in" in message, message  # where an operator reads what to do
    guide = (ROOT / "docs" / "operator-guide.md").read_text(encoding="utf-8")
    assert "### HQ's way in" in guide and "POS_OPERATOR_IP_RANGES" in guide
    return message


def test_hq_says_the_cosmos_firewall_refuses_its_address():
    with firewall("cosmos") as endpoint:
        result = run_hq(
            {"COSMOS_ENDPOINT": endpoint + "/", "COSMOS_KEY": EMULATOR_KEY, "AzureWebJobsStorage": ""},
            "partner",
            "list",
        )
    message = not_allowed(result, "Cosmos DB")
    assert SEEN_ADDRESS in message  # the address Azure saw: behind a VPN or proxy it is not the one you think
    assert EMULATOR_KEY not in message


def test_hq_says_the_storage_firewall_refuses_its_address():
    with firewall("storage") as endpoint:
        connection = (
            "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;"
            f"AccountKey={AZURITE_ACCOUNT_KEY};QueueEndpoint={endpoint}/devstoreaccount1;"
        )
        result = run_hq({"AzureWebJobsStorage": connection}, "queue", "poison", "list")
    message = not_allowed(result, "Azure Storage")
    assert AZURITE_ACCOUNT_KEY not in message


def test_the_queue_adapter_raises_address_not_allowed_still_a_backend_unavailable():
    with firewall("storage") as endpoint:
        connection = (
            "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;"
            f"AccountKey={AZURITE_ACCOUNT_KEY};QueueEndpoint={endpoint}/devstoreaccount1;"
        )
        queue = AzureQueue("reconcile-requests", connection_string=connection, create_queues=False)
        with pytest.raises(AddressNotAllowed) as raised:
            queue.ping()
    assert isinstance(raised.value, BackendUnavailable)  # the service still answers 503 for it
    assert raised.value.service == "Azure Storage"


@pytest.mark.parametrize(
    "status, message, refused",
    [
        (
            403,
            "Request originated from client IP 198.51.100.4 through public internet. This is blocked by "
            "your Cosmos DB account firewall settings.",
            True,
        ),
        (
            403,
            "Request originated from client VNET through private endpoint. This is blocked by your Cosmos "
            "DB account firewall settings.",
            True,
        ),
        # A missing data role is a 403 too (substatus 5301): not the firewall, not the operator's address.
        (
            403,
            "Request blocked by Auth cosmos-pos : principal [00000000-0000-0000-0000-000000000abc] does not "
            "have required RBAC permissions to perform action [Microsoft.DocumentDB/databaseAccounts/readMetadata]",
            False,
        ),
        (503, "Service is currently unavailable.", False),
    ],
)
def test_only_the_cosmos_firewall_403_is_an_address_refusal(status, message, refused):
    error = CosmosHttpResponseError(status_code=status, message=message)
    found = outages.refused_address(error)
    assert (found is not None) == refused
    if found is not None and "198.51.100.4" in message:
        assert found.address == "198.51.100.4"
