import { readFileSync } from 'node:fs';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { apiRoutes, functionNames, publicPaths } from '../../infra/api-routes.ts';
import { buildApp } from '../../infra/build-app.ts';
import { schedulerQueue, tables } from '../../shared/config/resources.ts';

// The context `cdk synth` gets, so the template under test is the deployed one.
const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
  context: Record<string, unknown>;
};

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown> }>;

// Building the app bundles the five handlers with esbuild (real bundling, a
// few seconds); it happens once and every test reads the same templates.
let stateful: Template;
let stateless: Template;
beforeAll(() => {
  const built = buildApp({ context: cdkJson.context });
  stateful = Template.fromStack(built.stateful);
  stateless = Template.fromStack(built.stateless);
});

function resourcesOf(template: Template, type: string): Resources {
  return template.findResources(type) as Resources;
}

describe('stateful stack', () => {
  it('builds exactly one table per definition', () => {
    stateful.resourceCountIs('AWS::DynamoDB::Table', tables.length);
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
  });

  it('encrypts every queue and lets it be reached over TLS only', () => {
    const queues = resourcesOf(stateful, 'AWS::SQS::Queue');
    const policies = Object.values(resourcesOf(stateful, 'AWS::SQS::QueuePolicy'));
    expect(Object.keys(queues)).toHaveLength(2);
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
});

describe('stateless stack', () => {
  it('has exactly the five ackline functions, nodejs22.x on arm64, and no CDK-internal ones', () => {
    // Log groups are explicit LogGroup resources, so no Custom::LogRetention
    // singleton Lambda exists; every AWS::Lambda::Function is an ackline entry point.
    stateless.resourceCountIs('Custom::LogRetention', 0);
    const lambdas = resourcesOf(stateless, 'AWS::Lambda::Function');
    expect(Object.keys(lambdas)).toHaveLength(functionNames.length);
    for (const fn of Object.values(lambdas)) {
      expect(fn.Properties).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
      });
    }
    for (const name of ['AdminApi', 'DataApi', 'Authorizer', 'Scheduler', 'Maintenance']) {
      expect(Object.keys(lambdas).some((id) => id.startsWith(`${name}Function`))).toBe(true);
    }
  });

  it('gives every function the configuration variables and a log group with the context retention', () => {
    const lambdas = Object.values(resourcesOf(stateless, 'AWS::Lambda::Function'));
    for (const fn of lambdas) {
      const variables = (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(Object.keys(variables)).toEqual(
        expect.arrayContaining([...tables.map((t) => t.envVar), schedulerQueue.envVar, 'ACKLINE_STAGE']),
      );
      expect(variables).toMatchObject({
        ACKLINE_QUEUE_PREFIX: 'ackline-dev-',
        ACKLINE_STAGE: 'dev',
        NODE_OPTIONS: '--enable-source-maps',
      });
      expect(fn.Properties?.LoggingConfig).toEqual({ LogGroup: { Ref: expect.any(String) } });
    }
    stateless.resourceCountIs('AWS::Logs::LogGroup', functionNames.length);
    stateless.allResourcesProperties('AWS::Logs::LogGroup', {
      RetentionInDays: cdkJson.context['ackline:logRetentionDays'],
    });
  });

  it('guards every proxy route with the REQUEST authorizer and leaves only the public paths open', () => {
    stateless.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      Type: 'REQUEST',
      IdentitySource: 'method.request.header.Authorization',
      AuthorizerResultTtlInSeconds: 0,
    });
    const [authorizerId] = Object.keys(resourcesOf(stateless, 'AWS::ApiGateway::Authorizer'));

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

  it('consumes the scheduler queue with partial batch failures', () => {
    stateless.resourceCountIs('AWS::Lambda::EventSourceMapping', 1);
    stateless.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: Match.stringLikeRegexp('^SchedulerFunction') },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it('runs maintenance every five minutes', () => {
    stateless.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(5 minutes)',
      Targets: [{ Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^MaintenanceFunction'), 'Arn'] } }],
    });
  });

  it('scopes the run-time subscription queues to the stage prefix', () => {
    const documents = JSON.stringify(resourcesOf(stateless, 'AWS::IAM::Policy'));
    expect(documents).toContain('"sqs:CreateQueue"');
    expect(documents).toContain(':ackline-dev-*"');
  });

  it('grants no wildcard action and no wildcard resource to sqs or dynamodb actions', () => {
    for (const template of [stateful, stateless]) {
      for (const [id, policy] of Object.entries(resourcesOf(template, 'AWS::IAM::Policy'))) {
        const statements = (policy.Properties?.PolicyDocument as { Statement: Record<string, unknown>[] })
          .Statement;
        for (const statement of statements) {
          const actions = [statement.Action].flat() as string[];
          const resources = [statement.Resource].flat();
          expect(
            actions.filter((action) => action === '*' || action.endsWith(':*')),
            id,
          ).toEqual([]);
          if (actions.some((action) => action.startsWith('sqs:') || action.startsWith('dynamodb:'))) {
            expect(resources, id).not.toContain('*');
          }
        }
      }
    }
  });
});

describe('app', () => {
  it('names the stacks and the queue prefix after the stage and honours the removal policy', () => {
    const built = buildApp({
      context: { ...cdkJson.context, 'ackline:stage': 'prod', 'ackline:removalPolicy': 'destroy' },
    });
    expect(built.stateful.stackName).toBe('Ackline-prod-Stateful');
    expect(built.stateless.stackName).toBe('Ackline-prod-Stateless');
    Template.fromStack(built.stateless).allResourcesProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ ACKLINE_QUEUE_PREFIX: 'ackline-prod-' }) },
    });
    Template.fromStack(built.stateful).allResources('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete' });
  });

  it('rejects a stage that cannot prefix queue names', () => {
    expect(() => buildApp({ context: { 'ackline:stage': 'Prod_1' } })).toThrow(/ackline:stage/);
  });
});
