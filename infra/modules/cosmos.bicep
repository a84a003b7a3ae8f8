// Cosmos DB (NoSQL API): the account, database `pos` and the containers defined in
// infra/cosmos/containers.json (passed in by main.bicep, so Bicep and the code share one definition).
// Key authentication is off (disableLocalAuth): principals get the built-in data-plane role instead.

param location string
param tags object
param accountName string
param databaseName string
@description('ARM sqlContainers resource objects (id, partitionKey, indexingPolicy, defaultTtl).')
param containers array
@allowed([
  'serverless'
  'autoscale'
])
param throughputMode string
@description('Autoscale only: maximum RU/s, shared by the database\'s containers.')
param autoscaleMaxThroughput int = 1000
@description('Principal ids given Cosmos DB Built-in Data Contributor on the account.')
param dataContributorPrincipalIds array
@description('Keep the account\'s replicas in the region spread over availability zones.')
param zoneRedundant bool
@description('Enabled, or Disabled when the account is reached only through its private endpoint.')
@allowed([
  'Enabled'
  'Disabled'
])
param publicNetworkAccess string
@description('Public addresses (IPv4 or CIDR) allowed through the firewall while publicNetworkAccess is Enabled; empty: every address (no IP rule).')
param allowedIpRanges array = []
@description('Continuous backup tier: Continuous7Days or Continuous30Days.')
@allowed([
  'Continuous7Days'
  'Continuous30Days'
])
param backupTier string
@description('Send every data-plane request to the workspace (CDBDataPlaneRequests).')
param dataPlaneLogs bool
@description('Log Analytics workspace of the diagnostic settings.')
param workspaceId string
@description('Microsoft Fabric mirrors the database into OneLake (docs/exports.md): lets Azure services such as Fabric through the firewall. Its other prerequisite, continuous backup, is always on.')
param fabricMirroring bool = false
@description('Fabric workspaces let through the firewall (networkAclBypassResourceIds); empty: none.')
param fabricBypassResourceIds array = []
@description('Principal the Fabric mirror\'s connection signs in as: gets the mirroring data role (readMetadata, readAnalytics); empty: none.')
param fabricPrincipalId string = ''

// Cosmos DB Built-in Data Contributor (data plane: read, write, query items; read metadata).
var builtInDataContributor = '00000000-0000-0000-0000-000000000002'
var serverless = throughputMode == 'serverless'

resource account 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' = {
  name: accountName
  location: location
  tags: tags
  kind: 'GlobalDocumentDB'
  properties: {
    databaseAccountOfferType: 'Standard'
    consistencyPolicy: {
      defaultConsistencyLevel: 'Session'
    }
    locations: [
      {
        locationName: location
        failoverPriority: 0
        isZoneRedundant: zoneRedundant
      }
    ]
    // EnableFabricNetworkAclBypass: Fabric's workspaces in networkAclBypassResourceIds pass the firewall. Set
    // here, not by hand: each provision writes the account's capabilities and bypass list as this template says.
    capabilities: concat(serverless ? [
      {
        name: 'EnableServerless'
      }
    ] : [], fabricMirroring ? [
      {
        name: 'EnableFabricNetworkAclBypass'
      }
    ] : [])
    disableLocalAuth: true
    disableKeyBasedMetadataWriteAccess: true
    minimalTlsVersion: 'Tls12'
    publicNetworkAccess: publicNetworkAccess
    // With rules, Cosmos DB's firewall admits these public addresses only (and the private endpoint).
    ipRules: [for range in allowedIpRanges: {
      ipAddressOrRange: range
    }]
    // Fabric mirroring reads the account from Fabric's own network: a trusted Azure service when the
    // firewall has rules (docs/exports.md, "Fabric mirroring").
    networkAclBypass: fabricMirroring ? 'AzureServices' : 'None'
    networkAclBypassResourceIds: fabricMirroring ? fabricBypassResourceIds : []
    // Point-in-time restore into a new account, by HQ (az cosmosdb restore), no support request.
    backupPolicy: {
      type: 'Continuous'
      continuousModeProperties: {
        tier: backupTier
      }
    }
  }
}

resource database 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases@2024-11-15' = {
  parent: account
  name: databaseName
  properties: {
    resource: {
      id: databaseName
    }
    options: serverless ? {} : {
      autoscaleSettings: {
        maxThroughput: autoscaleMaxThroughput
      }
    }
  }
}

resource sqlContainers 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-11-15' = [for definition in containers: {
  parent: database
  name: definition.id
  properties: {
    resource: definition
  }
}]

// One at a time, after the containers: Cosmos DB locks the account for each assignment, and an
// assignment made alongside another or alongside a container create can fail with 412 (as the Azure
// Verified Module for Cosmos DB does: avm/res/document-db/database-account).
@batchSize(1)
resource dataContributors 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-11-15' = [for principalId in dataContributorPrincipalIds: {
  parent: account
  dependsOn: [
    sqlContainers
  ]
  name: guid(account.id, principalId, builtInDataContributor)
  properties: {
    roleDefinitionId: '${account.id}/sqlRoleDefinitions/${builtInDataContributor}'
    principalId: principalId
    scope: account.id
  }
}]

// Fabric mirroring reads the account's change feed as an analytical reader: a role of this account with the
// data actions Fabric's documentation lists for its connection's principal (docs/exports.md, Fabric mirroring).
var fabricMirroringRoleId = guid(account.id, 'fabric-mirroring')

resource fabricMirroringRole 'Microsoft.DocumentDB/databaseAccounts/sqlRoleDefinitions@2024-11-15' = if (!empty(fabricPrincipalId)) {
  parent: account
  // After the other role writes: the account takes one at a time (see dataContributors).
  dependsOn: [
    dataContributors
  ]
  name: fabricMirroringRoleId
  properties: {
    roleName: 'Fabric mirroring reader'
    type: 'CustomRole'
    assignableScopes: [
      account.id
    ]
    permissions: [
      {
        dataActions: [
          'Microsoft.DocumentDB/databaseAccounts/readMetadata'
          'Microsoft.DocumentDB/databaseAccounts/readAnalytics'
        ]
      }
    ]
  }
}

resource fabricMirroringAssignment 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-11-15' = if (!empty(fabricPrincipalId)) {
  parent: account
  name: guid(account.id, fabricPrincipalId, fabricMirroringRoleId)
  properties: {
    roleDefinitionId: fabricMirroringRole.id
    principalId: fabricPrincipalId
    scope: account.id
  }
}

// Control-plane changes (keys, firewall, throughput, containers: who changed the account), always; data-plane
// requests (one row per request: read, write, query, transactional batch) only when asked: for a 10,000-store
// chain they would be the workspace's largest table by far, ~5 times every other log together (docs/operator-guide.md, Sizing and cost).
// Throttling and request counts come from the account's platform metrics (free), which the alert rules read.
// Resource-specific tables.
resource diagnostics 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  name: 'to-log-analytics'
  scope: account
  properties: {
    workspaceId: workspaceId
    logAnalyticsDestinationType: 'Dedicated'
    logs: [
      {
        category: 'ControlPlaneRequests'
        enabled: true
      }
      {
        category: 'DataPlaneRequests'
        enabled: dataPlaneLogs
      }
    ]
  }
}

output id string = account.id
output endpoint string = account.properties.documentEndpoint
output name string = account.name
