import { describe, expect, it } from 'vitest';
import { median, sumUsage } from '../../../bench/harness.ts';
import { type CallCost, idleMonth } from '../../../bench/idle-consumer.ts';
import { prices } from '../../../bench/prices.ts';
import { functionSettings } from '../../../infra/stateless-stack.ts';
import { MAX_RECEIVE_WAIT_MS } from '../../../shared/client/consumer.ts';

const cost = (overrides: Partial<CallCost>): CallCost => ({
  calls: 10,
  apiGatewayRequests: 1,
  lambdaInvocations: { 'data-api': 1 },
  handlerMs: { 'data-api': 10 },
  gatewayMs: 12,
  sqsRequests: 0,
  dynamodbWriteUnits: 0,
  dynamodbReadUnits: 0,
  perOperation: {},
  ...overrides,
});

describe('the idle consumer month', () => {
  // Measured at a 2 s wait: 100 ms of handler and 150 ms of round trip beyond it.
  const poll = cost({
    handlerMs: { 'data-api': 2_100 },
    gatewayMs: 2_150,
    sqsRequests: 4,
    dynamodbWriteUnits: 2,
    dynamodbReadUnits: 8,
  });
  const heartbeat = cost({ handlerMs: { 'data-api': 10 }, dynamodbWriteUnits: 1, dynamodbReadUnits: 2 });
  const month = idleMonth({ poll, heartbeat, measuredWaitMs: 2_000 });
  const pollSeconds = (MAX_RECEIVE_WAIT_MS + 150) / 1000;
  const polls = (30 * 86_400) / pollSeconds;

  it('polls back to back at the SDK wait, each lasting the wait plus the measured overhead', () => {
    expect(month.pollSeconds).toBeCloseTo(pollSeconds, 9);
    expect(month.polls).toBeCloseTo(polls, 6);
  });

  it('bills each poll its wait at the data-api memory, and each heartbeat its handler time', () => {
    const gb = functionSettings['data-api'].memorySizeMb / 1024;
    const heartbeats = polls * month.heartbeatsPerPoll;
    const gbSeconds = polls * ((MAX_RECEIVE_WAIT_MS + 100) / 1000) * gb + heartbeats * 0.01 * gb;
    expect(month.lambdaGbSeconds).toBeCloseTo(gbSeconds, 3);
    expect(month.usd.lambdaDuration).toBeCloseTo(gbSeconds * prices.lambdaUsdPerGbSecondArm, 6);
  });

  it('counts requests and units of polls and heartbeats, and adds up the dollars', () => {
    // A third of the 60 s lease is 20 s, which a 20.15 s poll passes once.
    expect(month.heartbeatsPerPoll).toBe(1);
    expect(month.apiGatewayRequests).toBeCloseTo(2 * polls, 6);
    expect(month.sqsRequests).toBeCloseTo(4 * polls, 6);
    expect(month.dynamodbWriteUnits).toBeCloseTo(3 * polls, 6);
    expect(month.dynamodbReadUnits).toBeCloseTo(10 * polls, 6);
    const { apiGateway, lambdaRequests, lambdaDuration, sqs, dynamodb, total } = month.usd;
    expect(apiGateway).toBeCloseTo((2 * polls * prices.usdPerMillion.apiGatewayRestRequests) / 1e6, 9);
    expect(total).toBeCloseTo(apiGateway + lambdaRequests + lambdaDuration + sqs + dynamodb, 9);
    expect(month.formula.at(-1)).toBe(`total = $${total.toFixed(2)} a month`);
  });
});

describe('bench arithmetic', () => {
  it('takes the median of odd and even counts', () => {
    expect(median([0.45, 0.39, 0.52])).toBe(0.45);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBe(0);
  });

  it('adds usage snapshots operation by operation', () => {
    const one = { requests: 1, readCapacityUnits: 0.5, writeCapacityUnits: 1 };
    const sum = sumUsage([
      { requests: { 'DynamoDB.PutItem': one }, invocations: { 'data-api': { count: 1, totalMs: 5 } } },
      {
        requests: { 'DynamoDB.PutItem': one, 'SQS.SendMessage': { ...one, readCapacityUnits: 0 } },
        invocations: { 'data-api': { count: 2, totalMs: 7 } },
      },
    ]);
    expect(sum.requests['DynamoDB.PutItem']).toEqual({
      requests: 2,
      readCapacityUnits: 1,
      writeCapacityUnits: 2,
    });
    expect(sum.requests['SQS.SendMessage']?.requests).toBe(1);
    expect(sum.invocations['data-api']).toEqual({ count: 3, totalMs: 12 });
    expect(one).toEqual({ requests: 1, readCapacityUnits: 0.5, writeCapacityUnits: 1 });
  });
});
