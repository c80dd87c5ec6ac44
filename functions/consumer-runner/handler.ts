import { LambdaClient } from '@aws-sdk/client-lambda';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createDependencies, type Dependencies } from '../../shared/adapters/create-dependencies.ts';
import { LambdaFunctionInvoker } from '../../shared/adapters/lambda/lambda-function-invoker.ts';
import { ConfigurationError, loadConfig } from '../../shared/config/load-config.ts';
import { TARGET_FUNCTION_ENV, TARGET_TIMEOUT_MS_ENV } from '../../shared/lambda/consumer-env.ts';
import {
  type ConsumerRunnerOptions,
  consumerSelectorFromEnv,
  makeConsumerRunner,
} from '../../shared/lambda/consumer-runner.ts';
import { observedHandler } from '../../shared/lambda/observed-handler.ts';

export type RunnerHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/**
 * The subscription runner (makeConsumerRunner) under the handler shape of every ackline function:
 * middy, with Powertools' logger context and the metrics flushed after each invocation.
 *
 * Not through Powertools' batch processor: its contract is a handler per record whose failure is
 * that record's own. The runner's records are doorbell rings, not the work: it dispatches the
 * subscription's messages from the cursor and hands them to the user's function in batches (in
 * order on Exclusive and Failover, per key on Key_Shared), and a storage or queue failure leaves
 * every record of the event to SQS (processQueueRecords decides which records fail, not a record
 * handler). The partial batch response it returns is the one it has always returned.
 */
export function makeHandler(deps: Dependencies, options: ConsumerRunnerOptions): RunnerHandler {
  return observedHandler<SQSEvent, SQSBatchResponse>(deps.logger, deps.metrics).handler(
    makeConsumerRunner(deps, options),
  );
}

/**
 * The subscription runner's entry point (deployed by the AcklineSubscriptionConsumer construct,
 * shipped prebuilt in @ackline/cdk): its configuration from the environment the construct sets,
 * the user's function invoked through Lambda's Invoke API with the runner's own credentials.
 */
function fromEnvironment(env: NodeJS.ProcessEnv): RunnerHandler {
  const deps = createDependencies(loadConfig(env), 'consumer-runner');
  const functionName = required(env, TARGET_FUNCTION_ENV);
  const targetTimeoutMs = Number(required(env, TARGET_TIMEOUT_MS_ENV));
  if (!Number.isInteger(targetTimeoutMs) || targetTimeoutMs <= 0) {
    throw new ConfigurationError(`${TARGET_TIMEOUT_MS_ENV} must be a positive whole number of milliseconds`);
  }
  const target = new LambdaFunctionInvoker({
    functionName,
    // Region and credentials as Lambda hands them to the runner (AWS_REGION, its role's keys);
    // AWS_ENDPOINT_URL_LAMBDA, the SDKs' service-specific endpoint variable, points it elsewhere.
    client: new LambdaClient({}),
  });
  return makeHandler(deps, { consumer: consumerSelectorFromEnv(env), target, targetTimeoutMs });
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (!value) throw new ConfigurationError(`missing environment variable ${name}`);
  return value;
}

let cached: RunnerHandler | undefined;

/** Lambda entry point: dependencies are built once per cold start. */
export const handler: RunnerHandler = (event, context) => {
  cached ??= fromEnvironment(process.env);
  return cached(event, context);
};
