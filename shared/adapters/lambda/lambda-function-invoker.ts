import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import { FunctionInvocationError } from '../../domain/errors.ts';
import type { FunctionInvoker } from '../../ports/function-invoker.ts';

/** AWS credentials, as Lambda hands them to a function (AWS_ACCESS_KEY_ID, ...). */
export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

/** What {@link LambdaFunctionInvoker} needs. */
export interface LambdaFunctionInvokerOptions {
  /** The function to invoke: its name or ARN. */
  readonly functionName: string;
  readonly region: string;
  readonly credentials: () => Promise<AwsCredentials>;
  /** Lambda's endpoint. Default: `https://lambda.<region>.amazonaws.com` (`.com.cn` in China). */
  readonly endpoint?: string;
  /** Attempts of an invocation Lambda throttles (429: the function did not run). Default 3. */
  readonly maxAttempts?: number;
}

/** First pause before retrying a throttled invocation; doubled per attempt, full jitter. */
const BASE_RETRY_MS = 100;

/**
 * Lambda's Invoke API (`POST /2015-03-31/functions/<name>/invocations`, `RequestResponse`), signed
 * with SigV4 by Smithy's signer: the one call the consumer runner makes to the user's function.
 * Not the `@aws-sdk/client-lambda` client, to keep the runner's bundle to the clients it already
 * carries; the request is the documented REST call that client sends.
 *
 * Answers: 200 without `X-Amz-Function-Error` is the function's answer; 200 with it is an
 * invocation that failed (the handler threw, timed out or crashed: the body says which); any
 * other status is a refused invocation (the function did not run). A throttled invocation (429)
 * is tried again after a random pause (full jitter, 100 ms doubling), at most `maxAttempts` times
 * in all; after the last attempt it fails as refused.
 * Cost: one Lambda request per attempt; the invocation lasts as long as the function runs.
 */
export class LambdaFunctionInvoker implements FunctionInvoker {
  readonly #options: LambdaFunctionInvokerOptions;
  readonly #signer: SignatureV4;
  readonly #url: URL;

  constructor(options: LambdaFunctionInvokerOptions) {
    this.#options = options;
    this.#signer = new SignatureV4({
      service: 'lambda',
      region: options.region,
      credentials: options.credentials,
      sha256: Sha256,
    });
    const endpoint =
      options.endpoint ??
      `https://lambda.${options.region}.amazonaws.com${options.region.startsWith('cn-') ? '.cn' : ''}`;
    this.#url = new URL(
      `/2015-03-31/functions/${encodeURIComponent(options.functionName)}/invocations`,
      endpoint,
    );
  }

  async invoke(payload: unknown): Promise<unknown> {
    const body = JSON.stringify(payload);
    const maxAttempts = this.#options.maxAttempts ?? 3;
    for (let attempt = 1; ; attempt++) {
      const response = await this.#send(body);
      const text = await response.text();
      if (response.status === 200) {
        const functionError = response.headers.get('x-amz-function-error');
        if (functionError !== null) {
          throw new FunctionInvocationError(
            `${this.#options.functionName} failed (${functionError}): ${describeFailure(text)}`,
          );
        }
        return parse(text, this.#options.functionName);
      }
      if (response.status === 429 && attempt < maxAttempts) {
        await pause(Math.random() * BASE_RETRY_MS * 2 ** (attempt - 1));
        continue;
      }
      throw new FunctionInvocationError(
        `invoking ${this.#options.functionName} was refused (${response.status} ` +
          `${response.headers.get('x-amzn-errortype') ?? ''}): ${text.slice(0, 500)}`,
      );
    }
  }

  async #send(body: string): Promise<Response> {
    const url = this.#url;
    const signed = await this.#signer.sign({
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: url.pathname,
      query: {},
      headers: {
        host: url.host,
        'content-type': 'application/json',
        'x-amz-invocation-type': 'RequestResponse',
      },
      body,
    });
    try {
      // fetch sets Host from the URL (the value signed), and refuses to be given one.
      const { host: _host, ...headers } = signed.headers;
      return await fetch(url, { method: 'POST', headers, body });
    } catch (error) {
      throw new FunctionInvocationError(`invoking ${this.#options.functionName} failed: no answer`, {
        cause: error,
      });
    }
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

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
