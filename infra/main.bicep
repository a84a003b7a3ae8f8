// One environment of the Partner POS Ingestion Service (resource group scope):
// Function App on Flex Consumption (Python 3.13), its Storage account, Cosmos DB, Log Analytics with
// Application Insights, and a user-assigned managed identity holding every data-plane role the app needs.
// With vnetEnabled (production), a virtual network: the app integrates with it and reaches Storage and
// Cosmos DB through private endpoints only.
// No account key or connection string with a key is in any app setting: Storage, Cosmos DB and
// Application Insights accept only Microsoft Entra tokens (see docs/decisions/0064-flex-consumption-identity-only.md).
//
// Deploy: docs/operator-guide.md, "Deploying to Azure" (azd up, or az deployment group create + func publish).
// Parameter files: main.test.parameters.json, main.production.parameters.json; main.parameters.json is azd's.

targetScope = 'resourceGroup'

@description('Environment name (test, production, or an azd environment name: up to 64 letters, digits and - . ( ) _); its first 12 letters and digits are part of most resource names.')
@minLength(1)
@maxLength(64)
param environmentName string

@description('Azure region of every resource; defaults to the resource group\'s.')
param location string = resourceGroup().location

@description('Cosmos DB throughput: serverless (pay per request, test) or autoscale (provisioned, shared by the database\'s containers).')
@allowed([
  'serverless'
  'autoscale'
])
param cosmosThroughputMode string

@description('Autoscale only: the most RU/s the database scales to (it scales between 10% of this and this); a multiple of 1,000.')
@minValue(1000)
@maxValue(1000000)
param cosmosAutoscaleMaxThroughput int = 1000

@description('Flex Consumption: memory of one instance, in MB.')
@allowed([
  512
  2048
  4096
])
param instanceMemoryMB int

@description('Flex Consumption: the most instances the app scales out to (the plan accepts 40 to 1,000); it applies to each scale group on its own (http, and each non-HTTP function: the reconciliation queue, the sweep and the export timers), not to the app as a whole.')
@minValue(40)
@maxValue(1000)
param maximumInstanceCount int

@description('Flex Consumption: concurrent HTTP requests one instance is given before the platform starts another. 1, the platform default for Python: an instance (2,048 MB, one core) runs one Python worker process (Flex ignores FUNCTIONS_WORKER_PROCESS_COUNT) and the accept is CPU-bound, so a second concurrent request only queues behind the GIL (measured: no more records per second, p99 two to three times longer; docs/performance.md, the figures against their targets).')
@minValue(1)
@maxValue(1000)
param httpPerInstanceConcurrency int = 1

@description('Flex Consumption: instances of the HTTP group kept running when idle (billed while idle); 0 scales to zero.')
@minValue(0)
@maxValue(1000)
param alwaysReadyInstanceCount int = 0

@description('Spread the Flex Consumption plan and the Cosmos DB account over availability zones (the region must offer them). Needs Standard_ZRS storage. With it the platform keeps at least 2 always-ready instances per scale group (http, and each non-HTTP function on its own: the reconciliation queue, the sweep and the export timers: 8 billed instances). Cosmos DB takes it only when the account is created: changing it later fails.')
param zoneRedundant bool = false

@description('Virtual network: the app integrates with it, Storage (blob, queue) and Cosmos DB are reached through private endpoints and refuse public network access (except from operatorIpRanges).')
param vnetEnabled bool = false

@description('HQ\'s way in with vnetEnabled: comma-separated public IPv4 addresses or CIDR ranges (e.g. 203.0.113.7,198.51.100.0/24) that may reach Cosmos DB and the queues from outside the virtual network, for `python -m hq`. Empty: none (public access off). A /32 is written as the address for Storage; private ranges (10/8, 172.16/12, 192.168/16) are refused by both firewalls: HQ\'s private addresses come in through operatorVnetIds. Remove an address and provision again to close it.')
param operatorIpRanges string = ''

@description('vnetEnabled: resource ids of other virtual networks (peered with this one, e.g. HQ\'s) whose machines resolve the accounts\' private endpoints: the private DNS zones created here are linked to them too (not HQ\'s own zones, given below). Comma-separated; empty: none.')
param operatorVnetIds string = ''

@description('vnetEnabled: address space of the virtual network (CIDR); in a landing zone, the range HQ\'s address plan gives this spoke (it must not overlap any peered network).')
param vnetAddressPrefix string = '10.0.0.0/16'

@description('vnetEnabled: subnet of the private endpoints (CIDR inside vnetAddressPrefix; 3 endpoints: a /28 is enough).')
param privateEndpointSubnetPrefix string = '10.0.1.0/24'

@description('vnetEnabled: subnet the Function App integrates with, delegated to Microsoft.App/environments (CIDR inside vnetAddressPrefix; one address per instance at most: a /24 for up to 200 instances).')
param appSubnetPrefix string = '10.0.2.0/24'

@description('vnetEnabled: resource id of HQ\'s existing privatelink.blob.core.windows.net zone (landing zone: central private DNS). Set: the blob endpoint is registered there and no zone or link is created here. Empty: a zone of this environment.')
param blobPrivateDnsZoneId string = ''

@description('vnetEnabled: resource id of HQ\'s existing privatelink.queue.core.windows.net zone; as blobPrivateDnsZoneId.')
param queuePrivateDnsZoneId string = ''

@description('vnetEnabled: resource id of HQ\'s existing privatelink.documents.azure.com zone; as blobPrivateDnsZoneId.')
param cosmosPrivateDnsZoneId string = ''

@description('vnetEnabled: a NAT gateway with one static public IP for the app\'s outbound traffic (OAuth issuers\' keys, Application Insights), for a subnet without default outbound access and without a route to HQ\'s firewall. Its address is the output NAT_PUBLIC_IP.')
param natGatewayEnabled bool = false

@description('Days Log Analytics (and so Application Insights) keeps logs.')
@minValue(30)
@maxValue(730)
param logRetentionDays int

@description('Storage account redundancy.')
@allowed([
  'Standard_LRS'
  'Standard_ZRS'
])
param storageSku string = 'Standard_LRS'

@description('Optional: object id of the HQ operator (user or group) who runs `python -m hq` against this environment; gets the Cosmos DB and queue data roles. azd: the deployer. Empty: none. Ignored when operatorGroupId is set.')
param operatorPrincipalId string = ''

@description('Optional (production): object id of the Entra group of HQ\'s operators; the data roles go to the group instead of operatorPrincipalId, so that the deployer is not a standing data-plane writer.')
param operatorGroupId string = ''

@description('Cosmos DB continuous backup (point-in-time restore into a new account): Continuous7Days (no charge for the backup storage) or Continuous30Days (billed per GB). Periodic backup is not offered: its restore needs a support request. An account cannot go back from continuous to periodic.')
@allowed([
  'Continuous7Days'
  'Continuous30Days'
])
param cosmosBackupTier string = 'Continuous7Days'

@description('Optional: the name of an existing Cosmos DB account to use instead of the one this template names, e.g. an account restored to a point in time (docs/operator-guide.md, Backups and restore). Empty: cosmos-pos-<environment>-<token>.')
param cosmosAccountName string = ''

@description('Log every Cosmos DB data-plane request (CDBDataPlaneRequests, about 1 KB each): for an investigation or a test environment; in production it would be the largest log table by far (docs/operator-guide.md, Sizing and cost).')
param cosmosDataPlaneLogs bool = false

@description('Days a deleted blob (the deployment package, the host\'s keys and leases) or container can be restored from soft delete.')
@minValue(1)
@maxValue(365)
param blobSoftDeleteDays int = 7

@description('Optional: an e-mail address the alert rules notify (an action group is created for it).')
param alertEmailAddress string = ''

@description('Production: the deployment stops unless alertEmailAddress or alertActionGroupId names someone, so that no alert fires unheard.')
param alertRecipientRequired bool = false

@description('Optional: resource id of an existing action group the alert rules notify (on-call, Teams, a webhook), besides alertEmailAddress.')
param alertActionGroupId string = ''

@description('Kind of principal operatorPrincipalId is.')
@allowed([
  'User'
  'Group'
  'ServicePrincipal'
])
param operatorPrincipalType string = 'User'

@description('Name of the Parquet export\'s container in the app\'s storage account (docs/exports.md).')
param exportContainerName string = 'exports'

@description('Days after which an exported blob moves to the Cool tier (lifecycle management).')
@minValue(1)
param exportCoolAfterDays int = 30

@description('Microsoft Fabric mirroring of the Cosmos DB database into OneLake, for an HQ that lives in Fabric (docs/exports.md): lets Fabric through the Cosmos DB firewall; continuous backup, its prerequisite, is always on. The mirror itself is created in the Fabric workspace.')
param fabricMirroring bool = false

@description('fabricMirroring: resource ids of the Fabric workspaces let through the Cosmos DB firewall (networkAclBypassResourceIds, with the EnableFabricNetworkAclBypass capability), comma-separated, in the form Fabric\'s documentation gives: /tenants/TENANT_ID/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/Fabric/providers/Microsoft.Fabric/workspaces/WORKSPACE_ID.')
param fabricWorkspaceResourceIds string = ''

@description('fabricMirroring: object id of the Fabric workspace identity; gets a Cosmos DB data role with readMetadata and readAnalytics, as Fabric\'s private-network mirroring guide asks. Empty: none.')
param fabricPrincipalId string = ''

@description('fabricMirroring with vnetEnabled: a subnet (CIDR inside vnetAddressPrefix) delegated to Microsoft.PowerPlatform/vnetaccesslinks, for HQ\'s Fabric virtual network data gateway if its Fabric reaches the account through one (the workspace bypass itself needs no gateway). Empty: none.')
param fabricGatewaySubnetPrefix string = ''

// App settings the code reads (core/settings.py); the defaults are the code's own.
@description('RATE_LIMIT_PER_MINUTE: requests per partner per minute; 0 turns it off.')
@minValue(0)
param rateLimitPerMinute int = 600

@description('RECONCILE_DELAY_SECONDS: delay between a daily close and its reconciliation.')
@minValue(0)
@maxValue(604800)
param reconcileDelaySeconds int = 900

@description('RECONCILE_SWEEP_SCHEDULE: NCRONTAB of the sweep that re-enqueues overdue closes.')
param reconcileSweepSchedule string = '0 */5 * * * *'

@description('EXPORT_SCHEDULE: NCRONTAB of the export timer, which writes the store-days reconciled since its last run as Parquet.')
param exportSchedule string = '0 */15 * * * *'

@description('RECONCILE_SWEEP_GRACE_SECONDS: how long past its due time a close waits before the sweep re-enqueues it.')
@minValue(0)
param reconcileSweepGraceSeconds int = 300

@description('BATCH_MARKER_TTL_DAYS: 0 (default) keeps batch markers forever; N > 0 lets Cosmos DB expire them after N days, after which a resent batch is applied again (docs/operator-guide.md, Settings).')
@minValue(0)
param batchMarkerTtlDays int = 0

@description('TRADE_RECORD_RETENTION_DAYS: 0 (default) keeps every store-day in Cosmos DB; N >= 7 refuses writes for store-days older than N days and lets their records, index entries and trade record batches expire 2 days later; closes and results stay (docs/decisions/0086-retention-of-trade-records.md).')
@minValue(0)
param tradeRecordRetentionDays int = 0

@description('OAUTH_ISSUER: identity providers whose bearer tokens are accepted beside API keys, comma-separated (Entra ID: https://login.microsoftonline.com/TENANT_ID/v2.0); empty: API keys only (docs/operator-guide.md, Partners on bearer tokens).')
param oauthIssuer string = ''

@description('OAUTH_AUDIENCE: what a token\'s aud may name, comma-separated (Entra ID: the API\'s application id, and its api:// URI for v1 tokens); required with oauthIssuer.')
param oauthAudience string = ''

@description('LOG_LEVEL of the app\'s own loggers.')
@allowed([
  'DEBUG'
  'INFO'
  'WARNING'
  'ERROR'
])
param logLevel string = 'INFO'

// The Cosmos DB containers: the same file the code creates them from (backends/cosmos/connection.py).
var cosmosDefinitions = loadJsonContent('cosmos/containers.json')
// The route prefix the host serves under, for the base URL output.
var hostSettings = loadJsonContent('../host.json')
var cosmosDatabaseName = 'pos'
// backends/queues.py RECONCILE_QUEUE and the poison queue the Functions host moves failed messages to;
// then backends/webhook_backend.py WEBHOOK_QUEUE (webhook deliveries) and its poison queue.
var queueNames = [
  'reconcile-requests'
  'reconcile-requests-poison'
  'webhook-deliveries'
  'webhook-deliveries-poison'
]
var deploymentContainerName = 'app-package'

var resourceToken = toLower(uniqueString(resourceGroup().id, environmentName))
// azd allows 64 characters with - . ( ) _: the slug keeps only lowercase letters and digits, which
// every resource type accepts anywhere in a name, and at most 12 of them, so that the longest name
// ('cosmos-pos-' + 12 + '-' + 13 = 37) stays within the strictest limit (Cosmos DB: 3-44 lowercase
// letters, digits and -). The Storage account (3-24 lowercase letters and digits) takes the token only.
var environmentSlug = take(toLower(replace(replace(replace(replace(replace(environmentName, '-', ''), '_', ''), '.', ''), '(', ''), ')', '')), 12)
var nameSuffix = empty(environmentSlug) ? resourceToken : '${environmentSlug}-${resourceToken}'
var names = {
  identity: 'id-pos-${nameSuffix}'
  workspace: 'log-pos-${nameSuffix}'
  appInsights: 'appi-pos-${nameSuffix}'
  storage: 'stpos${resourceToken}'
  cosmos: empty(cosmosAccountName) ? 'cosmos-pos-${nameSuffix}' : cosmosAccountName
  plan: 'plan-pos-${nameSuffix}'
  functionApp: 'func-pos-${nameSuffix}'
  vnet: 'vnet-pos-${nameSuffix}'
}

// Values Azure constrains beyond what a decorator can say: a wrong one stops the deployment with this
// message when Resource Manager evaluates it (if() evaluates only the branch taken), before the
// resource that would refuse it is touched.
var checkedAutoscaleMaxThroughput = cosmosAutoscaleMaxThroughput % 1000 == 0 ? cosmosAutoscaleMaxThroughput : int('cosmosAutoscaleMaxThroughput must be a multiple of 1000')
var checkedAlwaysReadyInstanceCount = alwaysReadyInstanceCount > maximumInstanceCount ? int('alwaysReadyInstanceCount must not exceed maximumInstanceCount') : zoneRedundant && alwaysReadyInstanceCount == 1 ? int('with zoneRedundant, alwaysReadyInstanceCount must be 0 or at least 2 (the platform keeps 2 per scale group anyway)') : alwaysReadyInstanceCount
var checkedStorageSku = zoneRedundant && storageSku != 'Standard_ZRS' ? int('with zoneRedundant, storageSku must be Standard_ZRS') : storageSku
var checkedAlertEmailAddress = alertRecipientRequired && empty(alertEmailAddress) && empty(alertActionGroupId) ? string(int('alertRecipientRequired: set alertEmailAddress (azd: POS_ALERT_EMAIL) or alertActionGroupId (POS_ALERT_ACTION_GROUP_ID), or no one hears an alert')) : alertEmailAddress
// HQ's addresses, only where the accounts are closed to the public (vnetEnabled); without the network the
// accounts are open to any address that signs in with Entra ID, and rules would close them to all others.
var operatorIpRules = vnetEnabled && !empty(trim(operatorIpRanges)) ? split(replace(operatorIpRanges, ' ', ''), ',') : []
var operatorNetworks = vnetEnabled && !empty(trim(operatorVnetIds)) ? split(replace(operatorVnetIds, ' ', ''), ',') : []
var fabricBypassIds = fabricMirroring && !empty(trim(fabricWorkspaceResourceIds)) ? split(replace(fabricWorkspaceResourceIds, ' ', ''), ',') : []
// Who holds the data roles besides the app: HQ's operator group when given, else the single operator.
var operatorId = empty(operatorGroupId) ? operatorPrincipalId : operatorGroupId
var operatorKind = empty(operatorGroupId) ? operatorPrincipalType : 'Group'
// Public access: open without the network; with it, off, or on for operatorIpRules alone (the accounts'
// firewalls then refuse every other public address).
var publicNetworkAccess = !vnetEnabled || !empty(operatorIpRules) ? 'Enabled' : 'Disabled'
var tags = {
  'azd-env-name': environmentName
  application: 'pos-ingestion'
}

resource identity 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' = {
  name: names.identity
  location: location
  tags: tags
}

module monitoring 'modules/monitoring.bicep' = {
  name: 'monitoring'
  params: {
    location: location
    tags: tags
    workspaceName: names.workspace
    appInsightsName: names.appInsights
    retentionInDays: logRetentionDays
    appPrincipalId: identity.properties.principalId
  }
}

module storage 'modules/storage.bicep' = {
  name: 'storage'
  params: {
    location: location
    tags: tags
    name: names.storage
    skuName: checkedStorageSku
    deploymentContainerName: deploymentContainerName
    queueNames: queueNames
    appPrincipalId: identity.properties.principalId
    operatorPrincipalId: operatorId
    operatorPrincipalType: operatorKind
    publicNetworkAccess: publicNetworkAccess
    networkRestricted: vnetEnabled
    allowedIpRanges: operatorIpRules
    softDeleteDays: blobSoftDeleteDays
    workspaceId: monitoring.outputs.workspaceId
    exportContainerName: exportContainerName
    exportCoolAfterDays: exportCoolAfterDays
  }
}

module cosmos 'modules/cosmos.bicep' = {
  name: 'cosmos'
  params: {
    location: location
    tags: tags
    accountName: names.cosmos
    databaseName: cosmosDatabaseName
    containers: cosmosDefinitions.containers
    throughputMode: cosmosThroughputMode
    autoscaleMaxThroughput: checkedAutoscaleMaxThroughput
    dataContributorPrincipalIds: empty(operatorId) ? [
      identity.properties.principalId
    ] : [
      identity.properties.principalId
      operatorId
    ]
    zoneRedundant: zoneRedundant
    publicNetworkAccess: publicNetworkAccess
    allowedIpRanges: operatorIpRules
    backupTier: cosmosBackupTier
    dataPlaneLogs: cosmosDataPlaneLogs
    workspaceId: monitoring.outputs.workspaceId
    fabricMirroring: fabricMirroring
    fabricBypassResourceIds: fabricBypassIds
    fabricPrincipalId: fabricMirroring ? fabricPrincipalId : ''
  }
}

module network 'modules/network.bicep' = if (vnetEnabled) {
  name: 'network'
  params: {
    location: location
    tags: tags
    vnetName: names.vnet
    storageAccountId: storage.outputs.id
    cosmosAccountId: cosmos.outputs.id
    linkedVnetIds: operatorNetworks
    addressPrefix: vnetAddressPrefix
    privateEndpointSubnetPrefix: privateEndpointSubnetPrefix
    appSubnetPrefix: appSubnetPrefix
    gatewaySubnetPrefix: fabricMirroring ? fabricGatewaySubnetPrefix : ''
    privateDnsZoneIds: {
      blob: blobPrivateDnsZoneId
      queue: queuePrivateDnsZoneId
      cosmos: cosmosPrivateDnsZoneId
    }
    natGatewayEnabled: natGatewayEnabled
  }
}

// Every setting the code reads in Azure (tests/toolchain/test_infra.py checks this list against the code).
var appSettings = {
  // Functions host storage and the queue trigger's connection, identity-based (no connection string).
  AzureWebJobsStorage__accountName: storage.outputs.name
  AzureWebJobsStorage__credential: 'managedidentity'
  AzureWebJobsStorage__clientId: identity.properties.clientId
  // DefaultAzureCredential (Cosmos DB adapter) picks the user-assigned identity by this.
  AZURE_CLIENT_ID: identity.properties.clientId
  // Not a secret (an ingestion endpoint and id); with local auth disabled, ingestion needs the Entra token below.
  APPLICATIONINSIGHTS_CONNECTION_STRING: monitoring.outputs.connectionString
  APPLICATIONINSIGHTS_AUTHENTICATION_STRING: 'ClientId=${identity.properties.clientId};Authorization=AAD'
  // The app configures Azure Monitor for its own log lines (triggers/telemetry.py); the worker must not as well.
  PYTHON_APPLICATIONINSIGHTS_ENABLE_TELEMETRY: 'false'
  POS_BACKEND: 'azure'
  COSMOS_ENDPOINT: cosmos.outputs.endpoint
  COSMOS_DATABASE: cosmosDatabaseName
  COSMOS_CREATE_CONTAINERS: 'false'
  BATCH_MARKER_TTL_DAYS: string(batchMarkerTtlDays)
  TRADE_RECORD_RETENTION_DAYS: string(tradeRecordRetentionDays)
  RATE_LIMIT_PER_MINUTE: string(rateLimitPerMinute)
  AUTH_FAILURES_PER_MINUTE: '60' // failed authentications per client address per minute, each instance (triggers/auth_failures.py)
  OAUTH_ISSUER: oauthIssuer
  OAUTH_AUDIENCE: oauthAudience
  OAUTH_KEYS_REFRESH_SECONDS: '300' // fewest seconds between two fetches of an issuer's keys (backends/openid_keys.py)
  RECONCILE_DELAY_SECONDS: string(reconcileDelaySeconds)
  RECONCILE_SWEEP_SCHEDULE: reconcileSweepSchedule
  RECONCILE_SWEEP_GRACE_SECONDS: string(reconcileSweepGraceSeconds)
  // The export timer (triggers/exports.py) writes into the export container as the app's identity.
  EXPORT_SCHEDULE: exportSchedule
  EXPORT_DESTINATION: storage.outputs.exportContainerUrl
  LOG_LEVEL: logLevel
}

module functionApp 'modules/functionapp.bicep' = {
  name: 'functionapp'
  params: {
    location: location
    tags: tags
    planName: names.plan
    appName: names.functionApp
    identityId: identity.id
    deploymentContainerUrl: '${storage.outputs.blobEndpoint}${deploymentContainerName}'
    instanceMemoryMB: instanceMemoryMB
    maximumInstanceCount: maximumInstanceCount
    httpPerInstanceConcurrency: httpPerInstanceConcurrency
    alwaysReadyHttpInstances: checkedAlwaysReadyInstanceCount
    zoneRedundant: zoneRedundant
    virtualNetworkSubnetId: vnetEnabled ? network.outputs.appSubnetId : ''
    appSettings: appSettings
  }
}

// Alert rules on what needs HQ (docs/operator-guide.md, "Alerts"): failed requests, poisoned reconciliation requests,
// overdue closes, Cosmos DB throttling, function errors.
module alerts 'modules/alerts.bicep' = {
  name: 'alerts'
  params: {
    location: location
    tags: tags
    namePrefix: 'pos-${nameSuffix}'
    workspaceId: monitoring.outputs.workspaceId
    appInsightsId: monitoring.outputs.id
    cosmosAccountId: cosmos.outputs.id
    emailAddress: checkedAlertEmailAddress
    actionGroupId: alertActionGroupId
    poisonQueueName: queueNames[1]
  }
}

output FUNCTION_APP_NAME string = functionApp.outputs.name
output BASE_URL string = 'https://${functionApp.outputs.defaultHostName}/${hostSettings.extensions.http.routePrefix}'
// What `python -m hq` needs to work on this environment (docs/operator-guide.md, "Onboard the first partner").
output POS_BACKEND string = 'azure'
output COSMOS_ENDPOINT string = cosmos.outputs.endpoint
output COSMOS_DATABASE string = cosmosDatabaseName
// For a second operator's Cosmos DB data role (docs/operator-guide.md, "Keys, a second operator, app settings").
output COSMOS_ACCOUNT_NAME string = cosmos.outputs.name
output AzureWebJobsStorage__accountName string = storage.outputs.name
// Where `hq export --out` and the export timer write (docs/exports.md).
output EXPORT_DESTINATION string = storage.outputs.exportContainerUrl
output RESOURCE_GROUP_NAME string = resourceGroup().name
// The app's outbound address with natGatewayEnabled (for HQ's and the OAuth issuers' allow-lists); empty otherwise.
output NAT_PUBLIC_IP string = vnetEnabled && natGatewayEnabled ? network.outputs.natPublicIpAddress : ''
