"""infra/hooks/preprovision.sh against a stand-in `az` (no Azure account here; decision 0089).

The stand-in logs every call and answers as az would print it with `-o tsv`, from environment variables.
Azure's answer to "what may I do here" (Microsoft.Authorization/permissions) is given as the built-in
roles' real actions and notActions, so the hook's matching of `*` patterns is what is tested; that
Resource Manager answers that question this way for a real deployer was not run.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOOK = ROOT / "infra" / "hooks" / "preprovision.sh"

FAKE_AZ = r"""#!/bin/sh
echo "$*" >> "$AZ_LOG"
tab=$(printf '\t')
case "$*" in
  *"list-flexconsumption-locations --zone-redundant=true"*) printf '%s\n' $FAKE_ZONE_REGIONS ;;
  *list-flexconsumption-locations*) printf '%s\n' $FAKE_REGIONS ;;
  "provider list"*) printf '%s\n' $FAKE_REGISTERED ;;
  "provider register --namespace "*)
    for denied in $FAKE_REGISTER_DENIED; do [ "$4" = "$denied" ] && exit 1; done; true ;;
  "group show"*) [ "$FAKE_GROUP_EXISTS" = yes ] || exit 3; echo "/subscriptions/s/resourceGroups/$4" ;;
  "rest --method get --url /subscriptions/s/resourceGroups/"*"/providers/Microsoft.Authorization/permissions"*)
    printf '%s\n' "$FAKE_GROUP_PERMISSIONS" | tr ';|' "\n$tab" ;;
  "rest --method get --url /subscriptions/hub/"*) printf '%s\n' "$FAKE_ZONE_PERMISSIONS" | tr ';|' "\n$tab" ;;
  "account show"*) echo "$FAKE_USER_TYPE" ;;
  "cosmosdb show"*) [ -n "$FAKE_COSMOS" ] || exit 3; printf '%s\t%s\n' $FAKE_COSMOS ;;
  *) echo "unexpected: $*" >&2; exit 2 ;;
esac
"""
# Built-in roles as Microsoft.Authorization/permissions lists them: "actions|notActions", roles joined by ";".
OWNER = "*|"
CONTRIBUTOR = (
    "*|Microsoft.Authorization/*/Delete Microsoft.Authorization/*/Write Microsoft.Authorization/elevateAccess/Action"
)
RBAC_ADMINISTRATOR = (
    "Microsoft.Authorization/roleAssignments/write Microsoft.Authorization/roleAssignments/delete */read|"
)
READER = "*/read|"
PRIVATE_DNS_ZONE_CONTRIBUTOR = (
    "Microsoft.Authorization/*/read Microsoft.Network/privateDnsZones/* Microsoft.Resources/deployments/*|"
)
BASE_PROVIDERS = " ".join(
    ["Microsoft.Web", "Microsoft.Storage", "Microsoft.DocumentDB", "Microsoft.OperationalInsights"]
    + ["Microsoft.Insights", "Microsoft.ManagedIdentity"]
)
HUB_ZONES = "/subscriptions/hub/resourceGroups/rg-dns/providers/Microsoft.Network/privateDnsZones/"
HQ_ZONE = HUB_ZONES + "privatelink.documents.azure.com"


def _run(tmp_path, **environment: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "az").write_text(FAKE_AZ, encoding="utf-8")
    (bin_dir / "az").chmod(0o755)
    log = tmp_path / "az.log"
    log.write_text("", encoding="utf-8")
    env = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "AZ_LOG": str(log),
        "FAKE_REGIONS": "swedencentral eastus",
        "FAKE_ZONE_REGIONS": "swedencentral",
        "FAKE_REGISTERED": BASE_PROVIDERS,
        "FAKE_REGISTER_DENIED": "",
        "FAKE_GROUP_EXISTS": "yes",
        "FAKE_GROUP_PERMISSIONS": f"{CONTRIBUTOR};{RBAC_ADMINISTRATOR}",
        "FAKE_ZONE_PERMISSIONS": READER,
        "FAKE_USER_TYPE": "user",
        "FAKE_COSMOS": "",
        "AZURE_LOCATION": "swedencentral",
        **environment,
    }
    result = subprocess.run(["sh", str(HOOK)], env=env, capture_output=True, text=True, timeout=60)
    return result, log.read_text(encoding="utf-8").splitlines()


def test_a_test_environment_passes_with_reads_only(tmp_path):
    result, calls = _run(tmp_path)
    assert result.returncode == 0, result.stderr
    assert [call.split(" --")[0] for call in calls] == [
        "functionapp list-flexconsumption-locations",
        "provider list",
        "account show",
    ]


def test_a_region_without_flex_or_without_zone_redundant_flex_is_refused(tmp_path):
    result, _ = _run(tmp_path, AZURE_LOCATION="westindia")
    assert result.returncode == 1 and "westindia does not offer Flex Consumption" in result.stderr
    result, _ = _run(tmp_path, AZURE_LOCATION="eastus", POS_ZONE_REDUNDANT="true")
    assert result.returncode == 1 and "does not offer zone-redundant Flex Consumption" in result.stderr
    assert "--zone-redundant=true" in result.stderr


def test_missing_providers_are_registered_or_named_for_a_subscription_owner(tmp_path):
    result, calls = _run(tmp_path, POS_VNET_ENABLED="true", FAKE_REGISTERED=f"{BASE_PROVIDERS} Microsoft.Network")
    assert result.returncode == 0, result.stderr
    assert "provider register --namespace Microsoft.App --wait" in calls
    result, calls = _run(
        tmp_path,
        POS_VNET_ENABLED="true",
        FAKE_REGISTERED="Microsoft.Web",
        FAKE_REGISTER_DENIED="Microsoft.App Microsoft.DocumentDB",
    )
    assert result.returncode == 1
    for namespace in ("Microsoft.App", "Microsoft.DocumentDB"):
        assert f"a subscription owner runs once 'az provider register --namespace {namespace}'" in result.stderr
    assert "Microsoft.Network" not in result.stderr  # registered by the deployer itself


@pytest.mark.parametrize(
    "roles, missing",
    [
        (f"{OWNER}", []),
        (f"{CONTRIBUTOR};{RBAC_ADMINISTRATOR}", []),
        (CONTRIBUTOR, ["Role Based Access Control Administrator"]),  # Contributor cannot assign roles
        (RBAC_ADMINISTRATOR, ["Contributor (or Owner)"]),
        (READER, ["Contributor (or Owner)", "Role Based Access Control Administrator"]),
    ],
)
def test_the_deployers_rights_in_the_resource_group_are_checked_before_anything_is_deployed(tmp_path, roles, missing):
    result, calls = _run(tmp_path, AZURE_RESOURCE_GROUP="rg-pos", FAKE_GROUP_PERMISSIONS=roles)
    assert any(
        "/subscriptions/s/resourceGroups/rg-pos/providers/Microsoft.Authorization/permissions" in c for c in calls
    )
    assert result.returncode == (1 if missing else 0), result.stderr
    for role in missing:
        assert role in result.stderr


def test_a_resource_group_that_does_not_exist_is_a_subscription_owners_step(tmp_path):
    result, _ = _run(tmp_path, AZURE_RESOURCE_GROUP="rg-pos", FAKE_GROUP_EXISTS="no")
    assert result.returncode == 1
    assert "a subscription owner creates it once, 'az group create -n rg-pos -l swedencentral'" in result.stderr


def test_hqs_zones_need_the_join_right(tmp_path):
    settings = {
        "POS_VNET_ENABLED": "true",
        "POS_COSMOS_DNS_ZONE_ID": HQ_ZONE,
        "FAKE_REGISTERED": f"{BASE_PROVIDERS} Microsoft.Network Microsoft.App",
    }
    result, calls = _run(tmp_path, **settings)
    assert result.returncode == 1 and f"you may not register private endpoints in {HQ_ZONE}" in result.stderr
    assert any(call.startswith(f"rest --method get --url {HQ_ZONE}/providers") for call in calls)
    result, _ = _run(tmp_path, FAKE_ZONE_PERMISSIONS=PRIVATE_DNS_ZONE_CONTRIBUTOR, **settings)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    "ranges, refused",
    [
        ("203.0.113.7,198.51.100.0/24", None),
        ("203.0.113.7/32", None),
        ("10.20.0.0/16", "10.20.0.0/16 is a private range"),
        ("203.0.113.7,172.20.1.0/24", "172.20.1.0/24 is a private range"),
        ("192.168.1.10", "192.168.1.10 is a private range"),
        ("172.32.0.1", None),  # outside 172.16/12
        ("203.0.113.6/31", "refuses /31"),
    ],
)
def test_operator_ranges_must_be_public_addresses_the_firewalls_take(tmp_path, ranges, refused):
    result, _ = _run(tmp_path, POS_OPERATOR_IP_RANGES=ranges)
    if refused is None:
        assert result.returncode == 0, result.stderr
    else:
        assert result.returncode == 1 and refused in result.stderr


def test_production_without_an_alert_recipient_stops_and_says_so(tmp_path):
    result, _ = _run(tmp_path, POS_ALERT_RECIPIENT_REQUIRED="true")
    assert result.returncode == 1 and "azd env set POS_ALERT_EMAIL" in result.stderr
    result, _ = _run(tmp_path, POS_ALERT_RECIPIENT_REQUIRED="true", POS_ALERT_EMAIL="oncall@example.com")
    assert result.returncode == 0, result.stderr


def test_a_pipeline_signed_in_as_a_service_principal_must_say_so(tmp_path):
    result, _ = _run(tmp_path, FAKE_USER_TYPE="servicePrincipal")
    assert result.returncode == 1 and "azd env set AZURE_PRINCIPAL_TYPE ServicePrincipal" in result.stderr
    for settings in ({"AZURE_PRINCIPAL_TYPE": "ServicePrincipal"}, {"POS_OPERATOR_GROUP_ID": "group-ops"}):
        result, _ = _run(tmp_path, FAKE_USER_TYPE="servicePrincipal", **settings)
        assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    "existing, settings, refused",
    [
        ("False True", {}, None),  # the test account as created
        ("False True", {"POS_ZONE_REDUNDANT": "true"}, "cannot change it"),
        ("True False", {"POS_ZONE_REDUNDANT": "true", "POS_COSMOS_THROUGHPUT_MODE": "autoscale"}, None),
        ("True False", {"POS_ZONE_REDUNDANT": "true"}, "chosen when the account is created"),
    ],
)
def test_a_change_cosmos_db_cannot_make_is_stopped(tmp_path, existing, settings, refused):
    result, calls = _run(
        tmp_path, FAKE_COSMOS=existing, COSMOS_ACCOUNT_NAME="cosmos-pos-x", AZURE_RESOURCE_GROUP="rg-pos", **settings
    )
    assert any(call.startswith("cosmosdb show --resource-group rg-pos --name cosmos-pos-x") for call in calls)
    if refused is None:
        assert result.returncode == 0, result.stderr
    else:
        assert result.returncode == 1 and refused in result.stderr, result.stderr


def test_after_a_restore_the_restored_account_is_the_one_checked(tmp_path):
    """POS_COSMOS_ACCOUNT_NAME (the restored account) wins over COSMOS_ACCOUNT_NAME (the last provision's)."""
    restored = {"COSMOS_ACCOUNT_NAME": "cosmos-pos-old", "POS_COSMOS_ACCOUNT_NAME": "cosmos-pos-restored-1"}
    result, calls = _run(
        tmp_path,
        FAKE_COSMOS="False False",
        AZURE_RESOURCE_GROUP="rg-pos",
        POS_ZONE_REDUNDANT="true",
        POS_COSMOS_THROUGHPUT_MODE="autoscale",
        **restored,
    )
    assert any("--name cosmos-pos-restored-1" in call for call in calls)
    assert not any("--name cosmos-pos-old" in call for call in calls)
    assert result.returncode == 1 and "cosmos-pos-restored-1 has zone redundancy false" in result.stderr
    result, _ = _run(tmp_path, FAKE_COSMOS="", AZURE_RESOURCE_GROUP="rg-pos", **restored)
    assert result.returncode == 1 and "no such Cosmos DB account in rg-pos" in result.stderr
