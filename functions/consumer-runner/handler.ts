import { LambdaClient } from '@aws-sdk/client-lambda';
import { createDependencies } from '../../shared/adapters/create-dependencies.ts';
import { LambdaFunctionInvoker } from '../../shared/adapters/lambda/lambda-function-invoker.ts';
import { ConfigurationError, loadConfig } from '../../shared/config/load-config.ts';
import { TARGET_FUNCTION_ENV, TARGET_TIMEOUT_MS_ENV } from '../../shared/lambda/consumer-env.ts';
import {
  type ConsumerRunnerHandler,
  consumerSelectorFromEnv,
  makeConsumerRunner,
} from '../../shared/lambda/consumer-runner.ts';

/**
 * The subscription runner's entry point (deployed by the AcklineSubscriptionConsumer construct,
 * shipped prebuilt in @ackline/cdk): its configuration from the environment the construct sets,
 * the user's function invoked through Lambda's Invoke API with the runner's own credentials.
 */
function fromEnvironment(env: NodeJS.ProcessEnv): ConsumerRunnerHandler {
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
  return makeConsumerRunner(deps, { consumer: consumerSelectorFromEnv(env), target, targetTimeoutMs });
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (!value) throw new ConfigurationError(`missing environment variable ${name}`);
  return value;
}

let cached: ConsumerRunnerHandler | undefined;

export const handler: ConsumerRunnerHandler = (event, context) => {
  cached ??= fromEnvironment(process.env);
  return cached(event, context);
};
