import { InvokeCommand, type InvokeCommandOutput, LambdaClient } from '@aws-sdk/client-lambda';
import type { FunctionInvoker } from '../../ports/function-invoker.ts';
import { FunctionInvocationError } from '../../ports/function-invoker.ts';

/** What {@link LambdaFunctionInvoker} needs. */
export interface LambdaFunctionInvokerOptions {
  /** The function to invoke: its name or ARN. */
  readonly functionName: string;
  /** The client (region, credentials, endpoint, retries); default: the SDK's from the environment. */
  readonly client?: LambdaClient;
}

/**
 * Lambda's Invoke API (`RequestResponse`) through the AWS SDK's Lambda client: the one call the
 * consumer runner makes to the user's function. The SDK signs it, takes the credentials Lambda
 * hands the runner, and retries what Lambda throttles (429: the function did not run) with its
 * standard retry strategy (3 attempts, jittered backoff).
 *
 * Answers: no `FunctionError` is the function's answer; a `FunctionError` is an invocation that
 * failed (the handler threw, timed out or crashed: the payload says which); an error the client
 * throws is a refused invocation (the function did not run, or its answer was lost).
 * Cost: one Lambda request per attempt; the invocation lasts as long as the function runs.
 */
export class LambdaFunctionInvoker implements FunctionInvoker {
  readonly #functionName: string;
  readonly #client: LambdaClient;

  constructor(options: LambdaFunctionInvokerOptions) {
    this.#functionName = options.functionName;
    this.#client = options.client ?? new LambdaClient({});
  }

  async invoke(payload: unknown): Promise<unknown> {
    let answer: InvokeCommandOutput;
    try {
      answer = await this.#client.send(
        new InvokeCommand({
          FunctionName: this.#functionName,
          InvocationType: 'RequestResponse',
          Payload: new TextEncoder().encode(JSON.stringify(payload)),
        }),
      );
    } catch (error) {
      const { name, message } = error as Error;
      throw new FunctionInvocationError(
        `invoking ${this.#functionName} was refused (${name}): ${String(message).slice(0, 500)}`,
        { cause: error },
      );
    }
    const text = answer.Payload ? new TextDecoder().decode(answer.Payload) : '';
    if (answer.FunctionError !== undefined) {
      throw new FunctionInvocationError(
        `${this.#functionName} failed (${answer.FunctionError}): ${describeFailure(text)}`,
      );
    }
    return parse(text, this.#functionName);
  }
}

/** Lambda's error document (`{ errorType, errorMessage }`), shortly. */
function describeFailure(text: string): string {
  try {
    const error = JSON.parse(text) as { errorType?: unknown; errorMessage?: unknown };
    return `${String(error.errorType ?? 'Error')}: ${String(error.errorMessage ?? '')}`.slice(0, 500);
  } catch {
    return text.slice(0, 500);
  }
}

function parse(text: string, functionName: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new FunctionInvocationError(`${functionName} answered something that is not JSON`, {
      cause: error,
    });
  }
}
