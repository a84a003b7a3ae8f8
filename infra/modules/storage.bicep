// The app's Storage account: Functions host storage (AzureWebJobsStorage, identity-based), the Flex
// Consumption deployment package container, the reconciliation queues and the Parquet export's container. Shared key access is off:
// every client signs in with Microsoft Entra ID.

param location string
param tags object
param name string
param skuName string
param deploymentContainerName string
param queueNames array
@description('Principal id of the app\'s managed identity.')
param appPrincipalId string
@description('Optional HQ operator (hq queue poison list/replay); empty: none.')
param operatorPrincipalId string = ''
param operatorPrincipalType string = 'User'
@description('Enabled, or Disabled when blob and queue are reached only through private endpoints.')
@allowed([
  'Enabled'
  'Disabled'
])
param publicNetworkAccess string
@description('Deny every network but the private endpoints (and allowedIpRanges): vnetEnabled.')
param networkRestricted bool
@description('Public IPv4 addresses or CIDR ranges allowed through the firewall when networkRestricted (HQ).')
param allowedIpRanges array = []
@description('Days deleted blobs and containers are kept by soft delete.')
param softDeleteDays int
@description('Log Analytics workspace of the diagnostic settings.')
param workspaceId string
@description('Container of the Parquet export (the export timer writes it; HQ reads it).')
param exportContainerName string
@description('Days after which an exported blob moves to the Cool tier (read seldom once its month is analysed).')
param exportCoolAfterDays int

// Built-in roles. Blob Data Owner: the host's own blobs (keys, timer leases) and the deployment package.
var storageBlobDataOwner = 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b'
// Queue Data Contributor: the queue trigger and backends/azure_queue.py (send, receive, delete, create).
var storageQueueDataContributor = '974c5e8b-45b9-4653-ba55-5f855dd0fb88'
// Blob Data Contributor: the operator's `hq export` into the export container, and reading it.
var storageBlobDataContributor = 'ba92f5b4-2d11-453d-a403-e96b0029c9fe'

resource account 'Microsoft.Storage/storageAccounts@2023-05-01' = {
  name: name
  location: location
  tags: tags
  kind: 'StorageV2'
  sku: {
    name: skuName
  }
  properties: {
    accessTier: 'Hot'
    allowSharedKeyAccess: false
    allowBlobPublicAccess: false
    defaultToOAuthAuthentication: true
    minimumTlsVersion: 'TLS1_2'
    supportsHttpsTrafficOnly: true
    publicNetworkAccess: publicNetworkAccess
    // Private: deny everything but the private endpoints (as the Flex Consumption azd sample does) and HQ's
    // addresses, if any.
    networkAcls: networkRestricted ? {
      defaultAction: 'Deny'
      bypass: 'None'
      // Storage takes a single address, not a /32 (nor a /31), as its rule: the address alone.
      ipRules: [for range in allowedIpRanges: {
        value: endsWith(range, '/32') ? split(range, '/')[0] : range
        action: 'Allow'
      }]
    } : {
      defaultAction: 'Allow'
      bypass: 'AzureServices'
    }
  }
}

// Soft delete: a deleted blob (the deployment package, the host's keys and leases) or container can be
// restored for softDeleteDays.
resource blobService 'Microsoft.Storage/storageAccounts/blobServices@2023-05-01' = {
  parent: account
  name: 'default'
  properties: {
    deleteRetentionPolicy: {
      enabled: true
      days: softDeleteDays
    }
    containerDeleteRetentionPolicy: {
      enabled: true
      days: softDeleteDays
    }
  }
}

resource deploymentContainer 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' = {
  parent: blobService
  name: deploymentContainerName
  properties: {
    publicAccess: 'None'
  }
}

// The Parquet export (docs/exports.md). The app writes it as Storage Blob Data Owner (below); the operator
// gets Storage Blob Data Contributor on this container only, for `hq export` and for reading it.
resource exportContainer 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' = {
  parent: blobService
  name: exportContainerName
  properties: {
    publicAccess: 'None'
  }
}

// Exported files are rewritten only when a day is reconciled again, mostly within days: after
// exportCoolAfterDays without a change they move to Cool (cheaper to keep, dearer to read).
resource lifecycle 'Microsoft.Storage/storageAccounts/managementPolicies@2023-05-01' = {
  parent: account
  name: 'default'
  properties: {
    policy: {
      rules: [
        {
          name: 'exports-to-cool'
          enabled: true
          type: 'Lifecycle'
          definition: {
            filters: {
              blobTypes: [
                'blockBlob'
              ]
              prefixMatch: [
                '${exportContainerName}/'
              ]
            }
            actions: {
              baseBlob: {
                tierToCool: {
                  daysAfterModificationGreaterThan: exportCoolAfterDays
                }
              }
            }
          }
        }
      ]
    }
  }
}

resource queueService 'Microsoft.Storage/storageAccounts/queueServices@2023-05-01' = {
  parent: account
  name: 'default'
}

resource queues 'Microsoft.Storage/storageAccounts/queueServices/queues@2023-05-01' = [for queueName in queueNames: {
  parent: queueService
  name: queueName
}]

resource appBlobOwner 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(account.id, appPrincipalId, storageBlobDataOwner)
  scope: account
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', storageBlobDataOwner)
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
  }
}

resource appQueueContributor 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(account.id, appPrincipalId, storageQueueDataContributor)
  scope: account
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', storageQueueDataContributor)
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
  }
}

resource operatorQueueContributor 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(operatorPrincipalId)) {
  name: guid(account.id, operatorPrincipalId, storageQueueDataContributor)
  scope: account
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', storageQueueDataContributor)
    principalId: operatorPrincipalId
    principalType: operatorPrincipalType
  }
}

resource operatorExportContributor 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(operatorPrincipalId)) {
  name: guid(exportContainer.id, operatorPrincipalId, storageBlobDataContributor)
  scope: exportContainer
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', storageBlobDataContributor)
    principalId: operatorPrincipalId
    principalType: operatorPrincipalType
  }
}

// Chosen for what they tell HQ against what they cost (docs/operator-guide.md, Sizing and cost; bench/cost_model.py). Queues: messages
// put and deleted (a close's reconciliation request, a move to the poison queue). Blobs: deletes only (the
// package, the host's keys): blob writes are mostly the host's lease renewals, about 12 a minute on every
// running instance, idle or not. No StorageRead anywhere: the host's polls, every 2 s per instance.
var queueLogs = [
  {
    category: 'StorageWrite'
    enabled: true
  }
  {
    category: 'StorageDelete'
    enabled: true
  }
]
var blobLogs = [
  {
    category: 'StorageDelete'
    enabled: true
  }
]

resource blobDiagnostics 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  name: 'to-log-analytics'
  scope: blobService
  properties: {
    workspaceId: workspaceId
    logs: blobLogs
  }
}

resource queueDiagnostics 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  name: 'to-log-analytics'
  scope: queueService
  properties: {
    workspaceId: workspaceId
    logs: queueLogs
  }
}

output id string = account.id
output name string = account.name
output blobEndpoint string = account.properties.primaryEndpoints.blob
output exportContainerUrl string = '${account.properties.primaryEndpoints.blob}${exportContainerName}'
