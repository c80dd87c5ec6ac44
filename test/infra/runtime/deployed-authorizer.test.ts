// The authorizer as deployed: its esbuild bundle (the options of `cdk synth`)
// run in a fresh Node process, reading its token secret at cold start from
// Secrets Manager or SSM (a secret key or a public key) through the real AWS SDK clients, pointed at a local
// HTTP stand-in of each service (AWS_ENDPOINT_URL_<SERVICE>). Nothing leaves
// the machine; what is checked is the wire request and the cold-start cache.
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { esbuildOptionsFor } from '../../../scripts/esbuild-options.ts';
import { signToken } from '../../../shared/adapters/jose-tokens.ts';
import { hs256Token } from '../../support/hs256-token.ts';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:ackline/test/token-secret-AbC123';
const PARAMETER = '/ackline/test/token-secret';
const SECRET = 'deployed-secret-0123456789';

interface StubRequest {
  readonly target: string;
  readonly body: Record<string, unknown>;
}

/** One AWS JSON-protocol service on loopback: answers by X-Amz-Target and keeps every request. */
class ServiceStub {
  readonly requests: StubRequest[] = [];
  private answers: Record<string, { status: number; body: unknown }> = {};
  private readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target']);
      this.requests.push({ target, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') });
      const answer = this.answers[target] ?? { status: 400, body: { __type: 'UnknownOperationException' } };
      res.writeHead(answer.status, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify(answer.body));
    });
  });

  answer(target: string, status: number, body: unknown): void {
    this.answers[target] = { status, body };
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

let outdir: string;
let bundle: string;
beforeAll(async () => {
  outdir = mkdtempSync(join(tmpdir(), 'ackline-authorizer-'));
  await build(esbuildOptionsFor('authorizer', outdir));
  bundle = pathToFileURL(join(outdir, 'index.mjs')).href;
}, 60_000);
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

/**
 * Imports the bundle in a fresh process (one cold start) and invokes its
 * handler once per token, in order. Answers what each invocation returned
 * (the principal) or threw (the message).
 */
async function invokeColdStart(env: Record<string, string>, tokens: string[]): Promise<unknown[]> {
  const script = `
    const { handler } = await import(${JSON.stringify(bundle)});
    const results = [];
    for (const token of ${JSON.stringify(tokens)}) {
      const event = {
        type: 'REQUEST',
        methodArn: 'arn:aws:execute-api:eu-west-1:123456789012:api1234/test/GET/admin/v2/x',
        headers: { Authorization: 'Bearer ' + token },
        requestContext: { requestId: 'api-request' },
      };
      try {
        const answer = await handler(event);
        results.push(answer.context.tokenRefusal === undefined
          ? { principalId: answer.principalId }
          : { refusal: answer.context.tokenRefusal });
      } catch (error) {
        results.push({ error: error.message });
      }
    }
    process.stdout.write('\\nRESULTS ' + JSON.stringify(results) + '\\n');
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    env: {
      PATH: process.env.PATH ?? '',
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_EC2_METADATA_DISABLED: 'true',
      ACKLINE_STAGE: 'test',
      NODE_OPTIONS: '--enable-source-maps',
      ...env,
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  const line = stdout.split('\n').find((candidate) => candidate.startsWith('RESULTS '));
  if (code !== 0 || line === undefined)
    throw new Error(`authorizer process exited ${code}:\n${stdout}\n${stderr}`);
  return JSON.parse(line.slice('RESULTS '.length)) as unknown[];
}

describe('the bundled authorizer on a deployed stack', () => {
  const stub = new ServiceStub();
  let endpoint: string;
  beforeAll(async () => {
    endpoint = await stub.start();
  });
  afterAll(() => stub.stop());

  it('reads a Secrets Manager secret once per cold start and verifies tokens with it', async () => {
    stub.requests.length = 0;
    stub.answer('secretsmanager.GetSecretValue', 200, { ARN: SECRET_ARN, SecretString: SECRET });

    const results = await invokeColdStart(
      { AWS_ENDPOINT_URL_SECRETS_MANAGER: endpoint, ACKLINE_TOKEN_SECRET_ARN: SECRET_ARN },
      [
        hs256Token({ sub: 'admin' }, SECRET),
        hs256Token({ sub: 'ops' }, SECRET),
        hs256Token({ sub: 'x' }, 'other'),
      ],
    );

    expect(results).toEqual([{ principalId: 'admin' }, { principalId: 'ops' }, { refusal: 'signature' }]);
    expect(stub.requests).toEqual([
      { target: 'secretsmanager.GetSecretValue', body: { SecretId: SECRET_ARN } },
    ]);
  });

  it('reads an SSM SecureString parameter with decryption', async () => {
    stub.requests.length = 0;
    stub.answer('AmazonSSM.GetParameter', 200, {
      Parameter: { Name: PARAMETER, Type: 'SecureString', Value: SECRET },
    });

    const results = await invokeColdStart(
      { AWS_ENDPOINT_URL_SSM: endpoint, ACKLINE_TOKEN_SECRET_PARAMETER: PARAMETER },
      [hs256Token({ sub: 'admin' }, SECRET)],
    );

    expect(results).toEqual([{ principalId: 'admin' }]);
    expect(stub.requests).toEqual([
      { target: 'AmazonSSM.GetParameter', body: { Name: PARAMETER, WithDecryption: true } },
    ]);
  });

  it.each([
    ['RS256', 'a Secrets Manager secret holding PEM', 'secretsManager'],
    ['ES256', 'an SSM parameter holding base64 DER (Pulsar)', 'ssm'],
  ] as const)('verifies %s tokens with a public key from %s', async (algorithm, _label, service) => {
    stub.requests.length = 0;
    const pair =
      algorithm === 'RS256'
        ? generateKeyPairSync('rsa', { modulusLength: 2048 })
        : generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const stranger = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const env: Record<string, string> =
      service === 'secretsManager'
        ? { AWS_ENDPOINT_URL_SECRETS_MANAGER: endpoint, ACKLINE_TOKEN_PUBLIC_KEY_ARN: SECRET_ARN }
        : { AWS_ENDPOINT_URL_SSM: endpoint, ACKLINE_TOKEN_PUBLIC_KEY_PARAMETER: PARAMETER };
    if (service === 'secretsManager') {
      const pem = pair.publicKey.export({ format: 'pem', type: 'spki' }).toString();
      stub.answer('secretsmanager.GetSecretValue', 200, { ARN: SECRET_ARN, SecretString: pem });
    } else {
      const der = pair.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
      stub.answer('AmazonSSM.GetParameter', 200, {
        Parameter: { Name: PARAMETER, Type: 'String', Value: der },
      });
    }

    const results = await invokeColdStart(env, [
      await signToken({ sub: 'ops' }, { key: pair.privateKey, algorithm }),
      await signToken({ sub: 'ops' }, { key: stranger.privateKey, algorithm: 'ES256' }),
      hs256Token({ sub: 'admin' }, SECRET),
    ]);

    expect(results).toEqual([
      { principalId: 'ops' },
      { refusal: algorithm === 'ES256' ? 'signature' : 'algorithm' },
      { refusal: 'algorithm' },
    ]);
    expect(stub.requests).toHaveLength(1);
  });

  it('fails every invocation (a 500, not a 401) while the secret cannot be read, and retries each time', async () => {
    stub.requests.length = 0;
    stub.answer('secretsmanager.GetSecretValue', 400, {
      __type: 'ResourceNotFoundException',
      message: "Secrets Manager can't find the specified secret.",
    });
    const token = hs256Token({ sub: 'admin' }, SECRET);

    const results = await invokeColdStart(
      { AWS_ENDPOINT_URL_SECRETS_MANAGER: endpoint, ACKLINE_TOKEN_SECRET_ARN: SECRET_ARN },
      [token, token],
    );

    expect(results).toEqual([
      { error: `token secret ${SECRET_ARN} does not exist` },
      { error: `token secret ${SECRET_ARN} does not exist` },
    ]);
    expect(stub.requests).toHaveLength(2);
  });
});
