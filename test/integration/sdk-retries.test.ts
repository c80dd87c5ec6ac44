// The API functions' bounded SDK retries (shared/adapters/bounded-retry-strategy.ts) in a real
// DynamoDB client, against a loopback server that throttles every attempt: the SDK's own retry
// middleware classifies the error, sleeps the token's delay and gives up, as it will on AWS.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { API_REQUEST_RETRIES, BoundedRetryStrategy } from '../../shared/adapters/bounded-retry-strategy.ts';

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

describe("the API functions' SDK retries", () => {
  it('makes a DynamoDB client that is throttled on every attempt give up after 4 attempts and 1.4 s of backoff at most', async () => {
    let attempts = 0;
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        attempts++;
        res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(
          JSON.stringify({
            __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException',
            message: 'slow down',
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const client = new DynamoDBClient({
      endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      region: 'us-east-1',
      credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
      maxAttempts: API_REQUEST_RETRIES.maxAttempts,
      retryStrategy: new BoundedRetryStrategy(API_REQUEST_RETRIES, () => 0.9999),
    });
    const startedAt = Date.now();

    const failure = await client
      .send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'k' } } }))
      .catch(
        (error: unknown) =>
          error as { name: string; $metadata: { attempts?: number; totalRetryDelay?: number } },
      );
    const elapsedMs = Date.now() - startedAt;
    client.destroy();

    expect(failure).toMatchObject({ name: 'ThrottlingException' });
    expect(attempts).toBe(4);
    expect(failure.$metadata.totalRetryDelay).toBe(199 + 399 + 799);
    expect(elapsedMs).toBeGreaterThanOrEqual(1_390);
    expect(elapsedMs).toBeLessThan(1_400 + 1_000);
  });
});
