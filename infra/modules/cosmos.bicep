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
        isZoneRedundant: false
      }
    ]
    capabilities: serverless ? [
      {
        name: 'EnableServerless'
      }
    ] : []
    disableLocalAuth: true
    disableKeyBasedMetadataWriteAccess: true
    minimalTlsVersion: 'Tls12'
    publicNetworkAccess: 'Enabled'
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

resource dataContributors 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-11-15' = [for principalId in dataContributorPrincipalIds: {
  parent: account
  name: guid(account.id, principalId, builtInDataContributor)
  properties: {
    roleDefinitionId: '${account.id}/sqlRoleDefinitions/${builtInDataContributor}'
    principalId: principalId
    scope: account.id
  }
}]

output endpoint string = account.properties.documentEndpoint
output name string = account.name
