import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { LOCAL_CREDENTIALS, LOCAL_REGION, startEmbeddedStack } from '../../infra/local/embedded-stack.ts';
import { catalogTable, tables } from '../../shared/config/resources.ts';
import { makeDataDir, startEmbeddedProcess } from '../support/embedded-process.ts';
import { call } from '../support/http-client.ts';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await makeDataDir();
  dirs.push(dir);
  return dir;
}

describe('embedded stack', () => {
  it('creates every table and the scheduler queue, and keeps data on disk across a restart', async () => {
    const dataDir = await tempDir();
    const first = await startEmbeddedStack({ dataDir });
    for (const table of tables) expect(first.env[table.envVar]).toMatch(/^ackline-local-/);
    expect(first.env.ACKLINE_SCHEDULER_QUEUE_URL).toMatch(/ackline-local--scheduler$/);
    const tableName = first.env[catalogTable.envVar] as string;
    const client = (endpoint: string) =>
      new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
    const writer = client(first.dynamodbEndpoint);
    await writer.send(
      new PutItemCommand({
        TableName: tableName,
        Item: { pk: { S: 'probe' }, sk: { S: 'x' }, v: { N: '42' } },
      }),
    );
    writer.destroy();
    await first.stop();

    const second = await startEmbeddedStack({ dataDir });
    const reader = client(second.dynamodbEndpoint);
    const item = await reader.send(
      new GetItemCommand({
        TableName: tableName,
        Key: { pk: { S: 'probe' }, sk: { S: 'x' } },
        ConsistentRead: true,
      }),
    );
    reader.destroy();
    await second.stop();
    expect(item.Item?.v?.N).toBe('42');
  });
});

describe('npm start (infra/local/main.ts)', () => {
  it('prints one ready line, answers the health check, and stops cleanly on SIGINT', async () => {
    const stack = await startEmbeddedProcess({ dataDir: await tempDir() });
    const health = await call(stack.url, 'GET', '/admin/v2/brokers/health');
    const code = await stack.stop('SIGINT');

    expect(health.status).toBe(200);
    expect(stack.output().match(/ackline ready on http:\/\/127\.0\.0\.1:\d+/g)).toHaveLength(1);
    expect(code).toBe(0);
  });

  it('says clearly that the port is in use, without a stack trace', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      await expect(startEmbeddedProcess({ dataDir: await tempDir(), port })).rejects.toThrow(
        new RegExp(`exited with 1[\\s\\S]*port ${port} on 127\\.0\\.0\\.1 is already in use`),
      );
    } finally {
      blocker.close();
    }
  });

  it('refuses a second stack on the same data directory', async () => {
    const dataDir = await tempDir();
    const first = await startEmbeddedProcess({ dataDir });
    try {
      await expect(startEmbeddedProcess({ dataDir })).rejects.toThrow(/in use by another ackline process/);
    } finally {
      await first.stop();
    }
  });
});

describe('local gateway', () => {
  const url = inject('acklineUrl');

  it('answers the health check without a token', async () => {
    const result = await call(url, 'GET', '/admin/v2/brokers/health');
    expect(result.status).toBe(200);
  });

  it.each([
    ['no token', undefined],
    ['a malformed token', 'not-a-jwt'],
    ['a token signed with another secret', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9.c2lnbmF0dXJl'],
  ])('answers 401 with a JSON reason for %s', async (_label, token) => {
    const result = await call(url, 'GET', '/admin/v2/persistent/public/default', token ? { token } : {});
    expect(result.status).toBe(401);
    expect(result.body).toEqual({ reason: expect.stringContaining('Unauthorized') });
  });

  it('answers 404 with a JSON reason outside the API', async () => {
    const result = await call(url, 'GET', '/nowhere');
    expect(result.status).toBe(404);
    expect(result.body).toEqual({ reason: expect.any(String) });
  });
});
