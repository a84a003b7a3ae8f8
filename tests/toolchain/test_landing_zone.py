"""infra/ in HQ's landing zone (decisions 0088-0091), checked without Azure or a Bicep compiler.

The expressions that decide what is deployed are evaluated with tests/bicep_model.evaluate over the
values a landing zone gives: HQ's private DNS zone ids, its address plan, an operator group, Fabric's
workspace, an alert recipient. What Resource Manager does with the result is not checked here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests import bicep_model
from tests.bicep_model import DeploymentFailure, Expr, Ref

ROOT = Path(__file__).resolve().parents[2]
INFRA = ROOT / "infra"
HUB_ZONES = "/subscriptions/hub/resourceGroups/rg-dns/providers/Microsoft.Network/privateDnsZones/"
HQ_ZONES = {
    "blob": HUB_ZONES + "privatelink.blob.core.windows.net",
    "queue": HUB_ZONES + "privatelink.queue.core.windows.net",
    "cosmos": HUB_ZONES + "privatelink.documents.azure.com",
}
NO_ZONES = {"blob": "", "queue": "", "cosmos": ""}


def _load(relative: str) -> bicep_model.BicepFile:
    return bicep_model.load(INFRA / relative)


def _resolve(value, values: dict):
    """A declaration's value with its names and expressions evaluated over `values`."""
    if isinstance(value, Ref):
        return bicep_model.evaluate(value.path, values)
    if isinstance(value, Expr):
        return bicep_model.evaluate(value.text, values)
    if isinstance(value, dict):
        return {key: _resolve(item, values) for key, item in value.items()}
    if isinstance(value, list):
        return [_resolve(item, values) for item in value]
    return value


def _endpoints(zone_ids: dict) -> list[dict]:
    network = _load("modules/network.bicep")
    values = {"privateDnsZoneIds": zone_ids, "storageAccountId": "st-id", "cosmosAccountId": "cosmos-id"}
    return _resolve(network.variables["endpoints"], values)


# -- decision 0088: HQ's private DNS, addresses, links, egress ---------------------------------------------


@pytest.mark.parametrize(
    "zone_ids, created",
    [
        (HQ_ZONES, []),
        (NO_ZONES, ["blob", "queue", "cosmos"]),
        ({**NO_ZONES, "cosmos": HQ_ZONES["cosmos"]}, ["blob", "queue"]),  # HQ has a zone for Cosmos DB only
    ],
    ids=["hq-zones", "stand-alone", "hq-cosmos-zone-only"],
)
def test_given_zone_ids_no_zone_or_link_is_created_and_the_endpoints_register_in_hqs_zones(zone_ids, created):
    network = _load("modules/network.bicep")
    endpoints = _endpoints(zone_ids)
    assert [endpoint["zone"] for endpoint in endpoints] == [
        "privatelink.blob.core.windows.net",
        "privatelink.queue.core.windows.net",
        "privatelink.documents.azure.com",
    ]
    created_zones = bicep_model.evaluate(network.variables["createdZones"].text, {"endpoints": endpoints})
    assert [zone["name"] for zone in created_zones] == created
    # Zones, this network's links and HQ's links loop over the zones created here, and nothing else.
    for name in ("zones", "zoneLinks"):
        assert network.resources[name].loop.text.startswith(
            ("[for endpoint in createdZones:", "[for (endpoint, index) in createdZones:")
        ), name
    links = network.resources["operatorZoneLinks"]
    assert "range(0, length(createdZones) * length(linkedVnetIds))" in links.loop.text
    (config,) = network.resources["zoneGroups"].body["properties"]["privateDnsZoneConfigs"]
    registered = [_resolve(config["properties"]["privateDnsZoneId"], {"endpoint": endpoint}) for endpoint in endpoints]
    assert registered == [
        zone_ids[endpoint["name"]] or f"resourceId(Microsoft.Network/privateDnsZones/{endpoint['zone']})"
        for endpoint in endpoints
    ]
    # Every endpoint gets its zone group, in HQ's zone or its own: the A record makes the private address resolve.
    assert network.resources["zoneGroups"].condition is None
    assert network.resources["zoneGroups"].loop.text.startswith("[for (endpoint, index) in endpoints:")


def test_the_zone_ids_and_the_address_plan_flow_from_main_to_the_network():
    main, network = _load("main.bicep"), _load("modules/network.bicep")
    passed = main.modules["network"].body["params"]
    assert passed["privateDnsZoneIds"] == {
        "blob": Ref("blobPrivateDnsZoneId"),
        "queue": Ref("queuePrivateDnsZoneId"),
        "cosmos": Ref("cosmosPrivateDnsZoneId"),
    }
    for parameter, module_parameter in [
        ("vnetAddressPrefix", "addressPrefix"),
        ("privateEndpointSubnetPrefix", "privateEndpointSubnetPrefix"),
        ("appSubnetPrefix", "appSubnetPrefix"),
        ("natGatewayEnabled", "natGatewayEnabled"),
    ]:
        assert passed[module_parameter] == Ref(parameter)
    for name in ("blobPrivateDnsZoneId", "queuePrivateDnsZoneId", "cosmosPrivateDnsZoneId"):
        assert main.params[name].default == ""  # stand-alone: zones of its own, as before
    (vnet,) = [r for r in network.resources.values() if r.type == "Microsoft.Network/virtualNetworks"]
    assert vnet.body["properties"]["addressSpace"]["addressPrefixes"] == [Ref("addressPrefix")]
    hq_plan = {
        "addressPrefix": "10.42.16.0/24",
        "privateEndpointSubnetPrefix": "10.42.16.0/28",
        "appSubnetPrefix": "10.42.16.128/25",
        "gatewaySubnetPrefix": "",
        "natGatewayEnabled": False,
        "natGateway": {"id": "nat"},
        "privateEndpointSubnetName": "private-endpoints",
        "appSubnetName": "app",
        "gatewaySubnetName": "fabric-gateway",
    }
    subnets = _resolve(network.variables["subnets"], hq_plan) + _resolve(network.variables["gatewaySubnets"], hq_plan)
    assert [(subnet["name"], subnet["properties"]["addressPrefix"]) for subnet in subnets] == [
        ("private-endpoints", "10.42.16.0/28"),
        ("app", "10.42.16.128/25"),
    ]
    assert subnets[1]["properties"]["natGateway"] is None
    assert vnet.body["properties"]["subnets"] == Expr("concat(subnets, gatewaySubnets)")
    # The app subnet stays second: the Function App integrates with subnets[1].
    assert "vnet.properties.subnets[1].id" in network.source
    azd = json.loads((INFRA / "main.parameters.json").read_text(encoding="utf-8"))["parameters"]
    for name, variable in [
        ("vnetAddressPrefix", "POS_VNET_ADDRESS_PREFIX"),
        ("privateEndpointSubnetPrefix", "POS_PRIVATE_ENDPOINT_SUBNET_PREFIX"),
        ("appSubnetPrefix", "POS_APP_SUBNET_PREFIX"),
        ("blobPrivateDnsZoneId", "POS_BLOB_DNS_ZONE_ID"),
        ("queuePrivateDnsZoneId", "POS_QUEUE_DNS_ZONE_ID"),
        ("cosmosPrivateDnsZoneId", "POS_COSMOS_DNS_ZONE_ID"),
        ("natGatewayEnabled", "POS_NAT_GATEWAY"),
        ("operatorGroupId", "POS_OPERATOR_GROUP_ID"),
    ]:
        assert azd[name]["value"].startswith("${" + variable), name


def test_operator_links_are_named_by_network_so_reordering_changes_nothing():
    network = _load("modules/network.bicep")
    links = network.resources["operatorZoneLinks"]
    assert links.body["properties"]["resolutionPolicy"] == "NxDomainRedirect"
    endpoints = _endpoints(NO_ZONES)
    vnet_a = "/subscriptions/s1/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/vnet-hq"
    vnet_b = "/subscriptions/s2/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/vnet-hq"

    def links_for(networks: list[str]) -> dict[str, str]:
        made = {}
        for i in range(len(endpoints) * len(networks)):
            values = {"i": i, "createdZones": endpoints, "linkedVnetIds": networks}
            network_id = _resolve(links.body["properties"]["virtualNetwork"]["id"], values)
            made[bicep_model.evaluate(links.body["name"].text, values)] = network_id
        return made

    forward, backward = links_for([vnet_a, vnet_b]), links_for([vnet_b, vnet_a])
    assert forward == backward and len(forward) == 6
    # Two networks of one name (in two subscriptions) get two links, each named after its network.
    assert all(name.split("/")[1].startswith("vnet-hq-") for name in forward)


def test_an_optional_nat_gateway_gives_the_app_subnet_one_static_outbound_address():
    main, network = _load("main.bicep"), _load("modules/network.bicep")
    assert main.params["natGatewayEnabled"].default is False
    gateway = network.resources["natGateway"]
    address = network.resources["natPublicIp"]
    assert gateway.condition == address.condition == Expr("(natGatewayEnabled)")
    assert address.body["properties"]["publicIPAllocationMethod"] == "Static"
    assert gateway.body["properties"]["publicIpAddresses"] == [{"id": Ref("natPublicIp.id")}]
    values = {"natGatewayEnabled": True, "natGateway": {"id": "nat-id"}}
    assert _resolve(network.variables["subnets"][1]["properties"]["natGateway"], values) == {"id": "nat-id"}
    assert "NAT_PUBLIC_IP" in main.outputs


# -- decision 0089: who may do what --------------------------------------------------------------------


@pytest.mark.parametrize(
    "group, person, kind, expected",
    [
        ("", "user-1", "User", ("user-1", "User")),  # stand-alone: the deployer, as before
        ("", "pipeline-1", "ServicePrincipal", ("pipeline-1", "ServicePrincipal")),
        ("group-ops", "user-1", "User", ("group-ops", "Group")),  # production: HQ's operators' group
    ],
)
def test_the_data_roles_go_to_hqs_operator_group_when_there_is_one(group, person, kind, expected):
    main = _load("main.bicep")
    values = {"operatorGroupId": group, "operatorPrincipalId": person, "operatorPrincipalType": kind}
    assert (
        bicep_model.evaluate(main.variables["operatorId"].text, values),
        bicep_model.evaluate(main.variables["operatorKind"].text, values),
    ) == expected
    for module in ("storage",):
        passed = main.modules[module].body["params"]
        assert (passed["operatorPrincipalId"], passed["operatorPrincipalType"]) == (
            Ref("operatorId"),
            Ref("operatorKind"),
        )
    assert "operatorId" in main.modules["cosmos"].body["params"]["dataContributorPrincipalIds"].text
    assert "operatorPrincipalId" not in main.modules["cosmos"].body["params"]["dataContributorPrincipalIds"].text


# -- decision 0091: alerts that reach someone, IP rules Storage takes, Fabric's way in ---------------------


@pytest.mark.parametrize(
    "required, email, group, outcome",
    [
        (False, "", "", ""),
        (True, "oncall@example.com", "", "oncall@example.com"),
        (True, "", "/subscriptions/s/actionGroups/hq", ""),
        (True, "", "", DeploymentFailure),
    ],
)
def test_production_stops_when_no_one_would_hear_an_alert(required, email, group, outcome):
    main = _load("main.bicep")
    values = {"alertRecipientRequired": required, "alertEmailAddress": email, "alertActionGroupId": group}
    expression = main.variables["checkedAlertEmailAddress"].text
    if outcome is DeploymentFailure:
        with pytest.raises(DeploymentFailure, match="POS_ALERT_EMAIL"):
            bicep_model.evaluate(expression, values)
    else:
        assert bicep_model.evaluate(expression, values) == outcome
    assert main.modules["alerts"].body["params"]["emailAddress"] == Ref("checkedAlertEmailAddress")
    production = json.loads((INFRA / "main.production.parameters.json").read_text(encoding="utf-8"))
    assert production["parameters"]["alertRecipientRequired"]["value"] is True


def test_sampling_keeps_every_log_line_the_alerts_read():
    """The poison-queue rule reads the host's own trace line; the host's adaptive sampling must not drop it.
    The app's lines (http_request, the sweep's, the worker's) go through its own exporter, which does not
    sample logs."""
    host = json.loads((ROOT / "host.json").read_text(encoding="utf-8"))
    sampling = host["logging"]["applicationInsights"]["samplingSettings"]
    kept = set(sampling.get("excludedTypes", "").split(";"))
    assert sampling.get("isEnabled") is False or {"Trace", "Request", "Exception"} <= kept
    telemetry = (ROOT / "triggers" / "telemetry.py").read_text(encoding="utf-8")
    assert "sampling_ratio" not in telemetry  # the distro's default: every record exported


@pytest.mark.parametrize(
    "given, written",
    [("203.0.113.7/32", "203.0.113.7"), ("203.0.113.7", "203.0.113.7"), ("198.51.100.0/24", "198.51.100.0/24")],
)
def test_storage_gets_a_32_as_the_address_alone(given, written):
    storage = _load("modules/storage.bicep")
    (account,) = [r for r in storage.resources.values() if r.type == "Microsoft.Storage/storageAccounts"]
    acls = account.body["properties"]["networkAcls"].text
    rule = acls.split("value:", 1)[1].split("\n", 1)[0].strip()
    assert bicep_model.evaluate(rule, {"range": given}) == written


@pytest.mark.parametrize("mirroring, serverless", [(False, True), (True, True), (True, False), (False, False)])
def test_fabric_mirroring_sets_its_capability_bypass_list_and_data_role(mirroring, serverless):
    cosmos = _load("modules/cosmos.bicep")
    properties = cosmos.resources["account"].body["properties"]
    capabilities = bicep_model.evaluate(
        properties["capabilities"].text, {"serverless": serverless, "fabricMirroring": mirroring}
    )
    expected = (["EnableServerless"] if serverless else []) + (["EnableFabricNetworkAclBypass"] if mirroring else [])
    assert [capability["name"] for capability in capabilities] == expected
    workspaces = ["/tenants/t/subscriptions/0/resourceGroups/Fabric/providers/Microsoft.Fabric/workspaces/w"]
    values = {"fabricMirroring": mirroring, "fabricBypassResourceIds": workspaces}
    assert _resolve(properties["networkAclBypassResourceIds"], values) == (workspaces if mirroring else [])
    role = cosmos.resources["fabricMirroringRole"]
    assert role.condition == Expr("(!empty(fabricPrincipalId))")
    (permission,) = role.body["properties"]["permissions"]
    assert "Microsoft.DocumentDB/databaseAccounts/readAnalytics" in permission["dataActions"]
    assert cosmos.resources["fabricMirroringAssignment"].body["properties"]["roleDefinitionId"] == Ref(
        "fabricMirroringRole.id"
    )


def test_fabric_parameters_flow_from_main_and_the_gateway_subnet_is_delegated_to_power_platform():
    main, network = _load("main.bicep"), _load("modules/network.bicep")
    values = {"fabricMirroring": True, "fabricWorkspaceResourceIds": "/tenants/t/w1, /tenants/t/w2"}
    assert bicep_model.evaluate(main.variables["fabricBypassIds"].text, values) == ["/tenants/t/w1", "/tenants/t/w2"]
    values["fabricMirroring"] = False
    assert bicep_model.evaluate(main.variables["fabricBypassIds"].text, values) == []
    passed = main.modules["cosmos"].body["params"]
    assert passed["fabricBypassResourceIds"] == Ref("fabricBypassIds")
    assert main.modules["network"].body["params"]["gatewaySubnetPrefix"] == Expr(
        "fabricMirroring ? fabricGatewaySubnetPrefix : ''"
    )
    plan = {"gatewaySubnetPrefix": "10.42.17.0/27", "gatewaySubnetName": "fabric-gateway"}
    (gateway,) = _resolve(network.variables["gatewaySubnets"], plan)
    assert gateway["properties"]["addressPrefix"] == "10.42.17.0/27"
    assert gateway["properties"]["delegations"][0]["properties"]["serviceName"] == (
        "Microsoft.PowerPlatform/vnetaccesslinks"
    )
    assert _resolve(network.variables["gatewaySubnets"], {**plan, "gatewaySubnetPrefix": ""}) == []


# -- the guide's commands -------------------------------------------------------------------------------

GUIDE = ROOT / "docs" / "operator-guide.md"
# `az cosmosdb restore`'s options as azure-cli 2.91.0 defines them (azure/cli/command_modules/cosmosdb/
# _params.py, argument_context('cosmosdb restore') and the group's -g), recorded once from the wheel: the CLI
# is not a dependency of this project (decision 0090).
AZ_COSMOSDB_RESTORE_OPTIONS = {
    "--resource-group", "-g", "--target-database-account-name", "-n", "--account-name", "-a",
    "--restore-timestamp", "-t", "--location", "-l", "--databases-to-restore", "--gremlin-databases-to-restore",
    "--tables-to-restore", "--assign-identity", "--default-identity", "--public-network-access", "-p",
    "--disable-ttl", "-d", "--source-backup-location", "--disable-local-auth",
}  # fmt: skip


def test_every_azd_variable_the_guide_sets_is_one_azd_reads():
    text = GUIDE.read_text(encoding="utf-8")
    azd = (INFRA / "main.parameters.json").read_text(encoding="utf-8")
    read_by_azd = set(re.findall(r"\$\{(\w+)", azd)) | {"AZURE_RESOURCE_GROUP"}
    assert set(re.findall(r"azd env set (\w+)", text)) - read_by_azd == set()


def test_the_restore_runbook_uses_the_cli_s_own_options_closed_and_with_ttl_off():
    text = GUIDE.read_text(encoding="utf-8").split("## Backups and restore", 1)[1]
    command = re.search(r"az cosmosdb restore (.*?)\n\s*```", text, re.S).group(1).replace("\\\n", " ")
    options = set(re.findall(r"(?<!\S)(--?[a-z][a-z-]*)", command))
    assert options <= AZ_COSMOSDB_RESTORE_OPTIONS, options - AZ_COSMOSDB_RESTORE_OPTIONS
    assert "--disable-ttl true" in command and "--public-network-access DISABLED" in command
    assert "az cosmosdb delete" in text and "billed per GB" in text


def test_the_restore_template_restores_closed_with_ttl_off_and_the_environment_s_once_only_choices():
    template = _load("restore/cosmos-restore.bicep")
    (account,) = template.resources.values()
    properties = account.body["properties"]
    assert properties["createMode"] == "Restore"
    assert properties["restoreParameters"] == {
        "restoreMode": "PointInTime",
        "restoreSource": Ref("restoreSource"),
        "restoreTimestampInUtc": Ref("restoreTimestamp"),
        "restoreWithTtlDisabled": True,
    }
    assert properties["publicNetworkAccess"] == "Disabled" and properties["disableLocalAuth"] is True
    assert properties["locations"][0]["isZoneRedundant"] == Ref("zoneRedundant")
    main = _load("main.bicep")
    assert (
        template.params["throughputMode"].decorators["allowed"]
        == main.params["cosmosThroughputMode"].decorators["allowed"]
    )
    assert template.params["backupTier"].decorators["allowed"] == main.params["cosmosBackupTier"].decorators["allowed"]
    (live,) = [r for r in _load("modules/cosmos.bicep").resources.values() if r.name == "account"]
    assert properties["backupPolicy"]["type"] == live.body["properties"]["backupPolicy"]["type"] == "Continuous"
    for serverless in (True, False):
        capabilities = bicep_model.evaluate(
            properties["capabilities"].text, {"throughputMode": "serverless" if serverless else "autoscale"}
        )
        assert capabilities == ([{"name": "EnableServerless"}] if serverless else [])
