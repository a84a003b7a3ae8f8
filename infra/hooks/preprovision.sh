#!/bin/sh
# azd preprovision hook (azure.yaml; docs/operator-guide.md, "Deploying to Azure"). What must hold before
# infra/main.bicep is deployed, checked with the az CLI as the signed-in deployer. It reports every problem
# it finds, each with what to do and who does it (the deployer, or a subscription owner once), and stops
# `azd provision` / `azd up` before anything is deployed rather than half-way (decision 0089).
# Reads the azd environment (azd exports it to hooks): AZURE_LOCATION, AZURE_RESOURCE_GROUP,
# AZURE_PRINCIPAL_TYPE, POS_* (main.parameters.json), and COSMOS_ACCOUNT_NAME once a provision wrote it.
set -eu

location="${AZURE_LOCATION:?set the region first: azd env set AZURE_LOCATION <region>}"
group="${AZURE_RESOURCE_GROUP:-}"
vnet="${POS_VNET_ENABLED:-false}"
zones="${POS_ZONE_REDUNDANT:-false}"
mode="${POS_COSMOS_THROUGHPUT_MODE:-serverless}"
fabric="${POS_FABRIC_MIRRORING:-false}"
# The account the template will manage: a restored one (POS_COSMOS_ACCOUNT_NAME) before the one the last
# provision named.
account="${POS_COSMOS_ACCOUNT_NAME:-${COSMOS_ACCOUNT_NAME:-}}"
problems=""

problem() {
  problems="${problems}preprovision: $*
"
}
lower() { printf '%s' "$1" | tr 'A-Z' 'a-z'; }

# Whether the signed-in deployer may do ACTION at SCOPE (a resource id): Resource Manager's own answer
# (Microsoft.Authorization/permissions: each role's actions and notActions), matched the way Azure matches
# them, '*' standing for any text, case-insensitively. Answers "unknown" when the question cannot be asked.
may() {
  scope="$1"
  wanted=$(lower "$2")
  rows=$(az rest --method get --url "$scope/providers/Microsoft.Authorization/permissions?api-version=2022-04-01" \
    --query "value[].[join(' ', actions), join(' ', notActions)]" -o tsv 2>/dev/null) || { echo unknown; return; }
  set -f
  answer=no
  while IFS="$(printf '\t')" read -r actions denied; do
    granted=no
    for pattern in $(lower "$actions"); do
      case "$wanted" in $pattern) granted=yes ;; esac
    done
    for pattern in $(lower "${denied:-}"); do
      case "$wanted" in $pattern) granted=no ;; esac
    done
    [ "$granted" = yes ] && answer=yes
  done <<ROWS
$rows
ROWS
  set +f
  echo "$answer"
}

# 1. The region offers Flex Consumption, and zone-redundant Flex Consumption when asked.
if [ "$zones" = "true" ]; then
  regions=$(az functionapp list-flexconsumption-locations --zone-redundant=true --query "[].name" -o tsv)
  what="zone-redundant Flex Consumption"
else
  regions=$(az functionapp list-flexconsumption-locations --query "[].name" -o tsv)
  what="Flex Consumption"
fi
wanted_region=$(lower "$(printf '%s' "$location" | tr -d ' ')")
printf '%s\n' "$regions" | tr -d ' \r' | tr 'A-Z' 'a-z' | grep -qx "$wanted_region" ||
  problem "$location does not offer $what: pick a region from 'az functionapp list-flexconsumption-locations$([ "$zones" = "true" ] && echo ' --zone-redundant=true')'"

# 2. Resource providers, registered once per subscription. The deployer registers what it may; what it may
#    not (registering needs a subscription-scope role) a subscription owner registers once.
needed="Microsoft.Web Microsoft.Storage Microsoft.DocumentDB Microsoft.OperationalInsights Microsoft.Insights Microsoft.ManagedIdentity"
[ "$vnet" = "true" ] && needed="$needed Microsoft.Network Microsoft.App"
[ "$fabric" = "true" ] && [ -n "${POS_FABRIC_GATEWAY_SUBNET_PREFIX:-}" ] && needed="$needed Microsoft.PowerPlatform"
registered=$(lower "$(az provider list --query "[?registrationState=='Registered'].namespace" -o tsv | tr -d '\r')")
for namespace in $needed; do
  printf '%s\n' "$registered" | grep -qx "$(lower "$namespace")" && continue
  echo "preprovision: registering the $namespace resource provider ..."
  az provider register --namespace "$namespace" --wait >/dev/null 2>&1 ||
    problem "resource provider $namespace is not registered and you may not register it: a subscription owner runs once 'az provider register --namespace $namespace'"
done

# 3. The resource group, and the deployer's rights in it: create resources (deployments) and role
#    assignments (the identity's and the operators' data roles). Creating the group is subscription scope.
if [ -n "$group" ]; then
  if group_id=$(az group show --name "$group" --query id -o tsv 2>/dev/null); then
    if [ "$(may "$group_id" Microsoft.Resources/deployments/write)" = no ]; then
      problem "you may not deploy into resource group $group: ask for Contributor (or Owner) on it"
    fi
    if [ "$(may "$group_id" Microsoft.Authorization/roleAssignments/write)" = no ]; then
      problem "you may not create role assignments in resource group $group (Contributor cannot): ask for Role Based Access Control Administrator (or User Access Administrator, or Owner) on it"
    fi
  else
    problem "resource group $group does not exist (or you cannot read it): a subscription owner creates it once, 'az group create -n $group -l $location', and gives you Contributor and Role Based Access Control Administrator on it"
  fi
fi

# 4. HQ's central private DNS zones (landing zone): the endpoints' records are written into them, which
#    needs Microsoft.Network/privateDnsZones/join/action on each zone.
if [ "$vnet" = "true" ]; then
  for zone in "${POS_BLOB_DNS_ZONE_ID:-}" "${POS_QUEUE_DNS_ZONE_ID:-}" "${POS_COSMOS_DNS_ZONE_ID:-}"; do
    [ -n "$zone" ] || continue
    if [ "$(may "$zone" Microsoft.Network/privateDnsZones/join/action)" != yes ]; then
      problem "you may not register private endpoints in $zone: HQ's network team gives you Private DNS Zone Contributor (or a role with Microsoft.Network/privateDnsZones/join/action) on it"
    fi
  done
fi

# 5. HQ's addresses: the firewalls take public addresses only, and Storage no /31.
set -f
for range in $(printf '%s' "${POS_OPERATOR_IP_RANGES:-}" | tr ',' ' '); do
  case "$range" in
    10.* | 192.168.* | 172.1[6-9].* | 172.2[0-9].* | 172.3[01].*)
      problem "POS_OPERATOR_IP_RANGES: $range is a private range, which the accounts' firewalls refuse; HQ's private network comes in by peering and POS_OPERATOR_VNET_IDS (or HQ's own DNS zones)" ;;
    */31) problem "POS_OPERATOR_IP_RANGES: $range: Storage refuses /31 ranges; give the two addresses" ;;
  esac
done
set +f

# 6. Someone hears the alerts in production.
if [ "${POS_ALERT_RECIPIENT_REQUIRED:-false}" = "true" ] && [ -z "${POS_ALERT_EMAIL:-}" ] && [ -z "${POS_ALERT_ACTION_GROUP_ID:-}" ]; then
  problem "production notifies someone: azd env set POS_ALERT_EMAIL hq-oncall@example.com, or POS_ALERT_ACTION_GROUP_ID <resource id of HQ's action group>"
fi

# 7. A pipeline signed in as a service principal: its role assignments must say so, or Resource Manager
#    refuses them (UnmatchedPrincipalType).
if [ -z "${POS_OPERATOR_GROUP_ID:-}" ] && [ "${AZURE_PRINCIPAL_TYPE:-User}" != "ServicePrincipal" ] &&
  [ "$(lower "$(az account show --query user.type -o tsv 2>/dev/null || true)")" = "serviceprincipal" ]; then
  problem "you are signed in as a service principal: azd env set AZURE_PRINCIPAL_TYPE ServicePrincipal (or give the data roles to HQ's operator group: POS_OPERATOR_GROUP_ID)"
fi

# 8. Choices Cosmos DB takes only when the account is created: an existing (or restored) account keeps
#    them, and a deployment that asks otherwise fails half-way.
if [ -n "$account" ] && [ -n "$group" ]; then
  if existing=$(az cosmosdb show --resource-group "$group" --name "$account" \
    --query "[locations[0].isZoneRedundant, contains(capabilities[].name, 'EnableServerless')]" -o tsv 2>/dev/null); then
    set -- $existing
    has_zones=$(lower "$1")
    is_serverless=$(lower "$2")
    [ "$has_zones" = "$zones" ] ||
      problem "Cosmos DB account $account has zone redundancy $has_zones and cannot change it; set POS_ZONE_REDUNDANT=$has_zones, or move the data to a new account (docs/operator-guide.md, Backups and restore)"
    if [ "$mode" = "serverless" ]; then want_serverless=true; else want_serverless=false; fi
    [ "$is_serverless" = "$want_serverless" ] ||
      problem "Cosmos DB account $account is $([ "$is_serverless" = true ] && echo serverless || echo provisioned) and POS_COSMOS_THROUGHPUT_MODE=$mode asks otherwise: the mode is chosen when the account is created"
  elif [ -n "${POS_COSMOS_ACCOUNT_NAME:-}" ]; then
    problem "POS_COSMOS_ACCOUNT_NAME=$account: no such Cosmos DB account in $group (a restore not finished, or another resource group)"
  fi
fi

if [ -n "$problems" ]; then
  printf '%s' "$problems" >&2
  exit 1
fi
echo "preprovision: $location offers $what; ready to provision."
