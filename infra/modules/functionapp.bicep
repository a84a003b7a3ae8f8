// The Function App on the Flex Consumption plan (Linux, Python 3.11). The runtime, scale and the
// deployment package location live in functionAppConfig; the package container is reached with the
// user-assigned identity, like everything else.

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
    siteConfig: {
      minTlsVersion: '1.2'
      ftpsState: 'Disabled'
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
      }
      runtime: {
        name: 'python'
        version: '3.11'
      }
    }
  }
}

resource settings 'Microsoft.Web/sites/config@2024-04-01' = {
  parent: site
  name: 'appsettings'
  properties: appSettings
}

output name string = site.name
output defaultHostName string = site.properties.defaultHostName
