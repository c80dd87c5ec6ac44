import { functionSettings } from '../infra/stateless-stack.ts';
import type { OperationUsage } from '../shared/adapters/dynamodb/capacity-meter.ts';
import type { UsageSnapshot } from '../shared/adapters/usage-meter.ts';
import { MAX_RECEIVE_WAIT_MS } from '../shared/client/consumer.ts';
import { DEFAULT_CONSUMER_LEASE_MS } from '../shared/domain/consumer-lease.ts';
import { type BenchStack, perUnit, sumWhere } from './harness.ts';
import { prices } from './prices.ts';

/** The idle-consumer measurement: `consumers` consumers, each alone on an idle topic. */
export interface IdleConsumerOptions {
  readonly consumers: number;
  /** Receive polls measured per consumer (after one unmeasured poll). */
  readonly polls: number;
  /** The wait each measured poll asks for: short, to keep the bench short. */
  readonly waitMs: number;
  /** Heartbeats measured per consumer. */
  readonly heartbeats: number;
}

/** What one call (a receive poll, a heartbeat) cost on average, as measured. */
export interface CallCost {
  /** Calls measured. */
  readonly calls: number;
  readonly apiGatewayRequests: number;
  /** Lambda invocations per call, by function (the authorizer's answer is cached by the gateway). */
  readonly lambdaInvocations: Record<string, number>;
  /** Handler milliseconds per call, by function (what Lambda bills as duration). */
  readonly handlerMs: Record<string, number>;
  /** The gateway's milliseconds per call: the client's round trip. */
  readonly gatewayMs: number;
  readonly sqsRequests: number;
  readonly dynamodbWriteUnits: number;
  readonly dynamodbReadUnits: number;
  /** AWS requests and capacity per call, by `Service.Operation`. */
  readonly perOperation: Record<string, OperationUsage>;
}

/** Dollars a month, by what AWS bills. */
export interface IdleUsd {
  readonly apiGateway: number;
  readonly lambdaRequests: number;
  readonly lambdaDuration: number;
  readonly sqs: number;
  readonly dynamodb: number;
  readonly total: number;
}

/** One idle consumer for 30 days, extrapolated from the measured calls. */
export interface IdleMonth {
  readonly days: number;
  /** The wait of the SDK's receive polls (MAX_RECEIVE_WAIT_MS). */
  readonly pollWaitMs: number;
  /** One poll's round trip at that wait: the wait plus the measured overhead. */
  readonly pollSeconds: number;
  readonly polls: number;
  /** The SDK heartbeat's interval: a third of the default lease. */
  readonly heartbeatIntervalMs: number;
  readonly heartbeatsPerPoll: number;
  readonly heartbeats: number;
  readonly apiGatewayRequests: number;
  readonly lambdaInvocations: number;
  /** Every invocation's billed duration times its function's memory (infra/stateless-stack.ts). */
  readonly lambdaGbSeconds: number;
  readonly sqsRequests: number;
  readonly dynamodbWriteUnits: number;
  readonly dynamodbReadUnits: number;
  readonly usd: IdleUsd;
  /** How the figures above follow from the measured ones, with the numbers put in. */
  readonly formula: string[];
}

export interface IdleConsumerResult {
  /** The SDK's default subscription type. */
  readonly subscriptionType: 'Exclusive';
  readonly consumers: number;
  /** The wait the measured polls asked for. */
  readonly measuredWaitMs: number;
  readonly poll: CallCost;
  readonly heartbeat: CallCost;
  readonly month: IdleMonth;
}

const SECONDS_PER_DAY = 86_400;
const DAYS = 30;
/** The SDK's default receiverQueueSize: how many messages its polls ask for. */
const SDK_MAX_MESSAGES = 10;
/**
 * The SDK's heartbeat beats when the consumer made no call for a third of its lease
 * (shared/client/consumer-heartbeat.ts), counted from the moment a call starts.
 */
const HEARTBEAT_INTERVAL_MS = Math.floor(DEFAULT_CONSUMER_LEASE_MS / 3);

/**
 * What an HTTP consumer that waits on an idle topic costs. Each consumer subscribes as the SDK
 * does by default (Exclusive) on its own topic nobody publishes to and polls
 * `POST /consumers/{id}/receive` back to back as the SDK's receive does; then it sends heartbeats.
 * Polls are measured at a short wait and extrapolated to a month at the SDK's own wait (20 s): a
 * waiting Lambda is billed for its wait, so the measured handler time less the measured wait is the
 * overhead a poll adds to it. The SDK also beats its heartbeat when its last call started a third
 * of the lease ago (20 s), which a 20 s poll reaches before it answers: one heartbeat per poll.
 */
export async function runIdleConsumer(
  stack: BenchStack,
  options: IdleConsumerOptions,
): Promise<IdleConsumerResult> {
  const consumers: { consumerId: string; topicPath: string }[] = [];
  for (let i = 0; i < options.consumers; i++) {
    const topicPath = `/persistent/public/default/bench-idle-${i}`;
    const { consumerId } = await stack.call<{ consumerId: string }>(
      'POST',
      `/consumers${topicPath}/subscription/idle`,
      { subscriptionType: 'Exclusive', subscriptionInitialPosition: 'Latest' },
    );
    consumers.push({ consumerId, topicPath });
  }
  const poll = (consumerId: string) =>
    stack.call<{ messages: unknown[] }>(
      'POST',
      `/consumers/${consumerId}/receive?maxMessages=${SDK_MAX_MESSAGES}&waitMs=${options.waitMs}`,
    );
  // One poll first: what a consumer's first poll alone does (no caught-up mark yet) is not measured.
  await Promise.all(consumers.map(({ consumerId }) => poll(consumerId)));
  await stack.usage(true);
  await Promise.all(
    consumers.map(async ({ consumerId }) => {
      for (let i = 0; i < options.polls; i++) {
        const { messages } = await poll(consumerId);
        if (messages.length > 0) throw new Error(`idle consumer ${consumerId} received a message`);
      }
    }),
  );
  const polled = callCost(await stack.usage(true), options.consumers * options.polls);
  await Promise.all(
    consumers.map(async ({ consumerId }) => {
      for (let i = 0; i < options.heartbeats; i++)
        await stack.call('POST', `/consumers/${consumerId}/heartbeat`);
    }),
  );
  const heartbeat = callCost(await stack.usage(), options.consumers * options.heartbeats);
  for (const { consumerId, topicPath } of consumers) {
    await stack.call('DELETE', `/consumers/${consumerId}`);
    await stack
      .call('DELETE', `/admin/v2${topicPath}?force=true`, undefined, [204, 200, 404, 409])
      .catch(() => {});
  }
  return {
    subscriptionType: 'Exclusive',
    consumers: options.consumers,
    measuredWaitMs: options.waitMs,
    poll: polled,
    heartbeat,
    month: idleMonth({ poll: polled, heartbeat, measuredWaitMs: options.waitMs }),
  };
}

function callCost(usage: UsageSnapshot, calls: number): CallCost {
  const perOperation = perUnit(usage.requests, calls);
  const lambdaInvocations: Record<string, number> = {};
  const handlerMs: Record<string, number> = {};
  for (const [name, { count, totalMs }] of Object.entries(usage.invocations).sort()) {
    if (name === 'apiGateway') continue;
    lambdaInvocations[name] = count / calls;
    handlerMs[name] = totalMs / calls;
  }
  return {
    calls,
    apiGatewayRequests: (usage.invocations.apiGateway?.count ?? 0) / calls,
    lambdaInvocations,
    handlerMs,
    gatewayMs: (usage.invocations.apiGateway?.totalMs ?? 0) / calls,
    sqsRequests: sumWhere(perOperation, 'SQS.', 'requests'),
    dynamodbWriteUnits: sumWhere(perOperation, 'DynamoDB.', 'writeCapacityUnits'),
    dynamodbReadUnits: sumWhere(perOperation, 'DynamoDB.', 'readCapacityUnits'),
    perOperation,
  };
}

const memoryGbOf = (name: string) =>
  (functionSettings[name as keyof typeof functionSettings]?.memorySizeMb ?? 0) / 1024;

/** GB-seconds of one call: each function's handler time times its memory. */
function gbSecondsOf(handlerMs: Record<string, number>): number {
  return Object.entries(handlerMs).reduce((sum, [name, ms]) => sum + (ms / 1000) * memoryGbOf(name), 0);
}

const sumOf = (values: Record<string, number>) => Object.values(values).reduce((sum, n) => sum + n, 0);

/**
 * A month of back-to-back polls at the SDK's wait, priced at bench/prices.json. A poll measured at
 * `measuredWaitMs` is billed `MAX_RECEIVE_WAIT_MS - measuredWaitMs` longer at the SDK's wait (its
 * data-api invocation waits that much longer); its requests and units are taken as measured.
 */
export function idleMonth(options: {
  readonly poll: CallCost;
  readonly heartbeat: CallCost;
  readonly measuredWaitMs: number;
}): IdleMonth {
  const { poll, heartbeat, measuredWaitMs } = options;
  const longerMs = MAX_RECEIVE_WAIT_MS - measuredWaitMs;
  const pollHandlerMs = { ...poll.handlerMs, 'data-api': (poll.handlerMs['data-api'] ?? 0) + longerMs };
  const pollMs = poll.gatewayMs + longerMs;
  const seconds = DAYS * SECONDS_PER_DAY;
  const polls = seconds / (pollMs / 1000);
  const heartbeatsPerPoll = Math.floor(pollMs / HEARTBEAT_INTERVAL_MS);
  const heartbeats = polls * heartbeatsPerPoll;
  const both = (perPoll: number, perHeartbeat: number) => polls * perPoll + heartbeats * perHeartbeat;
  const apiGatewayRequests = both(poll.apiGatewayRequests, heartbeat.apiGatewayRequests);
  const lambdaInvocations = both(sumOf(poll.lambdaInvocations), sumOf(heartbeat.lambdaInvocations));
  const pollGbSeconds = gbSecondsOf(pollHandlerMs);
  const heartbeatGbSeconds = gbSecondsOf(heartbeat.handlerMs);
  const lambdaGbSeconds = both(pollGbSeconds, heartbeatGbSeconds);
  const sqsRequests = both(poll.sqsRequests, heartbeat.sqsRequests);
  const dynamodbWriteUnits = both(poll.dynamodbWriteUnits, heartbeat.dynamodbWriteUnits);
  const dynamodbReadUnits = both(poll.dynamodbReadUnits, heartbeat.dynamodbReadUnits);
  const price = prices.usdPerMillion;
  const usd = {
    apiGateway: (apiGatewayRequests * price.apiGatewayRestRequests) / 1e6,
    lambdaRequests: (lambdaInvocations * price.lambdaRequests) / 1e6,
    lambdaDuration: lambdaGbSeconds * prices.lambdaUsdPerGbSecondArm,
    sqs: (sqsRequests * price.sqsRequests) / 1e6,
    dynamodb:
      (dynamodbWriteUnits * price.dynamodbWriteRequestUnits +
        dynamodbReadUnits * price.dynamodbReadRequestUnits) /
      1e6,
  };
  const total = usd.apiGateway + usd.lambdaRequests + usd.lambdaDuration + usd.sqs + usd.dynamodb;
  const n = (value: number, digits = 0) =>
    value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  const gbs = (handlerMs: Record<string, number>) =>
    Object.entries(handlerMs)
      .filter(([, ms]) => ms > 0)
      .map(([name, ms]) => `${n(ms / 1000, 3)} s × ${n(memoryGbOf(name), 2)} GB (${name})`)
      .join(' + ') || '0';
  const formula = [
    `polls = ${DAYS} d × ${n(SECONDS_PER_DAY)} s / (${n(MAX_RECEIVE_WAIT_MS / 1000)} s wait + ${n((poll.gatewayMs - measuredWaitMs) / 1000, 3)} s overhead) = ${n(polls)}`,
    `heartbeats = polls × ${heartbeatsPerPoll} (the SDK beats when its last call started ${n(HEARTBEAT_INTERVAL_MS / 1000)} s ago, a third of the ${n(DEFAULT_CONSUMER_LEASE_MS / 1000)} s lease; a poll lasts ${n(pollMs / 1000, 3)} s) = ${n(heartbeats)}`,
    `API Gateway requests = polls × ${n(poll.apiGatewayRequests, 3)} + heartbeats × ${n(heartbeat.apiGatewayRequests, 3)} = ${n(apiGatewayRequests)}: $${n(usd.apiGateway, 2)} at $${price.apiGatewayRestRequests}/M`,
    `Lambda requests = polls × ${n(sumOf(poll.lambdaInvocations), 3)} + heartbeats × ${n(sumOf(heartbeat.lambdaInvocations), 3)} = ${n(lambdaInvocations)}: $${n(usd.lambdaRequests, 2)} at $${price.lambdaRequests}/M`,
    `Lambda GB-s = polls × [${gbs(pollHandlerMs)}] + heartbeats × [${gbs(heartbeat.handlerMs)}] = ${n(lambdaGbSeconds)}: $${n(usd.lambdaDuration, 2)} at $${prices.lambdaUsdPerGbSecondArm}/GB-s`,
    `SQS requests = polls × ${n(poll.sqsRequests, 3)} + heartbeats × ${n(heartbeat.sqsRequests, 3)} = ${n(sqsRequests)}: $${n(usd.sqs, 2)} at $${price.sqsRequests}/M`,
    `DynamoDB = polls × (${n(poll.dynamodbWriteUnits, 3)} WU, ${n(poll.dynamodbReadUnits, 3)} RU) + heartbeats × (${n(heartbeat.dynamodbWriteUnits, 3)} WU, ${n(heartbeat.dynamodbReadUnits, 3)} RU) = ${n(dynamodbWriteUnits)} WU, ${n(dynamodbReadUnits)} RU: $${n(usd.dynamodb, 2)} at $${price.dynamodbWriteRequestUnits}/M WU, $${price.dynamodbReadRequestUnits}/M RU`,
    `total = $${n(total, 2)} a month`,
  ];
  return {
    days: DAYS,
    pollWaitMs: MAX_RECEIVE_WAIT_MS,
    pollSeconds: pollMs / 1000,
    polls,
    heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
    heartbeatsPerPoll,
    heartbeats,
    apiGatewayRequests,
    lambdaInvocations,
    lambdaGbSeconds,
    sqsRequests,
    dynamodbWriteUnits,
    dynamodbReadUnits,
    usd: { ...usd, total },
    formula,
  };
}
