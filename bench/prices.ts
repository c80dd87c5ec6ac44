import { readFileSync } from 'node:fs';
import { functionSettings } from '../infra/stateless-stack.ts';
import type { UsageSnapshot } from '../shared/adapters/usage-meter.ts';
import { sumWhere } from './harness.ts';

/** bench/prices.json: list prices with their date and source, in one place. */
export interface Prices {
  readonly region: string;
  readonly date: string;
  readonly note: string;
  readonly sources: Record<string, string>;
  readonly usdPerMillion: {
    readonly sqsRequests: number;
    readonly dynamodbWriteRequestUnits: number;
    readonly dynamodbReadRequestUnits: number;
    readonly apiGatewayRestRequests: number;
    readonly lambdaRequests: number;
  };
  readonly lambdaUsdPerGbSecondArm: number;
  /** What a deployment pays by the month whatever its traffic. */
  readonly usdPerMonth: {
    readonly cloudwatchAlarm: number;
    readonly cloudwatchDashboard: number;
    readonly cloudwatchCustomMetric: number;
    readonly secretsManagerSecret: number;
  };
}

export const prices: Prices = JSON.parse(
  readFileSync(new URL('./prices.json', import.meta.url), 'utf8'),
) as Prices;

/** Dollars per million units (messages, calls) by service, at `prices`. */
export interface CostPerMillion {
  readonly sqs: number;
  readonly dynamodb: number;
  readonly apiGateway: number;
  readonly lambda: number;
  readonly total: number;
}

const functionNames = Object.keys(functionSettings) as (keyof typeof functionSettings)[];

export function costPerMillion(usage: UsageSnapshot, units: number): CostPerMillion {
  const perMillion = 1_000_000 / units;
  const price = prices.usdPerMillion;
  const sqs = (sumWhere(usage.requests, 'SQS.', 'requests') * perMillion * price.sqsRequests) / 1e6;
  const dynamodb =
    ((sumWhere(usage.requests, 'DynamoDB.', 'writeCapacityUnits') * price.dynamodbWriteRequestUnits +
      sumWhere(usage.requests, 'DynamoDB.', 'readCapacityUnits') * price.dynamodbReadRequestUnits) *
      perMillion) /
    1e6;
  const apiGateway =
    ((usage.invocations.apiGateway?.count ?? 0) * perMillion * price.apiGatewayRestRequests) / 1e6;
  let lambda = 0;
  for (const name of functionNames) {
    const invocations = usage.invocations[name];
    if (!invocations) continue;
    const gbSeconds = (invocations.totalMs / 1000) * (functionSettings[name].memorySizeMb / 1024);
    lambda +=
      ((invocations.count * price.lambdaRequests) / 1e6 + gbSeconds * prices.lambdaUsdPerGbSecondArm) *
      perMillion;
  }
  return { sqs, dynamodb, apiGateway, lambda, total: sqs + dynamodb + apiGateway + lambda };
}
