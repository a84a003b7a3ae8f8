// The Function App on the Flex Consumption plan (Linux, Python 3.13). The runtime, scale and the
// deployment package location live in functionAppConfig; the package container is reached with the
// user-assigned identity, like everything else. Shaped after Azure-Samples/azure-functions-flex-consumption-samples
// (IaC/bicep/core/host/function.bicep): siteConfig sets no FTPS state (Azure Resource Manager refuses one for
// Flex Consumption sites); basic-auth publishing is switched off by its own policies instead.

param location string
param tags object
param planName string
param appName string
@description('Resource id of the user-assigned managed identity.')
param identityId string
@description('Blob container URL of the deployment package.')
param deploymentContainerUrl string
param instanceMemoryMB int
param maximumInstanceCount int
@description('Concurrent HTTP requests one instance is given before the platform adds another.')
param httpPerInstanceConcurrency int
@description('Instances of the HTTP group kept running when idle; 0: none (scale to zero).')
param alwaysReadyHttpInstances int
@description('Spread the plan\'s instances over availability zones.')
param zoneRedundant bool
@description('Subnet the app integrates with (outbound traffic through the virtual network); empty: none.')
param virtualNetworkSubnetId string
@description('App settings (name: value); no secrets.')
param appSettings object

resource plan 'Microsoft.Web/serverfarms@2024-04-01' = {
  name: planName
  location: location
  tags: tags
  kind: 'functionapp'
  sku: {
    name: 'FC1'
    tier: 'FlexConsumption'
  }
  properties: {
    reserved: true
    zoneRedundant: zoneRedundant
  }
}

resource site 'Microsoft.Web/sites@2024-04-01' = {
  name: appName
  location: location
  // azd deploys the service `api` of azure.yaml to the resource carrying this tag.
  tags: union(tags, {
    'azd-service-name': 'api'
  })
  kind: 'functionapp,linux'
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: {
      '${identityId}': {}
    }
  }
  properties: {
    serverFarmId: plan.id
    httpsOnly: true
    virtualNetworkSubnetId: empty(virtualNetworkSubnetId) ? null : virtualNetworkSubnetId
    siteConfig: {
      minTlsVersion: '1.2'
    }
    functionAppConfig: {
      deployment: {
        storage: {
          type: 'blobContainer'
          value: deploymentContainerUrl
          authentication: {
            type: 'UserAssignedIdentity'
            userAssignedIdentityResourceId: identityId
          }
        }
      }
      scaleAndConcurrency: {
        instanceMemoryMB: instanceMemoryMB
        maximumInstanceCount: maximumInstanceCount
        alwaysReady: alwaysReadyHttpInstances == 0 ? [] : [
          {
            name: 'http'
            instanceCount: alwaysReadyHttpInstances
          }
        ]
        triggers: {
          http: {
            perInstanceConcurrency: httpPerInstanceConcurrency
          }
        }
      }
      runtime: {
        name: 'python'
        version: '3.13'
      }
    }
  }
}

// Basic-auth (user name and password) publishing off for both endpoints: deployments sign in with
// Microsoft Entra ID (azd, Core Tools), and a leaked publishing profile deploys nothing.
resource scmBasicAuth 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2024-04-01' = {
  parent: site
  name: 'scm'
  // As the Azure Verified Module (avm/res/web/site) sets it: deployments without it are reported to fail.
  location: location
  properties: {
    allow: false
  }
}

resource ftpBasicAuth 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2024-04-01' = {
  parent: site
  name: 'ftp'
  location: location
  properties: {
    allow: false
  }
}

resource settings 'Microsoft.Web/sites/config@2024-04-01' = {
  parent: site
  name: 'appsettings'
  properties: appSettings
}

// No diagnostic setting on the site: its one category, FunctionAppLogs, repeats what the host and the app
// already send to Application Insights (the same workspace's AppTraces, AppRequests, AppExceptions), which
// would bill every log line twice.

output name string = site.name
output defaultHostName string = site.properties.defaultHostName
