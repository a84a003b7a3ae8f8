// Private networking of one environment (vnetEnabled): a virtual network with a subnet the Function App
// integrates with (delegated to Microsoft.App/environments, as Flex Consumption requires) and a subnet of
// private endpoints for the Storage account's blob and queue services and for Cosmos DB, each with its
// private DNS zone linked to the network, so the app resolves the accounts' usual names to private
// addresses. Follows Azure-Samples/functions-quickstart-python-http-azd (infra/app/vnet.bicep and its
// storage private endpoint module).

param location string
param tags object
param vnetName string
@description('Resource id of the Storage account (blob and queue endpoints).')
param storageAccountId string
@description('Resource id of the Cosmos DB account.')
param cosmosAccountId string
@description('Other virtual networks (HQ\'s, peered) whose machines resolve the private endpoints: each private DNS zone is linked to them too.')
param linkedVnetIds array = []

var privateEndpointSubnetName = 'private-endpoints'
var appSubnetName = 'app'
// groupId: the sub-resource of the account the endpoint reaches; zone: the private DNS zone of its names.
var endpoints = [
  {
    name: 'blob'
    serviceId: storageAccountId
    groupId: 'blob'
    zone: 'privatelink.blob.${environment().suffixes.storage}'
  }
  {
    name: 'queue'
    serviceId: storageAccountId
    groupId: 'queue'
    zone: 'privatelink.queue.${environment().suffixes.storage}'
  }
  {
    name: 'cosmos'
    serviceId: cosmosAccountId
    groupId: 'Sql'
    zone: 'privatelink.documents.azure.com'
  }
]

resource vnet 'Microsoft.Network/virtualNetworks@2024-05-01' = {
  name: vnetName
  location: location
  tags: tags
  properties: {
    addressSpace: {
      addressPrefixes: [
        '10.0.0.0/16'
      ]
    }
    subnets: [
      {
        name: privateEndpointSubnetName
        properties: {
          addressPrefix: '10.0.1.0/24'
          privateEndpointNetworkPolicies: 'Disabled'
          privateLinkServiceNetworkPolicies: 'Enabled'
        }
      }
      {
        name: appSubnetName
        properties: {
          addressPrefix: '10.0.2.0/24'
          delegations: [
            {
              name: 'flex-consumption'
              properties: {
                serviceName: 'Microsoft.App/environments'
              }
            }
          ]
          privateEndpointNetworkPolicies: 'Disabled'
          privateLinkServiceNetworkPolicies: 'Enabled'
        }
      }
    ]
  }
}

resource zones 'Microsoft.Network/privateDnsZones@2024-06-01' = [for endpoint in endpoints: {
  name: endpoint.zone
  location: 'global'
  tags: tags
}]

resource zoneLinks 'Microsoft.Network/privateDnsZones/virtualNetworkLinks@2024-06-01' = [for (endpoint, index) in endpoints: {
  parent: zones[index]
  name: '${vnetName}-link'
  location: 'global'
  tags: tags
  properties: {
    registrationEnabled: false
    virtualNetwork: {
      id: vnet.id
    }
  }
}]

// Every zone linked to every network of linkedVnetIds: one loop over the pairs (Bicep has no nested loops),
// zone i / n and network i % n.
resource operatorZoneLinks 'Microsoft.Network/privateDnsZones/virtualNetworkLinks@2024-06-01' = [for i in range(0, length(endpoints) * length(linkedVnetIds)): {
  name: '${endpoints[i / length(linkedVnetIds)].zone}/operator-${i % length(linkedVnetIds)}'
  location: 'global'
  tags: tags
  dependsOn: [
    zones
  ]
  properties: {
    registrationEnabled: false
    virtualNetwork: {
      id: linkedVnetIds[i % length(linkedVnetIds)]
    }
  }
}]

resource privateEndpoints 'Microsoft.Network/privateEndpoints@2024-05-01' = [for (endpoint, index) in endpoints: {
  name: 'pe-${endpoint.name}-${vnetName}'
  location: location
  tags: tags
  properties: {
    subnet: {
      id: vnet.properties.subnets[0].id
    }
    privateLinkServiceConnections: [
      {
        name: 'pe-${endpoint.name}'
        properties: {
          privateLinkServiceId: endpoint.serviceId
          groupIds: [
            endpoint.groupId
          ]
        }
      }
    ]
  }
}]

resource zoneGroups 'Microsoft.Network/privateEndpoints/privateDnsZoneGroups@2024-05-01' = [for (endpoint, index) in endpoints: {
  parent: privateEndpoints[index]
  name: 'default'
  properties: {
    privateDnsZoneConfigs: [
      {
        name: endpoint.name
        properties: {
          privateDnsZoneId: zones[index].id
        }
      }
    ]
  }
}]

output appSubnetId string = vnet.properties.subnets[1].id
