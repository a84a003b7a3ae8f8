// What tells HQ that something is wrong: Azure Monitor alert rules, each notifying the action groups given
// (an e-mail group created here, and/or an existing group). Log rules read the workspace the app and the
// Functions host write to (AppTraces, AppRequests, AppExceptions of the workspace-based Application
// Insights); metric rules read platform metrics, which cost nothing and need no diagnostic setting.

param location string
param tags object
@description('Prefix of the rules\' names.')
param namePrefix string
@description('Log Analytics workspace (scope of the log alert rules).')
param workspaceId string
@description('Application Insights component (scope of the function errors rule).')
param appInsightsId string
@description('Cosmos DB account (scope of the throttling rule).')
param cosmosAccountId string
@description('Optional e-mail address notified (an action group is created for it); empty: none.')
param emailAddress string = ''
@description('Optional resource id of an existing action group notified; empty: none.')
param actionGroupId string = ''
@description('The poison queue the Functions host moves a reconciliation request to after its last attempt.')
param poisonQueueName string

resource emailGroup 'Microsoft.Insights/actionGroups@2023-01-01' = if (!empty(emailAddress)) {
  name: '${namePrefix}-hq'
  location: 'Global'
  tags: tags
  properties: {
    groupShortName: 'pos-hq'
    enabled: true
    emailReceivers: [
      {
        name: 'hq'
        emailAddress: emailAddress
        useCommonAlertSchema: true
      }
    ]
  }
}

var actionGroupIds = concat(empty(emailAddress) ? [] : [
  emailGroup.id
], empty(actionGroupId) ? [] : [
  actionGroupId
])

// Log alert rules over what the app and the host log (triggers/telemetry.py, reconcile/service.py, the host's
// queue listener). Each fires when its query returns a row in the window; evaluated every 5 minutes.
var logRules = [
  {
    name: 'failed-requests'
    severity: 1
    description: 'More than 5 % of partner requests answered 5xx (503 storage unavailable or throttled, 500 unexpected) in 15 minutes, with at least 20 requests.'
    query: 'AppTraces | where tostring(Properties.event) == "http_request" | summarize requests = count(), failed = countif(toint(Properties.status) >= 500) | where requests >= 20 and failed * 100.0 / requests > 5'
  }
  {
    name: 'poisoned-reconciliations'
    severity: 2
    description: 'A reconciliation request failed its last attempt and went to the poison queue: `python -m hq queue poison list`, then `replay`.'
    query: 'AppTraces | where Message has "${poisonQueueName}" or Message has "moved to the poison queue"'
  }
  {
    name: 'overdue-closes'
    severity: 2
    description: 'The sweep found daily closes past their reconciliation time and enqueued them again: the queue worker is failing or behind (docs/operator-guide.md, Alerts).'
    query: 'AppTraces | where Message startswith "sweep re-enqueued"'
  }
  {
    name: 'failing-webhooks'
    severity: 3
    description: 'A webhook delivery gave up, or a partner endpoint failing for days was disabled: `python -m hq partner webhook deliveries PARTNER`, tell the partner, then `enable` and `redeliver`.'
    query: 'AppTraces | where Message startswith "webhook endpoint disabled" or Message startswith "webhook failed"'
  }
]

resource logAlerts 'Microsoft.Insights/scheduledQueryRules@2022-06-15' = [for rule in logRules: {
  name: '${namePrefix}-${rule.name}'
  location: location
  tags: tags
  kind: 'LogAlert'
  properties: {
    displayName: '${namePrefix} ${rule.name}'
    description: rule.description
    severity: rule.severity
    enabled: true
    scopes: [
      workspaceId
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    criteria: {
      allOf: [
        {
          query: rule.query
          timeAggregation: 'Count'
          operator: 'GreaterThan'
          threshold: 0
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    autoMitigate: true
    actions: {
      actionGroups: actionGroupIds
    }
  }
}]

// Cosmos DB answered 429 (throughput at its autoscale maximum, or a hot partition) more than 100 times in
// 15 minutes: the SDK retries them, but past its retries partners get 503 (docs/operator-guide.md, Alerts).
resource cosmosThrottling 'Microsoft.Insights/metricAlerts@2018-03-01' = {
  name: '${namePrefix}-cosmos-throttling'
  location: 'global'
  tags: tags
  properties: {
    description: 'Cosmos DB throttled more than 100 requests (429) in 15 minutes: raise cosmosAutoscaleMaxThroughput (docs/operator-guide.md, Alerts).'
    severity: 2
    enabled: true
    scopes: [
      cosmosAccountId
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'
      allOf: [
        {
          criterionType: 'StaticThresholdCriterion'
          name: 'throttled'
          metricNamespace: 'Microsoft.DocumentDB/databaseAccounts'
          metricName: 'TotalRequests'
          dimensions: [
            {
              name: 'StatusCode'
              operator: 'Include'
              values: [
                '429'
              ]
            }
          ]
          operator: 'GreaterThan'
          threshold: 100
          timeAggregation: 'Count'
        }
      ]
    }
    actions: [for id in actionGroupIds: {
      actionGroupId: id
    }]
  }
}

// A function invocation failed (raised): the queue worker (before its request is poisoned) or the sweep.
// HTTP functions answer every error themselves (problem+json), so they count under failed-requests instead.
resource functionErrors 'Microsoft.Insights/metricAlerts@2018-03-01' = {
  name: '${namePrefix}-function-errors'
  location: 'global'
  tags: tags
  properties: {
    description: 'A function invocation failed in the last 15 minutes (Application Insights requests/failed): see AppExceptions.'
    severity: 2
    enabled: true
    scopes: [
      appInsightsId
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'
      allOf: [
        {
          criterionType: 'StaticThresholdCriterion'
          name: 'failed'
          metricNamespace: 'microsoft.insights/components'
          metricName: 'requests/failed'
          operator: 'GreaterThan'
          threshold: 0
          timeAggregation: 'Count'
        }
      ]
    }
    actions: [for id in actionGroupIds: {
      actionGroupId: id
    }]
  }
}
