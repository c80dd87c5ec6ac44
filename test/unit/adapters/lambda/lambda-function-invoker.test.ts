// Lambda's Invoke API as the runner calls it, against a local HTTP server that answers as Lambda
// documents (RequestResponse; X-Amz-Function-Error for a function that failed; 429 when throttled).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { LambdaFunctionInvoker } from '../../../../shared/adapters/lambda/lambda-function-invoker.ts';
import { FunctionInvocationError } from '../../../../shared/ports/function-invoker.ts';

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

const ARN = 'arn:aws:lambda:eu-west-1:123456789012:function:billing';
const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A local "Lambda" answering each request in turn with the given answers. */
async function lambda(
  answers: readonly ((response: ServerResponse) => void)[],
): Promise<{ seen: Seen[]; invoker: LambdaFunctionInvoker }> {
  const seen: Seen[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      seen.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
      const answer = answers[Math.min(seen.length - 1, answers.length - 1)];
      answer?.(response);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const invoker = new LambdaFunctionInvoker({
    functionName: ARN,
    client: new LambdaClient({
      region: 'eu-west-1',
      endpoint: `http://127.0.0.1:${port}`,
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret', sessionToken: 'token' },
      maxAttempts: 3,
    }),
  });
  return { seen, invoker };
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  (response: ServerResponse) => {
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(JSON.stringify(body));
  };

describe('LambdaFunctionInvoker', () => {
  it("invokes synchronously, signed with SigV4 for lambda in the client's region, and answers the function's answer", async () => {
    const { seen, invoker } = await lambda([json(200, { acklineFailures: [] })]);

    const answer = await invoker.invoke({ acklineBatch: { order: 'concurrent', messages: [] } });

    expect(answer).toEqual({ acklineFailures: [] });
    const [request] = seen;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe(`/2015-03-31/functions/${encodeURIComponent(ARN)}/invocations`);
    expect(JSON.parse(request?.body ?? '')).toEqual({ acklineBatch: { order: 'concurrent', messages: [] } });
    expect(request?.headers['x-amz-invocation-type']).toBe('RequestResponse');
    expect(request?.headers['x-amz-security-token']).toBe('token');
    expect(request?.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/lambda\/aws4_request, SignedHeaders=[^,]*host[^,]*x-amz-invocation-type[^,]*, Signature=[0-9a-f]{64}$/,
    );
  });

  it('fails with the error Lambda reports for a function that threw, timed out or crashed', async () => {
    const { invoker } = await lambda([
      json(
        200,
        { errorType: 'Sandbox.Timedout', errorMessage: 'Task timed out after 20.00 seconds' },
        { 'X-Amz-Function-Error': 'Unhandled' },
      ),
    ]);
    const failure = invoker.invoke({});
    await expect(failure).rejects.toBeInstanceOf(FunctionInvocationError);
    await expect(failure).rejects.toThrow(/Unhandled.*Sandbox\.Timedout: Task timed out/);
  });

  it('tries a throttled invocation again (the function did not run), at most 3 times in all', async () => {
    const throttled = json(
      429,
      { Type: 'User', message: 'Rate exceeded' },
      { 'x-amzn-ErrorType': 'TooManyRequestsException' },
    );
    const { seen, invoker } = await lambda([throttled, json(200, { ok: true })]);
    expect(await invoker.invoke({})).toEqual({ ok: true });
    expect(seen).toHaveLength(2);

    const always = await lambda([throttled]);
    await expect(always.invoker.invoke({})).rejects.toThrow(/refused \(TooManyRequestsException\)/);
    expect(always.seen).toHaveLength(3);
  });

  it('fails at once when the invocation is refused (not permitted)', async () => {
    const { seen, invoker } = await lambda([
      json(403, { message: 'not authorized' }, { 'x-amzn-ErrorType': 'AccessDeniedException' }),
    ]);
    await expect(invoker.invoke({})).rejects.toThrow(/refused \(AccessDeniedException\)/);
    expect(seen).toHaveLength(1);
  });
});
