import { readdirSync, readFileSync } from 'node:fs';
import { Aspects, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { stackAlarms } from '../../bench/idle-deployment.ts';
import { STOP_BEFORE_TIMEOUT_MS } from '../../functions/maintenance/handler.ts';
import {
  AUTHORIZER_RESULT_TTL_SECONDS,
  apiRoutes,
  functionNames,
  gatewayResponses,
  MAINTENANCE_INTERVAL_MS,
  MAINTENANCE_TIMEOUT_SECONDS,
  publicPaths,
  RECOMMENDED_RESERVED_CONCURRENCY,
  SCHEDULER_MAX_CONCURRENCY,
} from '../../infra/api-routes.ts';
import { type AcklineApp, buildApp } from '../../infra/build-app.ts';
import {
  SCHEDULER_QUEUE_MAX_AGE_SECONDS,
  SUBSCRIPTION_BACKLOG_MAX_AGE_SECONDS,
} from '../../infra/constructs/observability.ts';
import {
  subscriptionQueueActions,
  subscriptionQueueMaintainActions,
  tableItemActions,
} from '../../infra/stateless-stack.ts';
import { maintenanceMetricNames } from '../../shared/config/load-config.ts';
import {
  catalogTable,
  cursorsTable,
  entriesTable,
  queuePrefix,
  schedulerQueue,
  tables,
} from '../../shared/config/resources.ts';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// The context `cdk synth` gets, so the template under test is the deployed one.
const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
  context: Record<string, unknown>;
};

type Resource = {
  Type: string;
  Properties?: Record<string, unknown>;
  DeletionPolicy?: string;
  Metadata?: Record<string, unknown>;
};
type Resources = Record<string, Resource>;
type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:ackline/prod/token-AbC123';
const KMS_KEY_ARN = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
const TOPIC_ARN = 'arn:aws:sns:eu-west-1:123456789012:ackline-alarms';

/**
 * Builds the app with cdk-nag's AwsSolutions pack as an aspect. Only the main
 * app bundles the five handlers with esbuild (real bundling, a few seconds);
 * variants skip bundling (`aws:cdk:bundling-stacks`), which changes no
 * resource but the code asset.
 */
function build(context: Record<string, unknown> = {}, bundle = false): AcklineApp {
  const built = buildApp({
    context: { ...cdkJson.context, ...(bundle ? {} : { 'aws:cdk:bundling-stacks': [] }), ...context },
  });
  Aspects.of(built.app).add(new AwsSolutionsChecks({ reports: false }));
  return built;
}

let main: AcklineApp;
let stateful: Template;
let stateless: Template;
beforeAll(() => {
  main = build({}, true);
  stateful = Template.fromStack(main.stateful);
  stateless = Template.fromStack(main.stateless);
}, 120_000);

function resourcesOf(template: Template, type: string): Resources {
  return template.findResources(type) as Resources;
}

/** `{ Scheduler: 5, ... }`: the functions that have a reserved concurrency, and how much. */
function reservedConcurrencyOf(template: Template): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(resourcesOf(template, 'AWS::Lambda::Function'))
      .filter(([, fn]) => fn.Properties?.ReservedConcurrentExecutions !== undefined)
      .map(([id, fn]) => [id.replace(/Function.*$/, ''), fn.Properties?.ReservedConcurrentExecutions]),
  );
}

/** The maximum concurrency of the stack's one event source mapping (the scheduler's). */
function eventSourceConcurrency(template: Template): unknown {
  const [mapping] = Object.values(resourcesOf(template, 'AWS::Lambda::EventSourceMapping'));
  return (mapping?.Properties?.ScalingConfig as { MaximumConcurrency?: number } | undefined)
    ?.MaximumConcurrency;
}

/** `AdminApiLogsB036E224` -> `AdminApiLogs`: CDK's logical ids end in an 8-digit hash. */
function withoutHash(logicalId: string): string {
  return logicalId.replace(/[0-9A-F]{8}$/, '');
}

/**
 * A policy resource written as a readable string: `Catalog.Arn`, `TokenSecret`,
 * `arn:<AWS::Partition>:sqs:...` (cdk-nag's notation). Imports from the stateful stack are
 * followed to the value they export.
 */
function describeResource(value: unknown, exportsOf: Template): string {
  if (typeof value === 'string') return value;
  const v = value as Record<string, unknown>;
  if (typeof v.Ref === 'string') return v.Ref.startsWith('AWS::') ? `<${v.Ref}>` : withoutHash(v.Ref);
  if (Array.isArray(v['Fn::GetAtt'])) {
    const [id, attribute] = v['Fn::GetAtt'] as [string, string];
    return `${withoutHash(id)}.${attribute}`;
  }
  if (Array.isArray(v['Fn::Join'])) {
    const [separator, parts] = v['Fn::Join'] as [string, unknown[]];
    return parts.map((part) => describeResource(part, exportsOf)).join(separator);
  }
  if (typeof v['Fn::ImportValue'] === 'string') {
    const outputs = exportsOf.toJSON().Outputs as Record<
      string,
      { Value: unknown; Export: { Name: string } }
    >;
    const output = Object.values(outputs).find((o) => o.Export.Name === v['Fn::ImportValue']);
    if (output === undefined) throw new Error(`no export ${String(v['Fn::ImportValue'])}`);
    return describeResource(output.Value, exportsOf);
  }
  throw new Error(`cannot describe ${JSON.stringify(value)}`);
}

/** Per function: its role's inline statements, as `{ actions (sorted), resources (sorted), condition }`. */
function statementsByFunction(template: Template, exportsOf: Template) {
  const lambdas = resourcesOf(template, 'AWS::Lambda::Function');
  const policies = Object.values(resourcesOf(template, 'AWS::IAM::Policy'));
  const result: Record<string, { actions: string[]; resources: string[]; condition?: unknown }[]> = {};
  for (const [id, fn] of Object.entries(lambdas)) {
    const roleId = (fn.Properties?.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const statements = policies
      .filter((policy) => JSON.stringify(policy.Properties?.Roles) === JSON.stringify([{ Ref: roleId }]))
      .flatMap((policy) => (policy.Properties?.PolicyDocument as { Statement: Statement[] }).Statement);
    result[withoutHash(id).replace(/Function$/, '')] = statements.map((statement) => {
      expect(statement.Effect).toBe('Allow');
      return {
        actions: [statement.Action].flat().sort(),
        resources: [statement.Resource]
          .flat()
          .map((resource) => describeResource(resource, exportsOf))
          .sort(),
        ...(statement.Condition === undefined ? {} : { condition: statement.Condition }),
      };
    });
  }
  return result;
}

function resourceTypeCounts(template: Template): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const resource of Object.values(template.toJSON().Resources as Resources)) {
    counts[resource.Type] = (counts[resource.Type] ?? 0) + 1;
  }
  return counts;
}

/** Unsuppressed AwsSolutions findings of a stack: `rule path: message`. */
function nagFindings(stack: Stack): string[] {
  const annotations = Annotations.fromStack(stack);
  return [
    ...annotations.findError('*', Match.stringLikeRegexp('AwsSolutions-.*')),
    ...annotations.findWarning('*', Match.stringLikeRegexp('AwsSolutions-.*')),
  ].map((finding) => `${finding.id}: ${String(finding.entry.data).split('\n')[0]}`);
}

const logs = ['logs:CreateLogStream', 'logs:PutLogEvents'];
const tablesArns = ['Catalog.Arn', 'Cursors.Arn', 'Entries.Arn'];
const subscriptionQueues = {
  actions: [...subscriptionQueueActions].sort(),
  resources: ['arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:ackline-dev--*'],
};

describe('stateful stack', () => {
  it('holds exactly the tables, the scheduler queue and its DLQ, their policies and the token secret', () => {
    expect(resourceTypeCounts(stateful)).toEqual({
      'AWS::DynamoDB::Table': tables.length,
      'AWS::SQS::Queue': 2,
      'AWS::SQS::QueuePolicy': 2,
      'AWS::SecretsManager::Secret': 1,
    });
  });

  it.each(tables)('table $logicalName has its keys, on demand, PITR, encryption and Retain', (definition) => {
    stateful.hasResource('AWS::DynamoDB::Table', {
      Properties: {
        KeySchema: [
          { AttributeName: definition.partitionKey.name, KeyType: 'HASH' },
          { AttributeName: definition.sortKey.name, KeyType: 'RANGE' },
        ],
        AttributeDefinitions: Match.arrayEquals([
          { AttributeName: definition.partitionKey.name, AttributeType: definition.partitionKey.type },
          { AttributeName: definition.sortKey.name, AttributeType: definition.sortKey.type },
        ]),
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
      },
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
  });

  it('lets DynamoDB expire entries and audit records by their ttl attribute (entry expiry, audit retention)', () => {
    const ttlOf = (logicalName: string) =>
      Object.entries(resourcesOf(stateful, 'AWS::DynamoDB::Table')).find(([id]) =>
        id.startsWith(logicalName),
      )?.[1]?.Properties?.TimeToLiveSpecification;
    expect(ttlOf(entriesTable.logicalName)).toEqual({ AttributeName: 'ttl', Enabled: true });
    expect(ttlOf(catalogTable.logicalName)).toEqual({ AttributeName: 'ttl', Enabled: true });
    expect(ttlOf(cursorsTable.logicalName)).toBeUndefined();
  });

  it('gives the scheduler queue its attributes and a dead-letter redrive', () => {
    const queues = resourcesOf(stateful, 'AWS::SQS::Queue');
    const [dlqId] = Object.keys(queues).filter((id) =>
      id.startsWith(`${schedulerQueue.logicalName}DeadLetter`),
    );
    expect(dlqId).toBeDefined();
    stateful.hasResourceProperties('AWS::SQS::Queue', {
      VisibilityTimeout: schedulerQueue.visibilityTimeoutSeconds,
      MessageRetentionPeriod: schedulerQueue.messageRetentionSeconds,
      RedrivePolicy: {
        deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] },
        maxReceiveCount: schedulerQueue.maxReceiveCount,
      },
    });
    expect(queues[dlqId as string]).toMatchObject({
      Properties: { MessageRetentionPeriod: schedulerQueue.deadLetterRetentionSeconds },
      DeletionPolicy: 'Retain',
    });
  });

  it('encrypts every queue and lets it be reached over TLS only', () => {
    const queues = resourcesOf(stateful, 'AWS::SQS::Queue');
    const policies = Object.values(resourcesOf(stateful, 'AWS::SQS::QueuePolicy'));
    for (const [id, queue] of Object.entries(queues)) {
      expect(queue.Properties?.SqsManagedSseEnabled, id).toBe(true);
      const sslOnly = policies.some(
        (policy) =>
          JSON.stringify(policy.Properties?.Queues) === JSON.stringify([{ Ref: id }]) &&
          JSON.stringify(policy.Properties?.PolicyDocument).includes(
            '"Effect":"Deny","Principal":{"AWS":"*"},"Resource":{"Fn::GetAtt":',
          ) &&
          JSON.stringify(policy.Properties?.PolicyDocument).includes(
            '{"Bool":{"aws:SecureTransport":"false"}}',
          ),
      );
      expect(sslOnly, `${id} has an SSL-only queue policy`).toBe(true);
    }
  });

  it('creates the token secret generated by Secrets Manager, named after the stage, retained, with no value', () => {
    stateful.hasResource('AWS::SecretsManager::Secret', {
      Properties: {
        Name: 'ackline/dev/token-secret',
        GenerateSecretString: { PasswordLength: 64, ExcludePunctuation: true, IncludeSpace: false },
        SecretString: Match.absent(),
      },
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
  });
});

describe('stateless stack', () => {
  it('holds exactly the functions, their roles and logs, the API, the schedule, the alarms and the dashboard', () => {
    const methods = apiRoutes.length + publicPaths.length;
    expect(resourceTypeCounts(stateless)).toEqual({
      'AWS::Lambda::Function': functionNames.length,
      'AWS::IAM::Role': functionNames.length + 1, // + API Gateway's account logging role
      'AWS::IAM::Policy': functionNames.length,
      'AWS::Logs::LogGroup': functionNames.length + 2, // + API access and execution logs
      'AWS::Lambda::EventSourceMapping': 1,
      'AWS::Lambda::EventInvokeConfig': 1, // maintenance: no retry of a run, the next one comes
      'AWS::Events::Rule': 1,
      // API Gateway invokes each integration from the stage and from the console's test button;
      // the authorizer once, EventBridge once.
      'AWS::Lambda::Permission': methods * 2 + 2,
      'AWS::ApiGateway::RestApi': 1,
      'AWS::ApiGateway::Account': 1,
      'AWS::ApiGateway::Deployment': 1,
      'AWS::ApiGateway::Stage': 1,
      'AWS::ApiGateway::Authorizer': 1,
      'AWS::ApiGateway::Resource': expect.any(Number),
      'AWS::ApiGateway::Method': methods,
      'AWS::ApiGateway::GatewayResponse': Object.keys(gatewayResponses).length,
      // Scheduler DLQ and age, API 5xx, subscription DLQs, backlog age, maintenance heartbeat;
      // errors and throttles per function; read and write throttle events per table.
      'AWS::CloudWatch::Alarm': 6 + functionNames.length * 2 + tables.length * 2,
      'AWS::CloudWatch::Dashboard': 1,
    });
  });

  it("prices the idle deployment on the template's alarms (npm run bench's idle-deployment phase)", () => {
    expect(stackAlarms()).toBe(resourceTypeCounts(stateless)['AWS::CloudWatch::Alarm']);
  });

  it('has exactly the five ackline functions, nodejs22.x on arm64, and no CDK-internal ones', () => {
    // Log groups are explicit LogGroup resources, so no Custom::LogRetention
    // singleton Lambda exists; every AWS::Lambda::Function is an ackline entry point.
    const lambdas = resourcesOf(stateless, 'AWS::Lambda::Function');
    expect(Object.keys(lambdas).map(withoutHash).sort()).toEqual(
      [
        'AdminApiFunction',
        'AuthorizerFunction',
        'DataApiFunction',
        'MaintenanceFunction',
        'SchedulerFunction',
      ].sort(),
    );
    for (const fn of Object.values(lambdas)) {
      expect(fn.Properties).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
      });
    }
  });

  it('bundles each handler into its own asset', () => {
    const assets = Object.values(resourcesOf(stateless, 'AWS::Lambda::Function')).map(
      (fn) => (fn.Properties?.Code as { S3Key?: string }).S3Key ?? '',
    );
    expect(new Set(assets).size).toBe(functionNames.length);
    for (const asset of assets) expect(asset).toMatch(/^[0-9a-f]{64}\.zip$/);
  });

  it('gives the data functions the table and queue configuration, and the authorizer only what it reads', () => {
    const lambdas = resourcesOf(stateless, 'AWS::Lambda::Function');
    for (const [id, fn] of Object.entries(lambdas)) {
      const variables = (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
      if (id.startsWith('Authorizer')) {
        expect(variables).toEqual({
          ACKLINE_STAGE: 'dev',
          ACKLINE_SUPERUSER_ROLES: 'admin',
          NODE_OPTIONS: '--enable-source-maps',
          ACKLINE_TOKEN_SECRET_ARN: { 'Fn::ImportValue': expect.stringMatching(/TokenSecret/) },
        });
        continue;
      }
      expect(Object.keys(variables).sort()).toEqual(
        [
          ...tables.map((t) => t.envVar),
          schedulerQueue.envVar,
          'ACKLINE_QUEUE_PREFIX',
          'ACKLINE_STAGE',
          'ACKLINE_SUPERUSER_ROLES',
          'ACKLINE_MAX_ENTRIES_PER_LEDGER',
          'NODE_OPTIONS',
        ].sort(),
      );
      expect(variables).toMatchObject({
        ACKLINE_QUEUE_PREFIX: 'ackline-dev--',
        ACKLINE_STAGE: 'dev',
        NODE_OPTIONS: '--enable-source-maps',
      });
    }
  });

  it('gives every function its own log group with the context retention, and the API its access log', () => {
    for (const fn of Object.values(resourcesOf(stateless, 'AWS::Lambda::Function'))) {
      expect(fn.Properties?.LoggingConfig).toEqual({ LogGroup: { Ref: expect.any(String) } });
    }
    stateless.allResourcesProperties('AWS::Logs::LogGroup', {
      RetentionInDays: cdkJson.context['ackline:logRetentionDays'],
    });
  });

  it('gives every function a role of its own, for Lambda only, with no managed policy', () => {
    const roles = resourcesOf(stateless, 'AWS::IAM::Role');
    const functionRoles = Object.values(resourcesOf(stateless, 'AWS::Lambda::Function')).map(
      (fn) => (fn.Properties?.Role as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0],
    );
    expect(new Set(functionRoles).size).toBe(functionNames.length);
    for (const roleId of functionRoles) {
      expect(roles[roleId]?.Properties).toMatchObject({
        AssumeRolePolicyDocument: {
          Statement: [
            { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } },
          ],
        },
      });
      expect(roles[roleId]?.Properties?.ManagedPolicyArns, roleId).toBeUndefined();
    }
  });

  it('grants each function exactly the actions it uses, on exactly its resources', () => {
    const own = (name: string) => ({ actions: logs, resources: [`${name}Logs.Arn`] });
    const schedulerQueueArn = ['SchedulerQueue.Arn'];
    expect(statementsByFunction(stateless, stateful)).toEqual({
      AdminApi: [
        own('AdminApi'),
        { actions: [...tableItemActions].sort(), resources: tablesArns },
        {
          actions: ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'],
          resources: schedulerQueueArn,
        },
        subscriptionQueues,
      ],
      DataApi: [
        own('DataApi'),
        { actions: [...tableItemActions].sort(), resources: tablesArns },
        {
          actions: ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'],
          resources: schedulerQueueArn,
        },
        subscriptionQueues,
      ],
      Authorizer: [
        own('Authorizer'),
        { actions: ['secretsmanager:GetSecretValue'], resources: ['TokenSecret'] },
      ],
      Scheduler: [
        own('Scheduler'),
        { actions: [...tableItemActions].sort(), resources: tablesArns },
        {
          // The event source mapping (consume) and grantSendMessages, merged.
          actions: [
            'sqs:ChangeMessageVisibility',
            'sqs:DeleteMessage',
            'sqs:GetQueueAttributes',
            'sqs:GetQueueUrl',
            'sqs:ReceiveMessage',
            'sqs:SendMessage',
          ],
          resources: schedulerQueueArn,
        },
        subscriptionQueues,
      ],
      // It reads the subscription dead-letter queues' attributes, rings doorbells, deletes the
      // queues of a deletion it resumes, and schedules (second release passes, deletion steps).
      Maintenance: [
        own('Maintenance'),
        { actions: [...tableItemActions].sort(), resources: tablesArns },
        {
          actions: ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'],
          resources: schedulerQueueArn,
        },
        {
          actions: [...subscriptionQueueMaintainActions].sort(),
          resources: subscriptionQueues.resources,
        },
      ],
    });
  });

  it('grants the DynamoDB actions the adapters call, no more and no fewer', () => {
    const adapters = new URL('../../shared/adapters/dynamodb/', import.meta.url);
    const called = new Set<string>();
    for (const file of readdirSync(adapters).filter((name) => name.endsWith('.ts'))) {
      const source = readFileSync(new URL(file, adapters), 'utf8');
      for (const [, imports] of source.matchAll(
        /import\s*\{([^}]*)\}\s*from\s*'@aws-sdk\/client-dynamodb'/g,
      )) {
        for (const [, command] of (imports ?? '').matchAll(/\b([A-Z][A-Za-z]+)Command\b/g)) {
          called.add(`dynamodb:${command}`);
        }
      }
    }
    expect([...called].sort()).toEqual([...tableItemActions].sort());
  });

  it('grants no wildcard action and no "*" resource anywhere', () => {
    for (const template of [stateful, stateless]) {
      for (const [id, policy] of Object.entries(resourcesOf(template, 'AWS::IAM::Policy'))) {
        for (const statement of (policy.Properties?.PolicyDocument as { Statement: Statement[] }).Statement) {
          const actions = [statement.Action].flat();
          expect(
            actions.filter((action) => action === '*' || action.endsWith(':*')),
            id,
          ).toEqual([]);
          expect([statement.Resource].flat(), id).not.toContain('*');
        }
      }
    }
  });

  it('guards every proxy route with the REQUEST authorizer function and leaves only the public paths open', () => {
    const [authorizerId] = Object.keys(resourcesOf(stateless, 'AWS::ApiGateway::Authorizer'));
    stateless.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      Type: 'REQUEST',
      // Answers kept per Authorization value (the authorizer allows the whole API; handlers
      // authorize the role and re-check what a kept answer cannot see).
      IdentitySource: 'method.request.header.Authorization',
      AuthorizerResultTtlInSeconds: AUTHORIZER_RESULT_TTL_SECONDS,
    });
    expect(AUTHORIZER_RESULT_TTL_SECONDS).toBe(300);
    expect(JSON.stringify(resourcesOf(stateless, 'AWS::ApiGateway::Authorizer'))).toMatch(
      /"Fn::GetAtt":\["AuthorizerFunction[0-9A-F]{8}","Arn"\]/,
    );

    const apiResources = resourcesOf(stateless, 'AWS::ApiGateway::Resource');
    const pathOf = (ref: unknown): string => {
      const id = (ref as { Ref?: string }).Ref;
      const resource = id === undefined ? undefined : apiResources[id];
      if (resource === undefined) return ''; // the API's root resource
      return `${pathOf(resource.Properties?.ParentId)}/${String(resource.Properties?.PathPart)}`;
    };
    const methods = Object.values(resourcesOf(stateless, 'AWS::ApiGateway::Method')).map((method) => ({
      httpMethod: method.Properties?.HttpMethod,
      path: pathOf(method.Properties?.ResourceId),
      authorizationType: method.Properties?.AuthorizationType,
      authorizerId: method.Properties?.AuthorizerId,
    }));

    const proxyMethods = methods.filter((method) => method.httpMethod === 'ANY');
    expect(proxyMethods.map((method) => method.path).sort()).toEqual(
      apiRoutes.map((route) => `/${route.firstSegment}/{proxy+}`).sort(),
    );
    for (const method of proxyMethods) {
      expect(method, method.path).toMatchObject({
        authorizationType: 'CUSTOM',
        authorizerId: { Ref: authorizerId },
      });
    }
    const open = methods.filter((method) => method.authorizationType !== 'CUSTOM');
    expect(open.map(({ httpMethod, path }) => ({ method: httpMethod, path }))).toEqual(publicPaths);
    expect(open.every((method) => method.authorizationType === 'NONE')).toBe(true);
  });

  it("answers API Gateway's own refusals with the local gateway's statuses and bodies", () => {
    const types = {
      unauthorized: 'UNAUTHORIZED',
      authorizerFailure: 'AUTHORIZER_FAILURE',
      accessDenied: 'ACCESS_DENIED',
      missingRoute: 'MISSING_AUTHENTICATION_TOKEN',
      payloadTooLarge: 'REQUEST_TOO_LARGE',
      integrationTimeout: 'INTEGRATION_TIMEOUT',
    } as const;
    for (const [key, { statusCode, reason }] of Object.entries(gatewayResponses)) {
      stateless.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
        ResponseType: types[key as keyof typeof types],
        StatusCode: String(statusCode),
        ResponseTemplates: { 'application/json': JSON.stringify({ reason }) },
      });
    }
  });

  it("creates API Gateway's execution log group itself, with the context retention, before the stage logs to it", () => {
    const groups = resourcesOf(stateless, 'AWS::Logs::LogGroup');
    const [apiId] = Object.keys(resourcesOf(stateless, 'AWS::ApiGateway::RestApi'));
    const execution = Object.entries(groups).filter(([id]) => id.startsWith('ApiExecutionLogs'));
    expect(execution).toHaveLength(1);
    const [executionId, group] = execution[0] as [string, Resource];
    expect(group.Properties).toEqual({
      LogGroupName: { 'Fn::Join': ['', ['API-Gateway-Execution-Logs_', { Ref: apiId }, '/dev']] },
      RetentionInDays: cdkJson.context['ackline:logRetentionDays'],
    });
    expect((group as { DeletionPolicy?: string }).DeletionPolicy).toBe('Delete');
    const stage = Object.values(resourcesOf(stateless, 'AWS::ApiGateway::Stage'))[0] as {
      DependsOn?: string[];
    };
    expect(stage.DependsOn).toContain(executionId);
  });

  it('writes JSON access logs and error-level execution logs, never request bodies', () => {
    const [accessLogsId] = Object.keys(resourcesOf(stateless, 'AWS::Logs::LogGroup')).filter((id) =>
      id.startsWith('ApiAccessLogs'),
    );
    const stage = Object.values(resourcesOf(stateless, 'AWS::ApiGateway::Stage'))[0]?.Properties;
    expect(stage).toMatchObject({
      StageName: 'dev',
      AccessLogSetting: { DestinationArn: { 'Fn::GetAtt': [accessLogsId, 'Arn'] } },
      MethodSettings: [
        { HttpMethod: '*', ResourcePath: '/*', LoggingLevel: 'ERROR', DataTraceEnabled: false },
      ],
    });
    const format = JSON.parse((stage?.AccessLogSetting as { Format: string }).Format) as Record<
      string,
      string
    >;
    expect(format).toMatchObject({
      requestId: '$context.requestId',
      status: '$context.status',
      role: '$context.authorizer.principalId',
    });
    stateless.hasResource('AWS::IAM::Role', {
      Properties: {
        ManagedPolicyArns: [
          {
            'Fn::Join': [
              '',
              [
                'arn:',
                { Ref: 'AWS::Partition' },
                ':iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs',
              ],
            ],
          },
        ],
      },
      DeletionPolicy: 'Retain',
    });
  });

  it('consumes the scheduler queue with partial batch failures', () => {
    stateless.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: Match.stringLikeRegexp('^SchedulerFunction') },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it('reserves no concurrency by default, so an account with a low limit takes the first deploy', () => {
    expect(reservedConcurrencyOf(stateless)).toEqual({});
  });

  it('reserves the recommended concurrency with ackline:reservedConcurrency=true, or a chosen one per function', () => {
    const recommended = Template.fromStack(build({ 'ackline:reservedConcurrency': 'true' }).stateless);
    const chosen = Template.fromStack(
      build({ 'ackline:maintenanceReservedConcurrency': 1, 'ackline:schedulerReservedConcurrency': '3' })
        .stateless,
    );
    const off = Template.fromStack(
      build({ 'ackline:reservedConcurrency': true, 'ackline:schedulerReservedConcurrency': 0 }).stateless,
    );

    expect(RECOMMENDED_RESERVED_CONCURRENCY).toEqual({ scheduler: 5, maintenance: 1 });
    expect(reservedConcurrencyOf(recommended)).toEqual({ Scheduler: 5, Maintenance: 1 });
    expect(reservedConcurrencyOf(chosen)).toEqual({ Scheduler: 3, Maintenance: 1 });
    expect(reservedConcurrencyOf(off)).toEqual({ Maintenance: 1 });
    // The event source never takes more than the reservation lets run.
    expect(eventSourceConcurrency(recommended)).toBe(5);
    expect(eventSourceConcurrency(chosen)).toBe(3);
    expect(() => build({ 'ackline:reservedConcurrency': 'yes' })).toThrow(/must be true or false/);
    expect(() => build({ 'ackline:schedulerReservedConcurrency': 1 })).toThrow(/at least 2/);
  });

  it('bounds the scheduler event source with its maximum concurrency (5, or the context value)', () => {
    expect(SCHEDULER_MAX_CONCURRENCY).toBe(5);
    expect(eventSourceConcurrency(stateless)).toBe(SCHEDULER_MAX_CONCURRENCY);
    const raised = Template.fromStack(build({ 'ackline:schedulerMaxConcurrency': '40' }).stateless);
    expect(eventSourceConcurrency(raised)).toBe(40);
    expect(() => build({ 'ackline:schedulerMaxConcurrency': 1 })).toThrow(/from 2 to 1000/);
  });

  it('gives every SQS event source a maximum concurrency, and its queue six times the function timeout', () => {
    const mappings = Object.values(resourcesOf(stateless, 'AWS::Lambda::EventSourceMapping'));
    const functions = resourcesOf(stateless, 'AWS::Lambda::Function');
    const queues = resourcesOf(stateful, 'AWS::SQS::Queue');
    expect(mappings.length).toBeGreaterThan(0);
    for (const mapping of mappings) {
      const maximum = (mapping.Properties?.ScalingConfig as { MaximumConcurrency?: number } | undefined)
        ?.MaximumConcurrency;
      expect(maximum).toBeGreaterThanOrEqual(2);
      const fn = functions[(mapping.Properties?.FunctionName as { Ref: string }).Ref];
      const queueId = describeResource(mapping.Properties?.EventSourceArn, stateful).replace(/\.Arn$/, '');
      const queue = Object.entries(queues).find(([id]) => withoutHash(id) === queueId)?.[1];
      expect(queue, queueId).toBeDefined();
      expect(queue?.Properties?.VisibilityTimeout).toBeGreaterThanOrEqual(
        6 * Number(fn?.Properties?.Timeout),
      );
      // AWS advises at least 5 receives before a message of an event source is dead-lettered.
      const redrive = queue?.Properties?.RedrivePolicy as { maxReceiveCount: number };
      expect(redrive.maxReceiveCount).toBeGreaterThanOrEqual(5);
    }
  });

  it('runs maintenance every minute, for less than a minute, without retrying a run', () => {
    stateless.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      Targets: [{ Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^MaintenanceFunction'), 'Arn'] } }],
    });
    const [maintenance] = Object.entries(resourcesOf(stateless, 'AWS::Lambda::Function')).filter(([id]) =>
      id.startsWith('MaintenanceFunction'),
    );
    const timeoutSeconds = Number(maintenance?.[1].Properties?.Timeout);
    expect(timeoutSeconds).toBe(MAINTENANCE_TIMEOUT_SECONDS);
    expect(timeoutSeconds * 1000).toBeLessThan(MAINTENANCE_INTERVAL_MS);
    // It stops taking work with time left for what it started and its report.
    expect(MAINTENANCE_TIMEOUT_SECONDS * 1000 - STOP_BEFORE_TIMEOUT_MS).toBeGreaterThan(0);
    stateless.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: maintenance?.[0] },
      MaximumRetryAttempts: 0,
      MaximumEventAgeInSeconds: MAINTENANCE_INTERVAL_MS / 1000,
    });
  });
});

describe('token secret', () => {
  it('never appears as a value: no secret string, no ACKLINE_TOKEN_SECRET anywhere', () => {
    for (const template of [stateful, stateless]) {
      const json = JSON.stringify(template.toJSON());
      expect(json).not.toMatch(/"SecretString"/);
      expect(json).not.toMatch(/"ACKLINE_TOKEN_SECRET"/);
    }
  });

  it('refuses a secret value in context', () => {
    expect(() => build({ 'ackline:tokenSecret': 'literal-secret' })).toThrow(
      /ackline:tokenSecret is not a context value/,
    );
  });

  it('uses an existing Secrets Manager secret by ARN: no secret created, read access to that ARN only', () => {
    const built = build({ 'ackline:tokenSecretArn': SECRET_ARN });
    Template.fromStack(built.stateful).resourceCountIs('AWS::SecretsManager::Secret', 0);
    const template = Template.fromStack(built.stateless);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ ACKLINE_TOKEN_SECRET_ARN: SECRET_ARN }) },
    });
    expect(statementsByFunction(template, Template.fromStack(built.stateful)).Authorizer?.[1]).toEqual({
      actions: ['secretsmanager:GetSecretValue'],
      resources: [SECRET_ARN],
    });
    expect([...nagFindings(built.stateful), ...nagFindings(built.stateless)]).toEqual([]);
  });

  it('uses an SSM SecureString parameter and its KMS key: GetParameter on it, Decrypt through SSM only', () => {
    const built = build({
      'ackline:tokenSecretParameter': '/ackline/prod/token-secret',
      'ackline:tokenSecretKmsKeyArn': KMS_KEY_ARN,
    });
    Template.fromStack(built.stateful).resourceCountIs('AWS::SecretsManager::Secret', 0);
    const template = Template.fromStack(built.stateless);
    const authorizer = Object.values(resourcesOf(template, 'AWS::Lambda::Function')).find((fn) =>
      JSON.stringify(fn.Properties?.Environment).includes('ACKLINE_TOKEN_SECRET_PARAMETER'),
    );
    expect((authorizer?.Properties?.Environment as { Variables: Record<string, unknown> }).Variables).toEqual(
      {
        ACKLINE_STAGE: 'dev',
        ACKLINE_SUPERUSER_ROLES: 'admin',
        NODE_OPTIONS: '--enable-source-maps',
        ACKLINE_TOKEN_SECRET_PARAMETER: '/ackline/prod/token-secret',
      },
    );
    expect(statementsByFunction(template, Template.fromStack(built.stateful)).Authorizer?.slice(1)).toEqual([
      {
        actions: ['ssm:GetParameter'],
        resources: [
          'arn:<AWS::Partition>:ssm:<AWS::Region>:<AWS::AccountId>:parameter/ackline/prod/token-secret',
        ],
      },
      {
        actions: ['kms:Decrypt'],
        resources: [KMS_KEY_ARN],
        condition: {
          StringEquals: {
            'kms:ViaService': {
              'Fn::Join': ['', ['ssm.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }]],
            },
          },
        },
      },
    ]);
    expect([...nagFindings(built.stateful), ...nagFindings(built.stateless)]).toEqual([]);
  });

  it.each([
    [
      'a Secrets Manager secret',
      { 'ackline:tokenPublicKeyArn': SECRET_ARN },
      { ACKLINE_TOKEN_PUBLIC_KEY_ARN: SECRET_ARN },
      { actions: ['secretsmanager:GetSecretValue'], resources: [SECRET_ARN] },
    ],
    [
      'an SSM parameter',
      { 'ackline:tokenPublicKeyParameter': '/ackline/prod/token-public-key' },
      { ACKLINE_TOKEN_PUBLIC_KEY_PARAMETER: '/ackline/prod/token-public-key' },
      {
        actions: ['ssm:GetParameter'],
        resources: [
          'arn:<AWS::Partition>:ssm:<AWS::Region>:<AWS::AccountId>:parameter/ackline/prod/token-public-key',
        ],
      },
    ],
  ])('verifies with a public key from %s, with the token settings of the context: read access to it only', (_label, keyContext, keyEnvironment, statement) => {
    const built = build({
      ...keyContext,
      'ackline:tokenAudience': 'ackline-prod',
      'ackline:tokenAudienceClaim': 'scope',
      'ackline:tokenAuthClaim': 'role',
      'ackline:tokenClockToleranceSeconds': 30,
    });
    Template.fromStack(built.stateful).resourceCountIs('AWS::SecretsManager::Secret', 0);
    const template = Template.fromStack(built.stateless);
    const authorizer = Object.values(resourcesOf(template, 'AWS::Lambda::Function')).find((fn) =>
      JSON.stringify(fn.Properties?.Environment).includes('ACKLINE_TOKEN_PUBLIC_KEY'),
    );

    expect((authorizer?.Properties?.Environment as { Variables: Record<string, unknown> }).Variables).toEqual(
      {
        ACKLINE_STAGE: 'dev',
        ACKLINE_SUPERUSER_ROLES: 'admin',
        NODE_OPTIONS: '--enable-source-maps',
        ACKLINE_TOKEN_AUDIENCE: 'ackline-prod',
        ACKLINE_TOKEN_AUDIENCE_CLAIM: 'scope',
        ACKLINE_TOKEN_AUTH_CLAIM: 'role',
        ACKLINE_TOKEN_CLOCK_TOLERANCE_SECONDS: '30',
        ...keyEnvironment,
      },
    );
    expect(statementsByFunction(template, Template.fromStack(built.stateful)).Authorizer?.slice(1)).toEqual([
      statement,
    ]);
    expect([...nagFindings(built.stateful), ...nagFindings(built.stateless)]).toEqual([]);
  });

  it.each([
    [{ 'ackline:tokenSecretArn': 'ackline/prod/token' }, /ackline:tokenSecretArn must match/],
    [
      { 'ackline:tokenSecretArn': SECRET_ARN, 'ackline:tokenSecretParameter': '/x' },
      /one of ackline:tokenSecretArn and ackline:tokenSecretParameter/,
    ],
    [
      { 'ackline:tokenSecretKmsKeyArn': KMS_KEY_ARN },
      /ackline:tokenSecretKmsKeyArn applies to a token secret or public key the deployment brings only/,
    ],
    [
      { 'ackline:tokenSecretArn': SECRET_ARN, 'ackline:tokenPublicKeyParameter': '/x' },
      /set the token secret or the token public key, not both/,
    ],
    [
      { 'ackline:tokenPublicKeyArn': SECRET_ARN, 'ackline:tokenPublicKeyParameter': '/x' },
      /one of ackline:tokenPublicKeyArn and ackline:tokenPublicKeyParameter/,
    ],
    [
      { 'ackline:tokenClockToleranceSeconds': -1 },
      /ackline:tokenClockToleranceSeconds must be a non-negative/,
    ],
    [
      { 'ackline:tokenClockToleranceSeconds': '2.5' },
      /ackline:tokenClockToleranceSeconds must be a non-negative/,
    ],
    [{ 'ackline:tokenAudienceClaim': 'scope' }, /ackline:tokenAudienceClaim needs ackline:tokenAudience/],
    [{ 'ackline:tokenAudience': 'has space' }, /ackline:tokenAudience must match/],
    [{ 'ackline:tokenAuthClaim': 'a"b' }, /ackline:tokenAuthClaim must match/],
  ])('refuses the context %o', (context, message) => {
    expect(() => build(context)).toThrow(message);
  });
});

describe('alarms and dashboard', () => {
  const alarms = () =>
    Object.values(resourcesOf(stateless, 'AWS::CloudWatch::Alarm')).map((a) => a.Properties ?? {});
  const alarmNamed = (name: string) => {
    const found = alarms().find((alarm) => alarm.AlarmName === `ackline-dev-${name}`);
    if (found === undefined) throw new Error(`no alarm ackline-dev-${name}`);
    return found;
  };

  it('alarms when the scheduler dead-letter queue holds any message', () => {
    expect(alarmNamed('scheduler-dead-letter-depth')).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [
        {
          Name: 'QueueName',
          Value: { 'Fn::ImportValue': expect.stringMatching(/SchedulerQueueDeadLetter/) },
        },
      ],
      Statistic: 'Maximum',
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 0,
      TreatMissingData: 'notBreaching',
    });
  });

  it("alarms when the scheduler queue's oldest message is older than one hop plus slack", () => {
    expect(alarmNamed('scheduler-queue-age')).toMatchObject({
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [
        {
          Name: 'QueueName',
          Value: { 'Fn::ImportValue': expect.stringMatching(/SchedulerQueue[0-9A-F]{8}QueueName/) },
        },
      ],
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: SCHEDULER_QUEUE_MAX_AGE_SECONDS,
    });
  });

  it('alarms on any API 5xx', () => {
    expect(alarmNamed('api-5xx')).toMatchObject({
      Namespace: 'AWS/ApiGateway',
      MetricName: '5XXError',
      Dimensions: expect.arrayContaining([
        { Name: 'ApiName', Value: 'ackline-dev' },
        { Name: 'Stage', Value: expect.anything() },
      ]),
      Statistic: 'Sum',
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Threshold: 1,
    });
  });

  it.each(
    tables.map((table) => table.logicalName),
  )('alarms on read and write throttle events of the %s table', (name) => {
    for (const kind of ['read', 'write']) {
      expect(alarmNamed(`${name.toLowerCase()}-${kind}-throttles`)).toMatchObject({
        Namespace: 'AWS/DynamoDB',
        MetricName: `${kind === 'read' ? 'Read' : 'Write'}ThrottleEvents`,
        Dimensions: [
          {
            Name: 'TableName',
            Value: {
              'Fn::ImportValue': expect.stringMatching(new RegExp(`Stateful:ExportsOutputRef${name}`)),
            },
          },
        ],
        Statistic: 'Sum',
        Period: 300,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        Threshold: 1,
        TreatMissingData: 'notBreaching',
      });
    }
  });

  it.each(functionNames)('alarms on errors and throttles of %s', (name) => {
    const id = name
      .split('-')
      .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
      .join('');
    const functionRef = { Ref: expect.stringMatching(new RegExp(`^${id}Function[0-9A-F]{8}$`)) };
    expect(alarmNamed(`${name}-throttles`)).toMatchObject({
      MetricName: 'Throttles',
      Dimensions: [{ Name: 'FunctionName', Value: functionRef }],
      Threshold: 1,
    });
    // The authorizer answers refused tokens (for the handlers' 401) rather than throwing: its
    // errors are failures, as any function's.
    expect(alarmNamed(`${name}-errors`)).toMatchObject({
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: functionRef }],
      Threshold: 1,
    });
  });

  /** A metric the maintenance function emits (EMF): namespace Ackline, its service, the stage. */
  const maintenanceMetric = (name: string) => ({
    Namespace: 'Ackline',
    MetricName: name,
    Dimensions: expect.arrayContaining([
      { Name: 'service', Value: 'ackline-maintenance' },
      { Name: 'stage', Value: 'dev' },
    ]),
  });

  it('alarms when any run-time subscription dead-letter queue holds a token, as maintenance counts them', () => {
    expect(alarmNamed('subscription-dead-letter-depth')).toMatchObject({
      ...maintenanceMetric(maintenanceMetricNames.deadLetterMessages),
      Statistic: 'Maximum',
      // Three maintenance runs: every period holds a report.
      Period: 900,
      EvaluationPeriods: 1,
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 0,
      TreatMissingData: 'notBreaching',
    });
  });

  it('alarms when a due message has waited unacknowledged for half of the SQS retention', () => {
    expect(SUBSCRIPTION_BACKLOG_MAX_AGE_SECONDS).toBe(schedulerQueue.messageRetentionSeconds / 2);
    expect(alarmNamed('subscription-backlog-age')).toMatchObject({
      ...maintenanceMetric(maintenanceMetricNames.backlogAgeSeconds),
      Statistic: 'Maximum',
      Period: 3600,
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 7 * 86_400,
      TreatMissingData: 'notBreaching',
    });
  });

  it('alarms when no maintenance run completes in fifteen minutes, missing data included', () => {
    expect(alarmNamed('maintenance-stalled')).toMatchObject({
      ...maintenanceMetric(maintenanceMetricNames.runs),
      Statistic: 'Sum',
      Period: 900,
      ComparisonOperator: 'LessThanThreshold',
      Threshold: 1,
      TreatMissingData: 'breaching',
    });
  });

  it('watches the run-time queues through metrics: no alarm names a subscription queue or needs a query', () => {
    for (const alarm of alarms()) {
      expect(JSON.stringify(alarm)).not.toMatch(/ackline-dev--s-|SELECT /);
    }
  });

  it('sends every alarm to the SNS topic the context names, and back to OK', () => {
    const template = Template.fromStack(build({ 'ackline:alarmTopicArn': TOPIC_ARN }).stateless);
    template.allResourcesProperties('AWS::CloudWatch::Alarm', {
      AlarmActions: [TOPIC_ARN],
      OKActions: [TOPIC_ARN],
    });
    for (const alarm of alarms()) expect(alarm.AlarmActions).toBeUndefined();
  });

  it('graphs the alarms, the API, the functions, the scheduler queue and the custom metrics on one dashboard', () => {
    const [dashboard] = Object.values(resourcesOf(stateless, 'AWS::CloudWatch::Dashboard'));
    expect(dashboard?.Properties?.DashboardName).toBe('ackline-dev');
    const body = JSON.stringify(dashboard?.Properties?.DashboardBody);
    for (const expected of [
      'alarm',
      '5XXError',
      'Throttles',
      'Errors',
      'ApproximateAgeOfOldestMessage',
      'ApproximateNumberOfMessagesVisible',
      '\\"Ackline\\",\\"published\\",\\"service\\",\\"ackline-data-api\\",\\"stage\\",\\"dev\\"',
      '\\"Ackline\\",\\"adminAcknowledged\\",\\"service\\",\\"ackline-admin-api\\"',
      '\\"Ackline\\",\\"tokenRefused\\"',
      '\\"Ackline\\",\\"subscriptionDeadLetterMessages\\",\\"service\\",\\"ackline-maintenance\\"',
      '\\"Ackline\\",\\"subscriptionBacklogAgeSeconds\\",\\"service\\",\\"ackline-maintenance\\"',
      '\\"Ackline\\",\\"foldedEntries\\",\\"service\\",\\"ackline-maintenance\\"',
    ]) {
      expect(body).toContain(expected);
    }
  });
});

describe('cdk-nag AwsSolutions', () => {
  it('finds nothing unsuppressed in either stack', () => {
    expect(nagFindings(main.stateful)).toEqual([]);
    expect(nagFindings(main.stateless)).toEqual([]);
  });

  it('suppresses only the reviewed rules, each with a written reason', () => {
    const suppressed = new Map<string, string[]>();
    for (const template of [stateful, stateless]) {
      for (const resource of Object.values(template.toJSON().Resources as Resources)) {
        const rules = (resource.Metadata?.cdk_nag as { rules_to_suppress?: { id: string; reason: string }[] })
          ?.rules_to_suppress;
        for (const { id, reason } of rules ?? []) {
          expect(reason.length, `${id} needs a reason`).toBeGreaterThan(60);
          suppressed.set(id, [...(suppressed.get(id) ?? []), reason]);
        }
      }
    }
    expect([...suppressed.keys()].sort()).toEqual(
      [
        'AwsSolutions-APIG2', // request validation: proxy integration, handlers validate
        'AwsSolutions-APIG3', // WAF: opt-in
        'AwsSolutions-APIG4', // the public health probe
        'AwsSolutions-COG4', // Lambda token authorizer, not Cognito
        'AwsSolutions-IAM4', // API Gateway's account logging role
        'AwsSolutions-IAM5', // run-time subscription queues under the stage prefix
        'AwsSolutions-L1', // nodejs22.x pinned
        'AwsSolutions-SMG4', // no automatic rotation of the signing secret
      ].sort(),
    );
  });

  it('stays clean without the API Gateway logging role (an account that has one)', () => {
    const built = build({ 'ackline:apiGatewayCloudWatchRole': 'false' });
    const template = Template.fromStack(built.stateless);
    template.resourceCountIs('AWS::ApiGateway::Account', 0);
    template.resourceCountIs('AWS::IAM::Role', functionNames.length);
    expect(nagFindings(built.stateless)).toEqual([]);
  });
});

describe('app', () => {
  it('names the stacks, the queue prefix and the secret after the stage and honours the removal policy', () => {
    const built = build({ 'ackline:stage': 'prod', 'ackline:removalPolicy': 'destroy' });
    expect(built.stateful.stackName).toBe('Ackline-prod-Stateful');
    expect(built.stateless.stackName).toBe('Ackline-prod-Stateless');
    Template.fromStack(built.stateless).allResourcesProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ ACKLINE_STAGE: 'prod' }) },
    });
    const statefulTemplate = Template.fromStack(built.stateful);
    statefulTemplate.allResources('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete' });
    statefulTemplate.hasResource('AWS::SecretsManager::Secret', {
      Properties: { Name: 'ackline/prod/token-secret' },
      DeletionPolicy: 'Delete',
    });
  });

  it('passes the caps of unacknowledged messages from the context to the data functions, and refuses a bad one', () => {
    const built = build({
      'ackline:maxUnackedPerConsumer': 1000,
      'ackline:maxUnackedPerSubscription': '4000',
    });
    const lambdas = resourcesOf(Template.fromStack(built.stateless), 'AWS::Lambda::Function');
    const data = Object.entries(lambdas).filter(([id]) => !id.startsWith('Authorizer'));
    expect(data.length).toBeGreaterThan(0);
    for (const [, fn] of data) {
      expect((fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables).toMatchObject({
        ACKLINE_MAX_UNACKED_PER_CONSUMER: '1000',
        ACKLINE_MAX_UNACKED_PER_SUBSCRIPTION: '4000',
      });
    }
    expect(() => build({ 'ackline:maxUnackedPerConsumer': 0 })).toThrow(/ackline:maxUnackedPerConsumer/);
  });

  it('passes the default retention from the context to the data functions (both or neither), and refuses a bad one', () => {
    const built = build({
      'ackline:defaultRetentionTimeInMinutes': -1,
      'ackline:defaultRetentionSizeInMB': '-1',
    });
    const lambdas = resourcesOf(Template.fromStack(built.stateless), 'AWS::Lambda::Function');
    const data = Object.entries(lambdas).filter(([id]) => !id.startsWith('Authorizer'));
    expect(data.length).toBeGreaterThan(0);
    for (const [, fn] of data) {
      expect((fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables).toMatchObject({
        ACKLINE_DEFAULT_RETENTION_TIME_IN_MINUTES: '-1',
        ACKLINE_DEFAULT_RETENTION_SIZE_IN_MB: '-1',
      });
    }
    expect(() => build({ 'ackline:defaultRetentionTimeInMinutes': 60 })).toThrow(/go together/);
    expect(() =>
      build({ 'ackline:defaultRetentionTimeInMinutes': 0, 'ackline:defaultRetentionSizeInMB': 10 }),
    ).toThrow(/ackline:defaultRetention/);
  });

  it.each([
    'Prod_1',
    'dev-',
    'dev--eu',
    '-dev',
    '1dev',
    'a'.repeat(21),
  ])("rejects the stage %s, which cannot prefix queue names or could start another stage's", (stage) => {
    expect(() => buildApp({ context: { 'ackline:stage': stage } })).toThrow(/ackline:stage/);
  });

  it("grants one stage's run-time queues to its functions only: stage dev reaches no queue of stage dev-eu", () => {
    const queueResources = (stage: string) => {
      const built = build({ 'ackline:stage': stage });
      return Object.values(
        statementsByFunction(Template.fromStack(built.stateless), Template.fromStack(built.stateful)),
      )
        .flat()
        .flatMap((statement) => statement.resources)
        .filter((resource) => resource.includes(':sqs:') && resource.endsWith('*'))
        .map((resource) => resource.slice(resource.lastIndexOf(':') + 1));
    };
    // IAM's `*` matches any run of characters.
    const reaches = (pattern: string, queueName: string) =>
      new RegExp(`^${pattern.split('*').map(escapeRegExp).join('.*')}$`).test(queueName);
    const queuesOf = (stage: string) => [
      `${queuePrefix(stage)}s-Xq3_b-9AbCdEfGhIjKlMnO`,
      `${queuePrefix(stage)}s-Xq3_b-9AbCdEfGhIjKlMnO-dlq`,
    ];

    for (const [stage, other] of [
      ['dev', 'dev-eu'],
      ['dev-eu', 'dev'],
    ] as const) {
      const patterns = queueResources(stage);
      expect(patterns).toContain(`${queuePrefix(stage)}*`);
      expect(subscriptionQueueActions).toContain('sqs:TagQueue'); // CreateQueue with tags needs it
      for (const name of queuesOf(stage)) expect(patterns.some((p) => reaches(p, name))).toBe(true);
      for (const name of queuesOf(other))
        expect([stage, name, patterns.some((p) => reaches(p, name))]).toEqual([stage, name, false]);
    }
  });

  it('keeps the stacks environment-agnostic', () => {
    expect(Stack.of(main.stateless).environment).toBe('aws://unknown-account/unknown-region');
  });
});
