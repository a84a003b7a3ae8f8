// A point-in-time restore of the Cosmos DB account into a new account, as Resource Manager takes it
// (createMode Restore), for what `az cosmosdb restore` cannot say: the restored account's zone redundancy
// (the CLI's restore creates its one location without zones) besides TTL off and public access off.
// Deployed on its own, once, by HQ (docs/operator-guide.md, Backups and restore); infra/main.bicep then
// adopts the account (cosmosAccountName) and writes its containers' TTL, firewall and roles back.

targetScope = 'resourceGroup'

@description('Name of the new account (3-44 lowercase letters, digits and -).')
@minLength(3)
@maxLength(44)
param accountName string

@description('Region of the source account\'s backups and of the new account.')
param location string = resourceGroup().location

@description('Id of the restorable account: az cosmosdb restorable-database-account list --account-name SOURCE --query "[0].id" -o tsv')
param restoreSource string

@description('UTC time to restore to, within the backup window, e.g. 2026-11-27T08:00:00Z.')
param restoreTimestamp string

@description('As the environment\'s zoneRedundant: fixed when the account is created.')
param zoneRedundant bool

@description('As the environment\'s cosmosThroughputMode: fixed when the account is created.')
@allowed([
  'serverless'
  'autoscale'
])
param throughputMode string

@description('As the environment\'s cosmosBackupTier.')
@allowed([
  'Continuous7Days'
  'Continuous30Days'
])
param backupTier string = 'Continuous7Days'

resource restored 'Microsoft.DocumentDB/databaseAccounts@2025-04-15' = {
  name: accountName
  location: location
  kind: 'GlobalDocumentDB'
  properties: {
    databaseAccountOfferType: 'Standard'
    createMode: 'Restore'
    restoreParameters: {
      restoreMode: 'PointInTime'
      restoreSource: restoreSource
      restoreTimestampInUtc: restoreTimestamp
      // Items whose TTL ran out between the restore point and now stay until the provision that adopts the
      // account writes the containers' TTL back (decision 0090).
      restoreWithTtlDisabled: true
    }
    locations: [
      {
        locationName: location
        failoverPriority: 0
        isZoneRedundant: zoneRedundant
      }
    ]
    capabilities: throughputMode == 'serverless' ? [
      {
        name: 'EnableServerless'
      }
    ] : []
    // Closed until infra/main.bicep adopts it: its private endpoint and firewall come with that provision.
    publicNetworkAccess: 'Disabled'
    disableLocalAuth: true
    disableKeyBasedMetadataWriteAccess: true
    minimalTlsVersion: 'Tls12'
    backupPolicy: {
      type: 'Continuous'
      continuousModeProperties: {
        tier: backupTier
      }
    }
  }
}

output COSMOS_ACCOUNT_NAME string = restored.name
