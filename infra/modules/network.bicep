// Private networking of one environment (vnetEnabled): a virtual network with a subnet the Function App
// integrates with (delegated to Microsoft.App/environments, as Flex Consumption requires) and a subnet of
// private endpoints for the Storage account's blob and queue services and for Cosmos DB. Each endpoint is
// registered in a private DNS zone so that the app (and HQ) resolve the accounts' usual names to private
// addresses: stand-alone, the zones are created here and linked to this network (as
// Azure-Samples/functions-quickstart-python-http-azd does); in a landing zone, HQ's central zones are
// given by id and nothing DNS is created or linked here (decision 0088).

param location string
param tags object
param vnetName string
@description('Resource id of the Storage account (blob and queue endpoints).')
param storageAccountId string
@description('Resource id of the Cosmos DB account.')
param cosmosAccountId string
@description('Other virtual networks (HQ\'s, peered) whose machines resolve the private endpoints: each zone created here is linked to them too.')
param linkedVnetIds array = []
@description('Address space of the virtual network (CIDR).')
param addressPrefix string
@description('Subnet of the private endpoints (CIDR, inside addressPrefix).')
param privateEndpointSubnetPrefix string
@description('Subnet the Function App integrates with (CIDR, inside addressPrefix).')
param appSubnetPrefix string
@description('Optional subnet for a Fabric / Power Platform virtual network data gateway (CIDR); empty: none.')
param gatewaySubnetPrefix string = ''
@description('Existing private DNS zones to register the endpoints in, by endpoint (blob, queue, cosmos): a resource id, or empty to create the zone here.')
param privateDnsZoneIds object = {
  blob: ''
  queue: ''
  cosmos: ''
}
@description('A NAT gateway with a static public IP for the app subnet\'s outbound traffic.')
param natGatewayEnabled bool = false

var privateEndpointSubnetName = 'private-endpoints'
var appSubnetName = 'app'
var gatewaySubnetName = 'fabric-gateway'
// groupId: the sub-resource of the account the endpoint reaches; zone: the private DNS zone of its names;
// existingZoneId: HQ's zone of that name, when it has one.
var endpoints = [
  {
    name: 'blob'
    serviceId: storageAccountId
    groupId: 'blob'
    zone: 'privatelink.blob.${environment().suffixes.storage}'
    existingZoneId: privateDnsZoneIds.blob
  }
  {
    name: 'queue'
    serviceId: storageAccountId
    groupId: 'queue'
    zone: 'privatelink.queue.${environment().suffixes.storage}'
    existingZoneId: privateDnsZoneIds.queue
  }
  {
    name: 'cosmos'
    serviceId: cosmosAccountId
    groupId: 'Sql'
    zone: 'privatelink.documents.azure.com'
    existingZoneId: privateDnsZoneIds.cosmos
  }
]

resource natPublicIp 'Microsoft.Network/publicIPAddresses@2024-05-01' = if (natGatewayEnabled) {
  name: '${vnetName}-nat-ip'
  location: location
  tags: tags
  sku: {
    name: 'Standard'
  }
  properties: {
    publicIPAllocationMethod: 'Static'
    publicIPAddressVersion: 'IPv4'
  }
}

resource natGateway 'Microsoft.Network/natGateways@2024-05-01' = if (natGatewayEnabled) {
  name: '${vnetName}-nat'
  location: location
  tags: tags
  sku: {
    name: 'Standard'
  }
  properties: {
    idleTimeoutInMinutes: 4
    publicIpAddresses: [
      {
        id: natPublicIp.id
      }
    ]
  }
}

var subnets = [
  {
    name: privateEndpointSubnetName
    properties: {
      addressPrefix: privateEndpointSubnetPrefix
      privateEndpointNetworkPolicies: 'Disabled'
      privateLinkServiceNetworkPolicies: 'Enabled'
    }
  }
  {
    name: appSubnetName
    properties: {
      addressPrefix: appSubnetPrefix
      delegations: [
        {
          name: 'flex-consumption'
          properties: {
            serviceName: 'Microsoft.App/environments'
          }
        }
      ]
      natGateway: natGatewayEnabled ? {
        id: natGateway.id
      } : null
      privateEndpointNetworkPolicies: 'Disabled'
      privateLinkServiceNetworkPolicies: 'Enabled'
    }
  }
]
// Fabric mirroring with public access off reaches Cosmos DB through a virtual network data gateway, which
// takes a subnet of its own delegated to Power Platform (docs/exports.md, Fabric mirroring).
var gatewaySubnets = empty(gatewaySubnetPrefix) ? [] : [
  {
    name: gatewaySubnetName
    properties: {
      addressPrefix: gatewaySubnetPrefix
      delegations: [
        {
          name: 'power-platform'
          properties: {
            serviceName: 'Microsoft.PowerPlatform/vnetaccesslinks'
          }
        }
      ]
    }
  }
]

resource vnet 'Microsoft.Network/virtualNetworks@2024-05-01' = {
  name: vnetName
  location: location
  tags: tags
  properties: {
    addressSpace: {
      addressPrefixes: [
        addressPrefix
      ]
    }
    subnets: concat(subnets, gatewaySubnets)
  }
}

// Zones and their links only where HQ gave no zone of that name: a network linked to HQ's central zone
// cannot be linked to a second zone of the same name, and a landing zone's policy may deny zones in a spoke.
var createdZones = filter(endpoints, endpoint => empty(endpoint.existingZoneId))

resource zones 'Microsoft.Network/privateDnsZones@2024-06-01' = [for endpoint in createdZones: {
  name: endpoint.zone
  location: 'global'
  tags: tags
}]

resource zoneLinks 'Microsoft.Network/privateDnsZones/virtualNetworkLinks@2024-06-01' = [for (endpoint, index) in createdZones: {
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

// Every zone created here linked to every network of linkedVnetIds: one loop over the pairs (Bicep has no
// nested loops), zone i / n and network i % n. A link is named by its network (name and a hash of its id),
// not by its place in the list, so reordering the list changes nothing. NxDomainRedirect: a name this zone
// does not hold (HQ's own private endpoints elsewhere) falls back to public resolution instead of failing.
resource operatorZoneLinks 'Microsoft.Network/privateDnsZones/virtualNetworkLinks@2024-06-01' = [for i in range(0, length(createdZones) * length(linkedVnetIds)): {
  name: '${createdZones[i / length(linkedVnetIds)].zone}/${last(split(linkedVnetIds[i % length(linkedVnetIds)], '/'))}-${uniqueString(linkedVnetIds[i % length(linkedVnetIds)])}'
  location: 'global'
  tags: tags
  dependsOn: [
    zones
  ]
  properties: {
    registrationEnabled: false
    resolutionPolicy: 'NxDomainRedirect'
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

// The endpoint's A record goes into HQ's zone when given (the deployer needs
// Microsoft.Network/privateDnsZones/join/action on it), into the zone created here otherwise.
resource zoneGroups 'Microsoft.Network/privateEndpoints/privateDnsZoneGroups@2024-05-01' = [for (endpoint, index) in endpoints: {
  parent: privateEndpoints[index]
  name: 'default'
  dependsOn: [
    zones
  ]
  properties: {
    privateDnsZoneConfigs: [
      {
        name: endpoint.name
        properties: {
          privateDnsZoneId: empty(endpoint.existingZoneId) ? resourceId('Microsoft.Network/privateDnsZones', endpoint.zone) : (endpoint.existingZoneId)
        }
      }
    ]
  }
}]

output appSubnetId string = vnet.properties.subnets[1].id
output natPublicIpAddress string = natGatewayEnabled ? natPublicIp.properties.ipAddress : ''
