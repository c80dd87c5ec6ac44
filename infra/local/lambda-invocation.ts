import { randomUUID } from 'node:crypto';
import type { Context, ScheduledEvent } from 'aws-lambda';

/** The account the embedded stack's ARNs name (API Gateway's, Lambda's, EventBridge's). */
export const LOCAL_ACCOUNT = '123456789012';
/** LOCAL_REGION of embedded-stack.ts, not imported: the gateway needs no emulator client. */
const REGION = 'us-east-1';

/**
 * The context Lambda hands one invocation of the embedded stack's `functionName`: its remaining
 * time counts down from `timeoutMs` (the function's deployed timeout), which the handlers read
 * (middy answers a TimeoutError just before it runs out; maintenance stops starting work).
 */
export function localLambdaContext(options: {
  readonly functionName: string;
  readonly timeoutMs: number;
  readonly requestId?: string;
}): Context {
  const deadline = Date.now() + options.timeoutMs;
  const name = `ackline-local-${options.functionName}`;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${REGION}:${LOCAL_ACCOUNT}:function:${name}`,
    memoryLimitInMB: '1024',
    awsRequestId: options.requestId ?? randomUUID(),
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** The event an EventBridge schedule rule named `ruleName` delivers at `timeMs`. */
export function localScheduledEvent(ruleName: string, timeMs: number = Date.now()): ScheduledEvent {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: LOCAL_ACCOUNT,
    time: new Date(timeMs).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region: REGION,
    resources: [`arn:aws:events:${REGION}:${LOCAL_ACCOUNT}:rule/${ruleName}`],
    detail: {},
  };
}
