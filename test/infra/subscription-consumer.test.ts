import { App, Aspects, Duration, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AttributeType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import {
  AcklineSubscriptionConsumer,
  type AcklineSubscriptionConsumerProps,
  consumerTableActions,
} from '../../infra/constructs/subscription-consumer.ts';
import { loadConfig } from '../../shared/config/load-config.ts';
import { tables } from '../../shared/config/resources.ts';

type Statement = { Effect: string; Action: string | string[]; Resource: unknown };

const QUEUE_A = 'ackline-test-s-cursorA_1';
const QUEUE_B = 'ackline-test-s-cursorB-2';

/**
 * A stack with the deployment's tables and scheduler queue (as the stateful stack has them) and a
 * user's function wired to a subscription by the construct under test.
 */
function build(
  props: Partial<Omit<AcklineSubscriptionConsumerProps, 'function' | 'tables' | 'schedulerQueue'>> = {},
  timeout = Duration.seconds(10),
) {
  const app = new App();
  const stack = new Stack(app, 'Consumers');
  const deploymentTables = tables.map((definition) => ({
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
  }));
  const schedulerQueue = new Queue(stack, 'SchedulerQueue');
  const fn = new LambdaFunction(stack, 'Orders', {
    runtime: Runtime.NODEJS_22_X,
    handler: 'index.handler',
    code: Code.fromInline('export const handler = async () => ({ batchItemFailures: [] });'),
    timeout,
  });
  const consumer = new AcklineSubscriptionConsumer(stack, 'OrdersConsumer', {
    function: fn,
    stage: 'test',
    queueNames: [QUEUE_A],
    tables: deploymentTables,
    schedulerQueue,
    ...props,
  });
  return { app, stack, fn, consumer };
}

/** A policy resource as text: `Catalog.Arn`, `SchedulerQueue.Arn`, `arn:<AWS::Partition>:sqs:...`. */
function describeResource(value: unknown): string {
  if (typeof value === 'string') return value;
  const v = value as Record<string, unknown>;
  if (typeof v.Ref === 'string') return v.Ref.startsWith('AWS::') ? `<${v.Ref}>` : v.Ref;
  if (Array.isArray(v['Fn::GetAtt'])) {
    const [id, attribute] = v['Fn::GetAtt'] as [string, string];
    return `${id.replace(/[0-9A-F]{8}$/, '')}.${attribute}`;
  }
  if (Array.isArray(v['Fn::Join'])) {
    const [separator, parts] = v['Fn::Join'] as [string, unknown[]];
    return parts.map(describeResource).join(separator);
  }
  throw new Error(`cannot describe ${JSON.stringify(value)}`);
}

/** The function role's statements: `{ actions (sorted), resources (sorted) }`. */
function statements(template: Template): { actions: string[]; resources: string[] }[] {
  return Object.values(template.findResources('AWS::IAM::Policy')).flatMap((policy) =>
    (policy.Properties.PolicyDocument.Statement as Statement[]).map((statement) => {
      expect(statement.Effect).toBe('Allow');
      return {
        actions: [statement.Action].flat().sort(),
        resources: [statement.Resource].flat().map(describeResource).sort(),
      };
    }),
  );
}

const queueArn = (name: string) => `arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:${name}`;
const consume = [
  'sqs:ChangeMessageVisibility',
  'sqs:DeleteMessage',
  'sqs:GetQueueAttributes',
  'sqs:GetQueueUrl',
  'sqs:ReceiveMessage',
];

describe('AcklineSubscriptionConsumer', () => {
  it("consumes each of the subscription's queues with partial batch failures", () => {
    const { stack } = build({ queueNames: [QUEUE_A, QUEUE_B], batchSize: 5 });
    const template = Template.fromStack(stack);
    const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping'));
    expect(mappings.map((mapping) => describeResource(mapping.Properties.EventSourceArn)).sort()).toEqual([
      queueArn(QUEUE_A),
      queueArn(QUEUE_B),
    ]);
    for (const mapping of mappings) {
      expect(mapping.Properties).toMatchObject({
        FunctionName: { Ref: expect.stringMatching(/^Orders/) },
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        BatchSize: 5,
      });
    }
  });

  it('gives the function the environment acklineConsumer() configures itself from', () => {
    const { stack } = build({ consumerId: 'consumer-1' });
    const template = Template.fromStack(stack);
    const [fn] = Object.values(template.findResources('AWS::Lambda::Function'));
    const variables = fn?.Properties.Environment.Variables as Record<string, unknown>;
    expect(variables).toEqual({
      ACKLINE_STAGE: 'test',
      ACKLINE_QUEUE_PREFIX: 'ackline-test-',
      ACKLINE_SCHEDULER_QUEUE_URL: { Ref: expect.stringMatching(/^SchedulerQueue/) },
      ACKLINE_CATALOG_TABLE: { Ref: expect.stringMatching(/^Catalog/) },
      ACKLINE_ENTRIES_TABLE: { Ref: expect.stringMatching(/^Entries/) },
      ACKLINE_CURSORS_TABLE: { Ref: expect.stringMatching(/^Cursors/) },
      ACKLINE_CONSUMER_ID: 'consumer-1',
    });
    // Every variable the functions' configuration requires is there.
    const env = Object.fromEntries(Object.keys(variables).map((name) => [name, 'deployed-value']));
    expect(() => loadConfig(env)).not.toThrow();
  });

  it('grants exactly what an event-driven consumer calls, on exactly its resources', () => {
    const { stack } = build({ queueNames: [QUEUE_A, `${QUEUE_B}.fifo`] });
    const template = Template.fromStack(stack);
    const tableArns = ['Catalog.Arn', 'Cursors.Arn', 'Entries.Arn'];
    expect(statements(template)).toEqual(
      expect.arrayContaining([
        { actions: consume, resources: [queueArn(QUEUE_A)] },
        { actions: consume, resources: [queueArn(`${QUEUE_B}.fifo`)] },
        {
          actions: ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'],
          resources: ['SchedulerQueue.Arn'],
        },
        { actions: ['sqs:GetQueueUrl', 'sqs:SendMessage'], resources: [queueArn('ackline-test-*')] },
      ]),
    );
    const all = statements(template);
    // Table grants may arrive one statement per table; nothing else is granted.
    const tableStatements = all.filter((statement) =>
      statement.actions.some((a) => a.startsWith('dynamodb:')),
    );
    expect(tableStatements.flatMap((statement) => statement.resources).sort()).toEqual(tableArns);
    for (const statement of tableStatements) {
      expect(statement.actions).toEqual([...consumerTableActions].sort());
    }
    expect(consumerTableActions).not.toContain('dynamodb:Scan');
    expect(all).toHaveLength(4 + tableStatements.length);
    expect(all.flatMap((statement) => statement.actions).filter((action) => action.includes('*'))).toEqual(
      [],
    );
  });

  it("touches only its own subscription's cursors: a LeadingKeys condition on the Cursors table, from its queue names", () => {
    const { stack } = build({ queueNames: [QUEUE_A, `${QUEUE_B}.fifo`] });
    const policies = Object.values(Template.fromStack(stack).findResources('AWS::IAM::Policy'));
    const cursorStatements = policies
      .flatMap(
        (policy) => policy.Properties.PolicyDocument.Statement as (Statement & { Condition?: unknown })[],
      )
      .filter((statement) => JSON.stringify(statement.Resource).includes('Cursors'));

    expect(cursorStatements).toHaveLength(1);
    expect(cursorStatements[0]?.Condition).toEqual({
      'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['cursorA_1', 'cursorB-2'] },
    });
  });

  it('leaves cdk-nag one wildcard, the stage queue prefix, suppressed with its reason', () => {
    const { app, stack } = build();
    Aspects.of(app).add(new AwsSolutionsChecks({ reports: false }));
    const annotations = Annotations.fromStack(stack);
    const iam5 = [
      ...annotations.findError('*', Match.stringLikeRegexp('AwsSolutions-IAM5')),
      ...annotations.findWarning('*', Match.stringLikeRegexp('AwsSolutions-IAM5')),
    ];
    expect(iam5.map((finding) => String(finding.entry.data).split('\n')[0])).toEqual([]);
    const roles = Object.values(Template.fromStack(stack).findResources('AWS::IAM::Role'));
    const suppressed = roles.flatMap(
      (role) => (role.Metadata?.cdk_nag?.rules_to_suppress ?? []) as { id: string; reason: string }[],
    );
    expect(suppressed.map((rule) => rule.id)).toEqual(['AwsSolutions-IAM5']);
    expect(suppressed[0]?.reason).toContain('ackline-test-*');
  });

  it.each([
    {
      what: 'a batching window on an ordered (FIFO) queue',
      props: { queueNames: [`${QUEUE_A}.fifo`], maxBatchingWindow: Duration.seconds(5) },
      error: /Batching window is not supported for FIFO queues/,
    },
    {
      what: 'more than 10 records without a batching window',
      props: { batchSize: 11 },
      error: /between 1 and 10 inclusive/,
    },
    {
      what: 'a queue of another stage',
      props: { queueNames: ['ackline-prod-s-cursorA'] },
      error: /not a subscription queue of stage test/,
    },
    { what: 'no queue', props: { queueNames: [] }, error: /at least one queue/ },
  ])('refuses $what', ({ props, error }) => {
    expect(() => build(props)).toThrow(error);
  });

  it("refuses a function timeout that reaches the queues' visibility timeout (30 s)", () => {
    expect(() => build({}, Duration.seconds(30))).toThrow(/must be shorter than the subscription queues/);
    expect(() => build({}, Duration.seconds(29))).not.toThrow();
  });
});
