// Log Analytics workspace and the workspace-based Application Insights the app sends logs, traces and
// metrics to. Local (instrumentation-key) authentication is off: only Entra tokens are accepted, so the
// app's identity gets Monitoring Metrics Publisher here.

param location string
param tags object
param workspaceName string
param appInsightsName string
param retentionInDays int
@description('Principal id of the app\'s managed identity.')
param appPrincipalId string

var monitoringMetricsPublisher = '3913510d-42f4-4e42-8a64-420c390055eb'

resource workspace 'Microsoft.OperationalInsights/workspaces@2023-09-01' = {
  name: workspaceName
  location: location
  tags: tags
  properties: {
    sku: {
      name: 'PerGB2018'
    }
    retentionInDays: retentionInDays
    features: {
      enableLogAccessUsingOnlyResourcePermissions: true
    }
  }
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' = {
  name: appInsightsName
  location: location
  tags: tags
  kind: 'web'
  properties: {
    Application_Type: 'web'
    WorkspaceResourceId: workspace.id
    IngestionMode: 'LogAnalytics'
    DisableLocalAuth: true
  }
}

resource metricsPublisher 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(appInsights.id, appPrincipalId, monitoringMetricsPublisher)
  scope: appInsights
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', monitoringMetricsPublisher)
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
  }
}

output workspaceId string = workspace.id
output id string = appInsights.id
output connectionString string = appInsights.properties.ConnectionString
output name string = appInsights.name
