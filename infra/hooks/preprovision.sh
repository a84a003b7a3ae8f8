#!/bin/sh
# azd preprovision hook (azure.yaml; docs/operator-guide.md, "Deploying to Azure"). What must hold before infra/main.bicep is deployed,
# checked with the az CLI as the signed-in deployer; it stops `azd provision` / `azd up` with a message
# saying what to change. Reads the azd environment (azd exports it to hooks): AZURE_LOCATION,
# AZURE_RESOURCE_GROUP, POS_VNET_ENABLED, POS_ZONE_REDUNDANT, POS_COSMOS_THROUGHPUT_MODE, and
# COSMOS_ACCOUNT_NAME once a first provision has written it.
set -eu

location="${AZURE_LOCATION:?set the region first: azd env set AZURE_LOCATION <region>}"
vnet="${POS_VNET_ENABLED:-false}"
zones="${POS_ZONE_REDUNDANT:-false}"
mode="${POS_COSMOS_THROUGHPUT_MODE:-serverless}"

fail() {
  echo "preprovision: $*" >&2
  exit 1
}

# 1. The region offers Flex Consumption, and zone-redundant Flex Consumption when asked.
if [ "$zones" = "true" ]; then
  regions=$(az functionapp list-flexconsumption-locations --zone-redundant=true --query "[].name" -o tsv)
  what="zone-redundant Flex Consumption"
else
  regions=$(az functionapp list-flexconsumption-locations --query "[].name" -o tsv)
  what="Flex Consumption"
fi
wanted=$(printf '%s' "$location" | tr -d ' ' | tr 'A-Z' 'a-z')
printf '%s\n' "$regions" | tr -d ' \r' | tr 'A-Z' 'a-z' | grep -qx "$wanted" ||
  fail "$location does not offer $what: pick a region from 'az functionapp list-flexconsumption-locations$([ "$zones" = "true" ] && echo ' --zone-redundant=true')'"

# 2. Flex Consumption's virtual network integration delegates the subnet to Microsoft.App/environments:
#    the subscription must have the Microsoft.App resource provider registered (once per subscription).
if [ "$vnet" = "true" ]; then
  state=$(az provider show --namespace Microsoft.App --query registrationState -o tsv 2>/dev/null || echo NotRegistered)
  if [ "$state" != "Registered" ]; then
    echo "preprovision: registering the Microsoft.App resource provider (virtual network integration) ..."
    az provider register --namespace Microsoft.App --wait
  fi
fi

# 3. Choices Cosmos DB takes only when the account is created: an existing account keeps them, and a
#    deployment that asks otherwise fails half-way. Stop before, saying so.
if [ -n "${COSMOS_ACCOUNT_NAME:-}" ] && [ -n "${AZURE_RESOURCE_GROUP:-}" ]; then
  if existing=$(az cosmosdb show --resource-group "$AZURE_RESOURCE_GROUP" --name "$COSMOS_ACCOUNT_NAME" \
    --query "[locations[0].isZoneRedundant, contains(capabilities[].name, 'EnableServerless')]" -o tsv 2>/dev/null); then
    set -- $existing
    has_zones=$(printf '%s' "$1" | tr 'A-Z' 'a-z')
    is_serverless=$(printf '%s' "$2" | tr 'A-Z' 'a-z')
    [ "$has_zones" = "$zones" ] ||
      fail "Cosmos DB account $COSMOS_ACCOUNT_NAME was created with zone redundancy $has_zones and cannot change it; set POS_ZONE_REDUNDANT=$has_zones, or move the data to a new account (docs/operator-guide.md, Backups and restore)"
    if [ "$mode" = "serverless" ]; then want_serverless=true; else want_serverless=false; fi
    [ "$is_serverless" = "$want_serverless" ] ||
      fail "Cosmos DB account $COSMOS_ACCOUNT_NAME is $([ "$is_serverless" = true ] && echo serverless || echo provisioned) and POS_COSMOS_THROUGHPUT_MODE=$mode asks otherwise: the mode is chosen when the account is created"
  fi
fi
echo "preprovision: $location offers $what; ready to provision."
