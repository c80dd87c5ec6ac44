// The subscription runner's step over in-memory ports: it dispatches to the event-driven consumer,
// hands each batch to the user's function through a FunctionInvoker, acknowledges what succeeded,
// nacks what failed, and leaves held what an invocation that failed (timed out, crashed) had: that
// counts as a delivery, and past maxRedeliverCount the message is dead-lettered (issue 11, c. 3).
import { describe, expect, it } from 'vitest';
import type { Dependencies } from '../../../shared/adapters/create-dependencies.ts';
import { InProcessFunctionInvoker } from '../../../shared/adapters/lambda/in-process-function-invoker.ts';
import type { ConsumerMessage } from '../../../shared/application/consumers/consumer-message.ts';
import {
  processQueueRecords,
  type QueueRecordsResult,
} from '../../../shared/application/consumers/process-queue-records.ts';
import { receiveMessages } from '../../../shared/application/consumers/receive-messages.ts';
import {
  type SubscribeRequest,
  subscribeConsumer,
} from '../../../shared/application/consumers/subscribe-consumer.ts';
import { publishMessages } from '../../../shared/application/producers/publish-messages.ts';
import type { Principal } from '../../../shared/application/tenancy/principal.ts';
import type { UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import { RoundRobinRouter } from '../../../shared/domain/message-router.ts';
import type { SubscriptionType } from '../../../shared/domain/subscription-type.ts';
import { TopicName } from '../../../shared/domain/topic-name.ts';
import { acklineConsumer } from '../../../shared/lambda/ackline-consumer.ts';
import type { AcklineBatchEvent } from '../../../shared/lambda/consumer-batch.ts';
import {
  batchHandlerOf,
  consumerSelectorFromEnv,
  makeConsumerRunner,
} from '../../../shared/lambda/consumer-runner.ts';
import type { FunctionInvoker } from '../../../shared/ports/function-invoker.ts';
import { FunctionInvocationError } from '../../../shared/ports/function-invoker.ts';
import { twoProcesses } from '../../support/in-memory-processes.ts';
import type { ManualClock } from '../../support/manual-clock.ts';
import { overtakingLedger } from '../../support/overtaking-ledger.ts';

const admin: Principal = { role: 'admin', superuser: true };
const topic = TopicName.parse('persistent://public/default/runner');
/** The function's timeout, registered at subscribe: the ack timeout of what the runner dispatches. */
const FUNCTION_TIMEOUT_MS = 2_000;
/** An unfinished delivery is due again this long after its claim (the function's timeout + 5 s). */
const HELD_MS = FUNCTION_TIMEOUT_MS + 5_000;

/** One invocation of the user's function: the batch it got (payload, redeliveryCount) and its order. */
interface Invocation {
  readonly order: string;
  readonly messages: readonly [string, number][];
}

async function setUp(subscriptionType: SubscriptionType, extra: Partial<SubscribeRequest> = {}) {
  const [ports] = twoProcesses();
  const { consumerId } = await subscribeConsumer(ports, admin, {
    topic,
    subscription: 'fn',
    subscriptionType,
    initialPosition: 'Earliest',
    policy: { negativeAckRedeliveryDelayMs: 1_000 },
    lambda: { functionTimeoutMs: FUNCTION_TIMEOUT_MS },
    ...extra,
  });
  const consumer = await ports.consumers.get(consumerId);
  const cursorId = consumer?.partitions[0]?.cursorId as string;
  return { ports, consumerId, cursorId, clock: ports.clock as ManualClock };
}

/** One runner step, on one doorbell record of the subscription's queue. */
function step(ports: UseCasePorts, consumerId: string, cursorId: string, target: FunctionInvoker) {
  return processQueueRecords(ports, {
    consumerId,
    records: [{ recordId: 'r1', cursorId, body: '' }],
    handleBatch: batchHandlerOf(target),
  });
}

/** The user's function, as acklineConsumer builds it, recording its invocations; `fails` says which process() throws. */
function userFunction(fails: (message: ConsumerMessage) => boolean = () => false) {
  const invocations: Invocation[] = [];
  const handler = acklineConsumer({
    process: (message) => {
      if (fails(message)) throw new Error(`refused ${message.payload}`);
    },
  });
  const target = new InProcessFunctionInvoker((event: AcklineBatchEvent) => {
    invocations.push({
      order: event.acklineBatch.order,
      messages: event.acklineBatch.messages.map((m) => [m.payload, m.redeliveryCount]),
    });
    return handler(event);
  });
  return { invocations, target };
}

/** A function whose invocations fail (a timeout or crash, as Lambda reports it), recording what each had. */
function crashingFunction() {
  const invocations: Invocation[] = [];
  const target: FunctionInvoker = {
    invoke: async (payload) => {
      const event = payload as AcklineBatchEvent;
      invocations.push({
        order: event.acklineBatch.order,
        messages: event.acklineBatch.messages.map((m) => [m.payload, m.redeliveryCount]),
      });
      throw new FunctionInvocationError(
        'fn failed (Unhandled): Sandbox.Timedout: Task timed out after 2.00 seconds',
      );
    },
  };
  return { invocations, target };
}

const publish = (ports: UseCasePorts, payloads: readonly string[]) =>
  publishMessages(ports, admin, topic, {
    messages: payloads.map((payload) => ({ payload, key: `k-${payload}`, properties: {} })),
    router: new RoundRobinRouter(0),
  });

const kinds = (result: QueueRecordsResult) =>
  result.outcomes.map((outcome) => [outcome.message.payload, outcome.kind]);

describe('the subscription runner', () => {
  it.each([
    ['Shared', 'concurrent'],
    ['Key_Shared', 'byKey'],
    ['Exclusive', 'sequential'],
    ['Failover', 'sequential'],
  ] as const)('hands a %s batch over as %s, acknowledges what succeeded and nacks what threw', async (type, order) => {
    const { ports, consumerId, cursorId, clock } = await setUp(type);
    await publish(ports, ['a', 'b', 'c']);
    const fn = userFunction((message) => message.payload === 'b' && message.redeliveryCount === 0);

    const first = await step(ports, consumerId, cursorId, fn.target);

    expect(first.failedRecords).toEqual([]);
    expect(kinds(first)).toEqual([
      ['a', 'acknowledged'],
      ['b', 'negativelyAcknowledged'],
      ['c', 'acknowledged'],
    ]);
    expect(fn.invocations).toEqual([
      {
        order,
        messages: [
          ['a', 0],
          ['b', 0],
          ['c', 0],
        ],
      },
    ]);
    // Nothing is due before the nack backoff (1 s); then only b, once more.
    expect(kinds(await step(ports, consumerId, cursorId, fn.target))).toEqual([]);
    clock.advance(1_000);
    expect(kinds(await step(ports, consumerId, cursorId, fn.target))).toEqual([['b', 'acknowledged']]);
    expect(fn.invocations.at(-1)).toEqual({ order, messages: [['b', 1]] });
    clock.advance(HELD_MS);
    expect(kinds(await step(ports, consumerId, cursorId, fn.target))).toEqual([]);
  });

  it('counts an invocation that times out or crashes as a delivery: held until the ack timeout, then back with the count + 1', async () => {
    const { ports, consumerId, cursorId, clock } = await setUp('Shared');
    await publish(ports, ['a', 'b']);
    const crashing = crashingFunction();

    const first = await step(ports, consumerId, cursorId, crashing.target);

    expect(first.failedRecords).toEqual([]); // not an SQS retry: the engine redelivers
    expect(kinds(first)).toEqual([
      ['a', 'unfinished'],
      ['b', 'unfinished'],
    ]);
    const fn = userFunction();
    clock.advance(HELD_MS - 1);
    expect(kinds(await step(ports, consumerId, cursorId, fn.target))).toEqual([]);
    clock.advance(1);
    expect(kinds(await step(ports, consumerId, cursorId, fn.target))).toEqual([
      ['a', 'acknowledged'],
      ['b', 'acknowledged'],
    ]);
    expect(fn.invocations).toEqual([
      {
        order: 'concurrent',
        messages: [
          ['a', 1],
          ['b', 1],
        ],
      },
    ]);
  });

  it('dead-letters a message whose invocations keep failing, past maxRedeliverCount, never only to an SQS DLQ', async () => {
    const { ports, consumerId, cursorId, clock } = await setUp('Shared', {
      policy: { deadLetterPolicy: { maxRedeliverCount: 2, initialSubscriptionName: 'dead' } },
    });
    await publish(ports, ['poison']);
    const crashing = crashingFunction();

    for (let delivery = 0; delivery <= 2; delivery++) {
      const result = await step(ports, consumerId, cursorId, crashing.target);
      expect(result.failedRecords).toEqual([]);
      expect(kinds(result)).toEqual([['poison', 'unfinished']]);
      clock.advance(HELD_MS);
    }
    // Delivered 3 times (counts 0, 1, 2): the next redelivery goes to the dead-letter topic instead.
    expect(kinds(await step(ports, consumerId, cursorId, crashing.target))).toEqual([]);
    expect(crashing.invocations.map((invocation) => invocation.messages)).toEqual([
      [['poison', 0]],
      [['poison', 1]],
      [['poison', 2]],
    ]);
    const deadLetters = TopicName.parse(`${topic.toString()}-fn-DLQ`);
    const { consumerId: reader } = await subscribeConsumer(ports, admin, {
      topic: deadLetters,
      subscription: 'dead',
      subscriptionType: 'Shared',
      initialPosition: 'Earliest',
      policy: {},
    });
    const dead = await receiveMessages(ports, admin, reader, { maxMessages: 10 });
    expect(dead.map((message) => [message.payload, message.properties.REAL_SUBSCRIPTION])).toEqual([
      ['poison', 'fn'],
    ]);
  });

  it('rings the doorbell again when an HTTP consumer of the subscription won its claim, so the rest still gets a runner', async () => {
    const { ports, consumerId, cursorId } = await setUp('Shared');
    const { consumerId: http } = await subscribeConsumer(ports, admin, {
      topic,
      subscription: 'fn',
      subscriptionType: 'Shared',
      initialPosition: 'Earliest',
      policy: {},
    });
    await publish(
      ports,
      Array.from({ length: 20 }, (_, i) => `m${i}`),
    );
    const doorbell = { cursorId, ordered: false };
    while (await ports.deliveryQueue.waitForRing(doorbell, 0)) {
      // the publish's rings are this step's record
    }
    // The HTTP consumer's receive lands between the runner's entries read and its claim.
    const overtaken = overtakingLedger(ports.ledger, async () => {
      expect(await receiveMessages(ports, admin, http, { maxMessages: 10 })).toHaveLength(10);
    });
    const fn = userFunction();

    const lost = await step({ ...ports, ledger: overtaken }, consumerId, cursorId, fn.target);

    expect(kinds(lost)).toEqual([]);
    expect(await ports.deliveryQueue.waitForRing(doorbell, 0)).toBe(true);
    // The next step (that ring's) takes the other ten.
    const next = await step(ports, consumerId, cursorId, fn.target);
    expect(kinds(next).map(([payload]) => payload)).toEqual(
      Array.from({ length: 10 }, (_, i) => `m${i + 10}`),
    );
  });

  it('refuses records of another subscription: a wiring error fails the batch', async () => {
    const { ports, consumerId } = await setUp('Shared');
    await expect(step(ports, consumerId, 'someone-elses-cursor', userFunction().target)).rejects.toThrow(
      /do not come from a queue of consumer/,
    );
  });
});

describe('batchHandlerOf', () => {
  const message = (id: string, payload: string): ConsumerMessage => ({
    messageId: id,
    payload,
    key: null,
    properties: {},
    redeliveryCount: 0,
    publishTime: 1,
    eventTime: null,
  });

  it("splits a batch under Lambda's 6 MB payload limit, in order, and stops at a failed invocation", async () => {
    const big = 'x'.repeat(2_000_000);
    const sizes: number[][] = [];
    let calls = 0;
    const target: FunctionInvoker = {
      invoke: async (payload) => {
        const { messages } = (payload as AcklineBatchEvent).acklineBatch;
        sizes.push(messages.map((m) => Number(m.messageId)));
        calls++;
        if (calls === 2) throw new FunctionInvocationError('crashed');
        return { acklineFailures: [{ messageId: messages[0]?.messageId, error: 'Error: no' }] };
      },
    };
    const messages = ['1', '2', '3', '4', '5'].map((id) => message(id, big));

    const handled = await batchHandlerOf(target)({ order: 'sequential', messages });

    expect(sizes).toEqual([
      [1, 2],
      [3, 4],
    ]);
    expect([...handled.failed.keys()]).toEqual(['1']);
    expect([...handled.unfinished.keys()]).toEqual(['3', '4', '5']);
  });

  it('treats an answer that is not an AcklineBatchResponse as a failed invocation: nothing acknowledged', async () => {
    const target: FunctionInvoker = { invoke: async () => ({ batchItemFailures: [] }) };
    const handled = await batchHandlerOf(target)({ order: 'concurrent', messages: [message('1', 'a')] });
    expect([...handled.unfinished.keys()]).toEqual(['1']);
    expect(String(handled.unfinished.get('1'))).toMatch(/acklineConsumer\(\)/);
  });
});

describe('consumerSelectorFromEnv', () => {
  it.each([
    [{ ACKLINE_CONSUMER_ID: 'c-1', ACKLINE_TOPIC: 't' }, { consumerId: 'c-1' }],
    [
      { ACKLINE_TOPIC: 'persistent://public/default/orders', ACKLINE_SUBSCRIPTION: 'billing' },
      { topic: 'persistent://public/default/orders', subscription: 'billing' },
    ],
    [
      { ACKLINE_TOPIC: 't', ACKLINE_SUBSCRIPTION: 's', ACKLINE_CONSUMER_NAME: 'billing-fn' },
      { topic: 't', subscription: 's', consumerName: 'billing-fn' },
    ],
  ])('finds the consumer the construct names in %o', (env, expected) => {
    expect(consumerSelectorFromEnv(env)).toEqual(expected);
  });

  it('names the missing variables', () => {
    expect(() => consumerSelectorFromEnv({ ACKLINE_TOPIC: 't' })).toThrow(
      /ACKLINE_TOPIC and ACKLINE_SUBSCRIPTION/,
    );
  });
});

describe('makeConsumerRunner', () => {
  /** The runner's dependencies over in-memory ports; the logger keeps what was logged. */
  function dependencies(ports: UseCasePorts) {
    const logged: { level: string; message: string; fields: Record<string, unknown> }[] = [];
    const log = (level: string) => (message: string, fields: Record<string, unknown>) =>
      logged.push({ level, message, fields });
    const deps = {
      config: { queuePrefix: 'ackline-test-' },
      logger: { warn: log('warn'), error: log('error') },
      ports,
    } as unknown as Dependencies;
    return { deps, logged };
  }
  const sqsEvent = (cursorId: string) => ({
    Records: [
      {
        messageId: 'r1',
        eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:ackline-test-s-${cursorId}`,
        body: '',
      },
    ],
  });

  it('finds its consumer by name, takes the SQS event of its queue and answers no batch item failure', async () => {
    const { ports, cursorId } = await setUp('Shared');
    await publish(ports, ['a', 'b']);
    const fn = userFunction((message) => message.payload === 'b');
    const { deps, logged } = dependencies(ports);
    const runner = makeConsumerRunner(deps, {
      consumer: { topic: topic.toString(), subscription: 'fn' },
      target: fn.target,
      targetTimeoutMs: FUNCTION_TIMEOUT_MS,
    });

    expect(await runner(sqsEvent(cursorId), { getRemainingTimeInMillis: () => 29_000 })).toEqual({
      batchItemFailures: [],
    });
    expect(fn.invocations).toEqual([
      {
        order: 'concurrent',
        messages: [
          ['a', 0],
          ['b', 0],
        ],
      },
    ]);
    expect(logged.map((entry) => [entry.level, entry.message, entry.fields.messageId])).toEqual([
      ['warn', 'process threw: message negatively acknowledged', '1:1:-1'],
    ]);
  });

  it('hands nothing over when the function could not finish before the runner ends; rings the doorbell for the next one', async () => {
    const { ports, consumerId, cursorId } = await setUp('Shared');
    await publish(ports, ['a']);
    const fn = userFunction();
    const runner = makeConsumerRunner(dependencies(ports).deps, {
      consumer: { consumerId },
      target: fn.target,
      targetTimeoutMs: FUNCTION_TIMEOUT_MS,
    });
    // 2 s of function timeout, 1 s margin, 3 s to acknowledge: 5.9 s left is not enough.
    await runner(sqsEvent(cursorId), { getRemainingTimeInMillis: () => 5_900 });
    expect(fn.invocations).toEqual([]);
    await runner(sqsEvent(cursorId), { getRemainingTimeInMillis: () => 6_100 });
    expect(fn.invocations).toHaveLength(1);
  });

  it('warns when the consumer was subscribed with a functionTimeoutMs shorter than the deployed function timeout', async () => {
    const { ports, consumerId, cursorId } = await setUp('Shared');
    const { deps, logged } = dependencies(ports);
    const runner = makeConsumerRunner(deps, {
      consumer: { consumerId },
      target: userFunction().target,
      targetTimeoutMs: FUNCTION_TIMEOUT_MS + 1_000,
    });
    await runner(sqsEvent(cursorId));
    expect(logged.map((entry) => [entry.level, entry.fields])).toEqual([
      ['warn', { consumerId, functionTimeoutMs: FUNCTION_TIMEOUT_MS, functionTimeoutMsDeployed: 3_000 }],
    ]);
  });
});
