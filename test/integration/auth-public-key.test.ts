import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../shared/cli/main.ts';
import { tokenRefusalReasons } from '../../shared/domain/token-refusal.ts';
import {
  type EmbeddedProcess,
  startEmbeddedProcess,
  TEST_TOKEN_SECRET,
} from '../support/embedded-process.ts';
import { hs256Token } from '../support/hs256-token.ts';
import { call } from '../support/http-client.ts';

// Issue 12: an embedded stack that verifies with a public key (ACKLINE_TOKEN_PUBLIC_KEY, as
// Pulsar's tokenPublicKey) and requires an audience, with a key pair and tokens made by
// `ackline-admin tokens`. Its own stack: the shared one verifies HS256.

const AUDIENCE = 'ackline-it';
/** A superuser-only call: creating a topic. */
const TOPIC_PATH = '/admin/v2/persistent/public/default/public-key-auth';

let stack: EmbeddedProcess | undefined;
let keysDir: string;

/** Runs `ackline-admin` in-process in the keys directory; answers its stdout, failing on a non-zero exit. */
async function cli(argv: readonly string[]): Promise<string> {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, {
    stdout: {
      write: (text: string) => {
        stdout += text;
      },
    },
    stderr: {
      write: (text: string) => {
        stderr += text;
      },
    },
    env: {},
    cwd: keysDir,
  });
  if (code !== 0) throw new Error(`ackline-admin ${argv.join(' ')} exited ${code}: ${stderr}`);
  return stdout.trim();
}

const privateKey = () => pathToFileURL(join(keysDir, 'private.key')).href;

beforeAll(async () => {
  keysDir = await mkdtemp(join(tmpdir(), 'ackline-keys-it-'));
  await cli([
    'tokens',
    'create-key-pair',
    '-a',
    'ES256',
    '--output-private-key',
    'private.key',
    '--output-public-key',
    'public.key',
  ]);
  stack = await startEmbeddedProcess({
    env: {
      ACKLINE_TOKEN_SECRET: '',
      ACKLINE_TOKEN_PUBLIC_KEY: pathToFileURL(join(keysDir, 'public.key')).href,
      ACKLINE_TOKEN_AUDIENCE: AUDIENCE,
    },
  });
}, 60_000);

afterAll(async () => {
  const dataDir = stack?.dataDir;
  await stack?.stop('SIGTERM');
  await Promise.all([
    rm(keysDir, { recursive: true, force: true }),
    dataDir ? rm(dataDir, { recursive: true, force: true }) : undefined,
  ]);
});

describe('a stack verifying ES256 tokens with a public key and an audience', () => {
  it('accepts a token the CLI signed with the private key of the pair it created', async () => {
    const token = await cli([
      'tokens',
      'create',
      '--private-key',
      privateKey(),
      '--subject',
      'admin',
      '--audience',
      AUDIENCE,
      '--expiry-time',
      '10m',
    ]);

    const result = await call((stack as EmbeddedProcess).url, 'PUT', TOPIC_PATH, { token });

    expect(result.status).toBe(204);
  });

  it.each([
    [
      'a token for another audience',
      async () =>
        cli(['tokens', 'create', '--private-key', privateKey(), '-s', 'admin', '--audience', 'elsewhere']),
      'audience',
    ],
    [
      'a token without an audience',
      async () => cli(['tokens', 'create', '--private-key', privateKey(), '-s', 'admin']),
      'audience',
    ],
    [
      'an HS256 token (no secret here)',
      async () => hs256Token({ sub: 'admin', aud: AUDIENCE }, TEST_TOKEN_SECRET),
      'algorithm',
    ],
  ] as const)('refuses %s, naming the check', async (_label, tokenOf, refusal) => {
    const token = await tokenOf();

    const result = await call((stack as EmbeddedProcess).url, 'PUT', TOPIC_PATH, { token });

    expect(result.status).toBe(401);
    expect(result.body).toEqual({ reason: tokenRefusalReasons[refusal] });
  });
});
