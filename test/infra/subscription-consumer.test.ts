import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Aspects, Duration, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AttributeType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/build-app.ts';
import { type DeploymentExport, deploymentExportName } from '../../infra/constructs/deployment-exports.ts';
import {
  AcklineSubscriptionConsumer,
  type AcklineSubscriptionConsumerProps,
  consumerTableActions,
  DEFAULT_RUNNER_MAX_CONCURRENCY,
  MAX_FUNCTION_TIMEOUT_SECONDS,
  ORDERED_RUNNER_MAX_CONCURRENCY,
  RUNNER_TIMEOUT_SECONDS,
} from '../../infra/constructs/subscription-consumer.ts';
import { loadConfig } from '../../shared/config/load-config.ts';
import { subscriptionQueueTemplate, tables } from '../../shared/config/resources.ts';

type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };
type Props = Partial<Omit<AcklineSubscriptionConsumerProps, 'function'>>;

const TOPIC = 'persistent://public/default/orders';

/**
 * A user's stack: a function wired by the construct under test to subscription `billing` of
 * `orders`; with `local: true`, the deployment's tables and scheduler queue are in the same stack
 * (as StatefulStack has them), otherwise they are imported by stage.
 */
/** The ScalingConfig.MaximumConcurrency of each event source mapping of the template. */
function maximumConcurrencies(template: Template): unknown[] {
  return Object.values(template.findResources('AWS::Lambda::EventSourceMapping')).map(
    (mapping) => mapping.Properties.ScalingConfig?.MaximumConcurrency,
  );
}

function build(props: Props & { local?: boolean } = {}, timeout = Duration.seconds(10)) {
  const { local = true, ...rest } = props;
  const app = new App();
  const stack = new Stack(app, 'Consumers');
  const fn = new LambdaFunction(stack, 'Orders', {
    runtime: Runtime.NODEJS_22_X,
    handler: 'index.handler',
    code: Code.fromInline('export const handler = async () => ({ acklineFailures: [] });'),
    timeout,
  });
  const consumer = new AcklineSubscriptionConsumer(stack, 'OrdersConsumer', {
    function: fn,
    stage: 'test',
    topic: TOPIC,
    subscription: 'billing',
    ...(local ? { deployment: deploymentIn(stack) } : {}),
    ...rest,
  });
  return { app, stack, fn, consumer };
}

function deploymentIn(stack: Stack): AcklineSubscriptionConsumerProps['deployment'] {
  return {
    tables: tables.map((definition) => ({
      definition,
      table: new Table(stack, definition.logicalName, {
        partitionKey: {
          name: definition.partitionKey.name,
          type: definition.partitionKey.type === 'S' ? AttributeType.STRING : AttributeType.NUMBER,
        },
        sortKey: {
          name: definition.sortKey.name,
          type: definition.sortKey.type === 'S' ? AttributeType.STRING : AttributeType.NUMBER,
        },
      }),
    })),
    schedulerQueue: new Queue(stack, 'SchedulerQueue'),
  };
}

/** A template value as text: `Catalog.Arn`, `import(ackline-test-CatalogTableArn)`, `arn:<AWS::Partition>:sqs:...`. */
function describeResource(value: unknown): string {
  if (typeof value === 'string') return value;
  const v = value as Record<string, unknown>;
  if (typeof v.Ref === 'string')
    return v.Ref.startsWith('AWS::') ? `<${v.Ref}>` : v.Ref.replace(/[0-9A-F]{8}$/, '');
  if (Array.isArray(v['Fn::GetAtt'])) {
    const [id, attribute] = v['Fn::GetAtt'] as [string, string];
    return `${id.replace(/[0-9A-F]{8}$/, '')}.${attribute}`;
  }
  if (Array.isArray(v['Fn::Join'])) {
    const [separator, parts] = v['Fn::Join'] as [string, unknown[]];
    return parts.map(describeResource).join(separator);
  }
  if (v['Fn::ImportValue'] !== undefined) return `import(${describeResource(v['Fn::ImportValue'])})`;
  throw new Error(`cannot describe ${JSON.stringify(value)}`);
}

/** The raw statements of the policies attached to a role, by the start of its logical id. */
function rawStatements(template: Template, role: string): Statement[] {
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(role))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
}

/** The statements of a role's policies (the runner's by default): `{ actions (sorted), resources (sorted) }`. */
function statements(
  template: Template,
  role = 'OrdersConsumerRunnerRole',
): { actions: string[]; resources: string[] }[] {
  return rawStatements(template, role).map((statement) => {
    expect(statement.Effect).toBe('Allow');
    return {
      actions: [statement.Action].flat().sort(),
      resources: [statement.Resource].flat().map(describeResource).sort(),
    };
  });
}

/** A Lambda function of the template, by the start of its logical id. */
function functionResource(template: Template, logicalId: string) {
  const [found, ...others] = Object.entries(template.findResources('AWS::Lambda::Function')).filter(([id]) =>
    new RegExp(`^${logicalId}[0-9A-F]{8}$`).test(id),
  );
  expect(others).toEqual([]);
  return found?.[1] as { Properties: Record<string, unknown> };
}

/** The queue of partition `index`: its name is `ackline-test--s-` + the cursor id the lookup read. */
const queueArn = (index: number) =>
  `arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:ackline-test--s-OrdersConsumerSubscription${index}.Item.ci.S`;
const consume = [
  'sqs:ChangeMessageVisibility',
  'sqs:DeleteMessage',
  'sqs:GetQueueAttributes',
  'sqs:GetQueueUrl',
  'sqs:ReceiveMessage',
];

describe('AcklineSubscriptionConsumer', () => {
  it("finds the subscription's queue of each partition by topic and subscription name, at deploy time", () => {
    const { stack } = build({ partitions: 2, batchSize: 5 });
    const template = Template.fromStack(stack);
    const lookups = Object.values(template.findResources('Custom::AWS'));
    expect(
      lookups.map((lookup) => JSON.parse(describeResource(lookup.Properties.Create)) as unknown).sort(),
    ).toEqual(
      [0, 1].map((i) => ({
        service: 'DynamoDB',
        action: 'GetItem',
        parameters: {
          TableName: 'Catalog',
          Key: { pk: { S: `ML#${TOPIC}-partition-${i}` }, sk: { S: 'S#billing' } },
          ConsistentRead: true,
          ProjectionExpression: 'ci',
        },
        physicalResourceId: { id: `${TOPIC}-partition-${i} billing` },
        outputPaths: ['Item.ci.S'],
      })),
    );
    const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping'));
    expect(mappings.map((mapping) => describeResource(mapping.Properties.EventSourceArn)).sort()).toEqual([
      queueArn(0),
      queueArn(1),
    ]);
    for (const mapping of mappings) {
      expect(mapping.Properties).toMatchObject({
        FunctionName: { Ref: expect.stringMatching(/^OrdersConsumerRunner/) },
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        BatchSize: 5,
      });
    }
  });

  it("gives the runner the environment it configures itself from, and the user's function none", () => {
    const { stack } = build({ consumerName: 'billing-fn' });
    const template = Template.fromStack(stack);
    const runner = functionResource(template, 'OrdersConsumerRunner');
    const variables = (runner.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(variables).toEqual({
      NODE_OPTIONS: '--enable-source-maps',
      ACKLINE_STAGE: 'test',
      ACKLINE_QUEUE_PREFIX: 'ackline-test--',
      ACKLINE_SCHEDULER_QUEUE_URL: { Ref: expect.stringMatching(/^SchedulerQueue/) },
      ACKLINE_CATALOG_TABLE: { Ref: expect.stringMatching(/^Catalog/) },
      ACKLINE_ENTRIES_TABLE: { Ref: expect.stringMatching(/^Entries/) },
      ACKLINE_CURSORS_TABLE: { Ref: expect.stringMatching(/^Cursors/) },
      ACKLINE_TOPIC: TOPIC,
      ACKLINE_SUBSCRIPTION: 'billing',
      ACKLINE_CONSUMER_NAME: 'billing-fn',
      ACKLINE_TARGET_FUNCTION: { 'Fn::GetAtt': [expect.stringMatching(/^Orders[0-9A-F]{8}$/), 'Arn'] },
      ACKLINE_TARGET_TIMEOUT_MS: '10000',
    });
    // Every variable the functions' configuration requires is there.
    const env = Object.fromEntries(Object.keys(variables).map((name) => [name, 'deployed-value']));
    expect(() => loadConfig(env)).not.toThrow();
    expect(runner.Properties).toMatchObject({
      Handler: 'index.handler',
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      Timeout: RUNNER_TIMEOUT_SECONDS,
    });
    expect(runner.Properties.ReservedConcurrentExecutions).toBeUndefined();
    expect(functionResource(template, 'Orders').Properties.Environment).toBeUndefined();
  });

  it("grants the runner exactly what it calls, on exactly its resources, and the user's function nothing", () => {
    const { stack } = build({ partitions: 2 });
    const template = Template.fromStack(stack);
    const tableArns = ['Catalog.Arn', 'Cursors.Arn', 'Entries.Arn'];
    const all = statements(template);
    expect(all).toEqual(
      expect.arrayContaining([
        { actions: consume, resources: [queueArn(0)] },
        { actions: consume, resources: [queueArn(1)] },
        {
          actions: ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'],
          resources: ['SchedulerQueue.Arn'],
        },
        {
          actions: ['sqs:GetQueueUrl', 'sqs:SendMessage'],
          resources: ['arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:ackline-test--*'],
        },
        // The user's function itself, unqualified: no version or alias wildcard.
        { actions: ['lambda:InvokeFunction'], resources: ['Orders.Arn'] },
        {
          actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          resources: ['OrdersConsumerRunnerLogs.Arn'],
        },
      ]),
    );
    // Table grants may arrive one statement per table; nothing else is granted.
    const tableStatements = all.filter((statement) =>
      statement.actions.some((a) => a.startsWith('dynamodb:')),
    );
    expect(tableStatements.flatMap((statement) => statement.resources).sort()).toEqual(tableArns);
    for (const statement of tableStatements) {
      expect(statement.actions).toEqual([...consumerTableActions].sort());
    }
    expect(consumerTableActions).not.toContain('dynamodb:Scan');
    expect(all).toHaveLength(6 + tableStatements.length);
    expect(all.flatMap((statement) => statement.actions).filter((action) => action.includes('*'))).toEqual(
      [],
    );
    // The user's function: the construct attaches no policy to its role, so the role keeps only
    // what the user gave it (here CDK's default, AWSLambdaBasicExecutionRole), nothing of ackline's.
    expect(rawStatements(template, 'OrdersServiceRole')).toEqual([]);
    expect(JSON.stringify(functionResource(template, 'Orders').Properties)).not.toMatch(
      /Catalog|Cursors|Entries|SchedulerQueue/,
    );
    // The deploy-time lookup may read the subscription's item, nothing more.
    const lookupStatements = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((policy) => !JSON.stringify(policy.Properties.Roles).includes('OrdersConsumerRunnerRole'))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
    expect(lookupStatements.map((s) => [s.Action, describeResource(s.Resource)])).toEqual([
      ['dynamodb:GetItem', 'Catalog.Arn'],
      ['dynamodb:GetItem', 'Catalog.Arn'],
    ]);
  });

  it("lets the runner touch only its own subscription's cursors: a LeadingKeys condition on the Cursors table, from the cursor ids its lookups find", () => {
    const { stack } = build({ partitions: 2 });
    const cursorStatements = rawStatements(Template.fromStack(stack), 'OrdersConsumerRunnerRole').filter(
      (statement) => JSON.stringify(statement.Resource).includes('Cursors'),
    );

    expect(cursorStatements).toHaveLength(1);
    const condition = cursorStatements[0]?.Condition as Record<string, Record<string, unknown[]>>;
    const keys = condition['ForAllValues:StringEquals']?.['dynamodb:LeadingKeys'] ?? [];
    expect(keys.map(describeResource)).toEqual([
      'OrdersConsumerSubscription0.Item.ci.S',
      'OrdersConsumerSubscription1.Item.ci.S',
    ]);
  });

  it("deploys the prebuilt runner bundle shipped with the construct (no bundling in the user's app)", () => {
    const { app, stack } = build();
    const assembly = app.synth();
    const runner = functionResource(Template.fromStack(stack), 'OrdersConsumerRunner');
    const key = (runner.Properties.Code as { S3Key: string }).S3Key;
    // The asset is the folder the construct points at, staged as `asset.<hash>` beside the template.
    const directory = join(assembly.directory, `asset.${key.replace(/\.zip$/, '')}`);
    expect(readdirSync(directory).sort()).toEqual(['index.mjs', 'index.mjs.map']);
    expect(readFileSync(join(directory, 'index.mjs'), 'utf8')).toContain('acklineFailures');
  });

  it("gives an ordered subscription one runner at a time (reserved concurrency 1), not the user's function", () => {
    const template = Template.fromStack(build({ ordered: true }).stack);
    expect(functionResource(template, 'OrdersConsumerRunner').Properties.ReservedConcurrentExecutions).toBe(
      1,
    );
    expect(functionResource(template, 'Orders').Properties.ReservedConcurrentExecutions).toBeUndefined();
    // Its event source takes the least Lambda allows; a larger one would only be throttled.
    expect(maximumConcurrencies(template)).toEqual([ORDERED_RUNNER_MAX_CONCURRENCY]);
    expect(ORDERED_RUNNER_MAX_CONCURRENCY).toBe(2);
    expect(() => build({ ordered: true, maxConcurrency: 10 })).toThrow(/cannot be set on an ordered/);
  });

  it('bounds every event source with a maximum concurrency: 5 by default, or the one given', () => {
    const byDefault = Template.fromStack(build({ partitions: 3 }).stack);
    const given = Template.fromStack(build({ partitions: 2, maxConcurrency: 20 }).stack);

    expect(DEFAULT_RUNNER_MAX_CONCURRENCY).toBe(5);
    expect(maximumConcurrencies(byDefault)).toEqual([5, 5, 5]);
    expect(maximumConcurrencies(given)).toEqual([20, 20]);
    expect(functionResource(byDefault, 'OrdersConsumerRunner').Properties.ReservedConcurrentExecutions).toBe(
      undefined,
    );
    for (const wrong of [1, 1001, 2.5]) {
      expect(() => build({ maxConcurrency: wrong })).toThrow(/from 2 to 1000/);
    }
  });

  it("gives the runner a sixth of the subscription queues' visibility timeout, and them room for 5 receives", () => {
    const runner = functionResource(Template.fromStack(build().stack), 'OrdersConsumerRunner');
    const timeoutSeconds = Number(runner.Properties.Timeout);

    // The queues are created at run time from the template (SqsDeliveryQueue.create).
    expect(subscriptionQueueTemplate.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(6 * timeoutSeconds);
    expect(subscriptionQueueTemplate.maxReceiveCount).toBeGreaterThanOrEqual(5);
    expect(timeoutSeconds).toBe(RUNNER_TIMEOUT_SECONDS);
  });

  it("imports the deployment's tables and scheduler queue by stage from what the stateful stack exports", () => {
    const { stack } = build({ local: false });
    const template = Template.fromStack(stack);
    const runner = functionResource(template, 'OrdersConsumerRunner');
    const variables = (runner.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(describeResource(variables.ACKLINE_SCHEDULER_QUEUE_URL)).toBe(
      'import(ackline-test-SchedulerQueueUrl)',
    );
    expect(JSON.stringify(variables.ACKLINE_CATALOG_TABLE)).toContain('ackline-test-CatalogTableArn');
    const imported = JSON.stringify(template.toJSON()).match(/"Fn::ImportValue":"([^"]+)"/g) ?? [];
    const names = new Set(imported.map((match) => match.replace(/.*:"|"$/g, '')));

    const deployment = buildApp({ context: { 'ackline:stage': 'test', 'aws:cdk:bundling-stacks': [] } });
    const outputs = Template.fromStack(deployment.stateful).toJSON().Outputs as Record<
      string,
      { Export: { Name: string } }
    >;
    const exported = new Set(Object.values(outputs).map((output) => output.Export.Name));
    const expected: DeploymentExport[] = [
      'CatalogTableArn',
      'EntriesTableArn',
      'CursorsTableArn',
      'SchedulerQueueArn',
      'SchedulerQueueUrl',
    ];
    expect([...names].sort()).toEqual(expected.map((what) => deploymentExportName('test', what)).sort());
    for (const name of names) expect(exported).toContain(name);
  });

  it("passes cdk-nag: one wildcard (the stage queue prefix) and the runner's pinned runtime, suppressed with their reasons", () => {
    const { app, stack } = build();
    Aspects.of(app).add(new AwsSolutionsChecks({ reports: false }));
    const annotations = Annotations.fromStack(stack);
    // The user's own function and the test's queue have findings of their own (runtime, managed
    // policy, no DLQ): only the construct's resources, its lookup provider and IAM5 anywhere count.
    const findings = [
      ...annotations.findError('*', Match.stringLikeRegexp('AwsSolutions-')),
      ...annotations.findWarning('*', Match.stringLikeRegexp('AwsSolutions-')),
    ].filter(
      (finding) =>
        /OrdersConsumer|AWS679f53fac002430cb0da5b7982bd2287/.test(finding.id) ||
        String(finding.entry.data).startsWith('AwsSolutions-IAM5'),
    );
    expect(findings.map((finding) => String(finding.entry.data).split('\n')[0])).toEqual([]);
    const roles = Object.values(Template.fromStack(stack).findResources('AWS::IAM::Role'));
    const suppressed = roles.flatMap(
      (role) => (role.Metadata?.cdk_nag?.rules_to_suppress ?? []) as { id: string; reason: string }[],
    );
    const iam5 = suppressed.filter((rule) => rule.id === 'AwsSolutions-IAM5');
    expect(iam5).toHaveLength(1);
    expect(iam5[0]?.reason).toContain('ackline-test--*');
    // Every suppression of the construct's resources says why.
    const template = Template.fromStack(stack).toJSON() as {
      Resources: Record<
        string,
        { Metadata?: { cdk_nag?: { rules_to_suppress: { id: string; reason: string }[] } } }
      >;
    };
    const rules = Object.entries(template.Resources)
      .filter(([id]) => id.startsWith('OrdersConsumer'))
      .flatMap(([, resource]) => resource.Metadata?.cdk_nag?.rules_to_suppress ?? []);
    expect(new Set(rules.map((rule) => rule.id))).toEqual(new Set(['AwsSolutions-IAM5', 'AwsSolutions-L1']));
    for (const rule of rules) expect(rule.reason.length).toBeGreaterThan(40);
  });

  it.each([
    {
      what: 'more than 10 records without a batching window',
      props: { batchSize: 11 },
      error: /between 1 and 10 inclusive/,
    },
    {
      what: 'a topic that is not persistent',
      props: { topic: 'non-persistent://public/default/orders' },
      error: /not a persistent topic/,
    },
    {
      what: 'a partition of a partitioned topic',
      props: { topic: `${TOPIC}-partition-0`, partitions: 2 },
      error: /by its own name/,
    },
    { what: 'a negative partition count', props: { partitions: -1 }, error: /non-negative integer/ },
    { what: 'no subscription', props: { subscription: '' }, error: /subscription must not be empty/ },
  ])('refuses $what', ({ props, error }) => {
    expect(() => build(props)).toThrow(error);
  });

  it(`refuses a function timeout past ${MAX_FUNCTION_TIMEOUT_SECONDS} s: the runner's (29 s, under the queues' visibility timeout) less 4 s to acknowledge`, () => {
    expect(MAX_FUNCTION_TIMEOUT_SECONDS).toBe(25);
    expect(() => build({}, Duration.seconds(26))).toThrow(/must be at most 25 s/);
    expect(() => build({}, Duration.seconds(25))).not.toThrow();
  });

  it.each([
    'test-',
    'test--eu',
    'Test',
  ])("refuses the stage %s, whose queue prefix could start another stage's queue names", (stage) => {
    expect(() => build({ stage })).toThrow(/stage must be/);
  });
});
