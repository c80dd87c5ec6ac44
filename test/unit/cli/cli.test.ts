import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TokenVerifier, type VerifiedToken } from '../../../shared/adapters/jose-tokens.ts';
import { publicKeyFrom, secretKeyFrom, type TokenKey } from '../../../shared/adapters/token-keys.ts';
import { run } from '../../../shared/cli/main.ts';
import type { FetchFunction } from '../../../shared/client/admin-http.ts';
import { fakeFetch, jsonResponse, noContent, type Responder, reasonResponse } from '../client/fake-fetch.ts';

const BIG_ID = '18446744073709551615';
const NOW_MS = Date.UTC(2030, 0, 1);

/** What the server's verifier makes of a token the CLI printed. */
function verifyWith(
  key: TokenKey,
  token: string,
  options: { audience?: string } = {},
): Promise<VerifiedToken> {
  return new TokenVerifier({
    key,
    roleClaim: 'sub',
    clockToleranceSeconds: 0,
    clock: { nowMs: () => NOW_MS },
    ...(options.audience === undefined ? {} : { audience: { claim: 'aud', value: options.audience } }),
  }).verify(token.trim());
}

/** The claims of a token, unverified (what it carries, not whether it holds). */
function claimsOf(token: string): unknown {
  return JSON.parse(Buffer.from(token.trim().split('.')[1] as string, 'base64url').toString());
}

/** Runs the CLI in-process with a fake fetch; collects stdout, stderr and requests. */
async function cli(
  argv: readonly string[],
  options: { respond?: Responder; env?: Record<string, string>; fetch?: FetchFunction; cwd?: string } = {},
) {
  const fake = fakeFetch(options.respond);
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
    env: options.env ?? {},
    fetch: options.fetch ?? fake.fetch,
    cwd: options.cwd ?? mkdtempSync(join(tmpdir(), 'ackline-cli-')),
    nowMs: () => NOW_MS,
  });
  return { code, stdout, stderr, requests: fake.requests };
}

describe('ackline-admin topics acknowledgeMessage', () => {
  it('acknowledges on the named subscriptions and confirms', async () => {
    const result = await cli([
      '--admin-url',
      'http://admin.test:9090',
      '--auth-token',
      'tok',
      'topics',
      'acknowledgeMessage',
      'persistent://my-tenant/my-ns/orders',
      '-l',
      BIG_ID,
      '--entryId',
      '3',
      '-s',
      'billing,audit',
    ]);

    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(
      `Acknowledged message ${BIG_ID}:3 on subscriptions billing, audit of persistent://my-tenant/my-ns/orders\n`,
    );
    expect(result.requests).toHaveLength(1);
    expect(result.requests[0]).toMatchObject({
      method: 'POST',
      url: `http://admin.test:9090/admin/v2/persistent/my-tenant/my-ns/orders/acknowledgeMessage?ledgerId=${BIG_ID}&entryId=3&subscriptionNames=billing&subscriptionNames=audit`,
    });
    expect(result.requests[0]!.headers.authorization).toBe('Bearer tok');
  });

  it('takes the URL and token from the environment, and all subscriptions by default', async () => {
    const result = await cli(['topics', 'acknowledgeMessage', 't/ns/x', '-l', '1', '-e', '2'], {
      env: { ACKLINE_ADMIN_URL: 'http://env.test', ACKLINE_AUTH_TOKEN: 'env-tok' },
    });

    expect(result.code).toBe(0);
    expect(result.stdout).toContain('on all subscriptions');
    expect(result.requests[0]!.url).toBe(
      'http://env.test/admin/v2/persistent/t/ns/x/acknowledgeMessage?ledgerId=1&entryId=2',
    );
    expect(result.requests[0]!.headers.authorization).toBe('Bearer env-tok');
  });

  it('defaults to http://127.0.0.1:8080 and accepts global options after the command', async () => {
    const defaulted = await cli(['topics', 'stats', 't/ns/x'], { respond: () => jsonResponse({}) });
    const late = await cli(['topics', 'stats', 't/ns/x', '--admin-url', 'http://late.test'], {
      respond: () => jsonResponse({}),
    });

    expect(defaulted.requests[0]!.url).toBe('http://127.0.0.1:8080/admin/v2/persistent/t/ns/x/stats');
    expect(late.requests[0]!.url).toBe('http://late.test/admin/v2/persistent/t/ns/x/stats');
  });

  it("prints the server's reason on stderr and exits 1 on 412", async () => {
    const result = await cli(
      ['topics', 'acknowledgeMessage', 't/ns/x', '-l', '12', '-e', '3', '-s', 'billing'],
      {
        respond: () =>
          reasonResponse(412, 'Precondition Failed', 'Message 12:3 was already acknowledged on billing'),
      },
    );

    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'ackline-admin: 412 Precondition Failed: Message 12:3 was already acknowledged on billing\n',
    );
  });

  it('prints the dry-run report as JSON', async () => {
    const result = await cli(['topics', 'acknowledgeMessage', 't/ns/x', '-l', '12', '-e', '3', '--dry-run'], {
      respond: () => jsonResponse({ wouldAcknowledge: ['billing'] }),
    });

    expect(result.code).toBe(0);
    expect(new URL(result.requests[0]!.url).searchParams.get('dryRun')).toBe('true');
    expect(JSON.parse(result.stdout)).toEqual({ wouldAcknowledge: ['billing'] });
  });

  it.each([
    [
      'a non-numeric ledgerId',
      ['-l', '12a', '-e', '3'],
      "'-l, --ledgerId <ledgerId>' argument '12a' is invalid",
    ],
    ['a negative entryId', ['-l', '12', '-e', '-3'], '-e, --entryId <entryId>'],
    ['a missing entryId', ['-l', '12'], "required option '-e, --entryId <entryId>' not specified"],
  ])('refuses %s locally', async (_name, flags, message) => {
    const result = await cli(['topics', 'acknowledgeMessage', 't/ns/x', ...flags]);

    expect(result.code).toBe(1);
    expect(result.stderr).toContain(message);
    expect(result.requests).toHaveLength(0);
  });

  it('names the URL in one line when the server cannot be reached', async () => {
    const refused: FetchFunction = async () => {
      throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:8080') });
    };

    const result = await cli(['topics', 'acknowledgeMessage', 't/ns/x', '-l', '1', '-e', '2'], {
      fetch: refused,
    });

    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'ackline-admin: Cannot reach the admin API at http://127.0.0.1:8080/admin/v2/persistent/t/ns/x/acknowledgeMessage?ledgerId=1&entryId=2: connect ECONNREFUSED 127.0.0.1:8080\n',
    );
  });

  it('reports a malformed topic name without a stack trace', async () => {
    const result = await cli(['topics', 'acknowledgeMessage', 'ftp://t/ns/x', '-l', '1', '-e', '2']);

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^ackline-admin: Invalid topic name 'ftp:\/\/t\/ns\/x': .*\n$/);
  });
});

describe('ackline-admin --help', () => {
  it('documents the acknowledgeMessage flags and the global options', async () => {
    const result = await cli(['topics', 'acknowledgeMessage', '--help']);

    expect(result.code).toBe(0);
    for (const flag of [
      '-l, --ledgerId',
      '-e, --entryId',
      '-s, --subscriptionNames',
      '--dry-run',
      '--admin-url',
      '--auth-token',
    ]) {
      expect(result.stdout).toContain(flag);
    }
    expect(result.requests).toHaveLength(0);
  });

  it.each([
    [[]],
    [['topics']],
    [['namespaces']],
    [['tokens']],
    ...[
      'acknowledgeMessage',
      'acknowledgeMessage-audit',
      'create',
      'create-partitioned-topic',
      'list',
      'delete',
      'create-subscription',
      'subscriptions',
      'unsubscribe',
      'stats',
      'stats-internal',
      'peek-messages',
      'get-message-by-id',
      'skip',
      'grant-permission',
      'revoke-permission',
      'permissions',
    ].map((command) => [['topics', command]]),
    [['namespaces', 'grant-permission']],
    [['namespaces', 'revoke-permission']],
    [['namespaces', 'permissions']],
    [['tokens', 'create']],
    [['tokens', 'create-secret-key']],
    [['tokens', 'create-key-pair']],
  ])('%j --help exits 0 with usage', async (command) => {
    const result = await cli([...command, '--help']);

    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Usage: ackline-admin ${command.join(' ')}`.trim());
  });

  it('exits 1 on an unknown command', async () => {
    const result = await cli(['topics', 'frobnicate']);

    expect(result.code).toBe(1);
    expect(result.stderr).toContain("unknown command 'frobnicate'");
  });
});

describe('ackline-admin topics: other commands', () => {
  const base = 'http://127.0.0.1:8080/admin/v2/persistent/t/ns/x';

  it.each([
    [['create', 't/ns/x'], 'PUT', base, undefined],
    [['create-partitioned-topic', 't/ns/x', '-p', '3'], 'PUT', `${base}/partitions`, '3'],
    [['delete', 't/ns/x'], 'DELETE', base, undefined],
    [['delete', 't/ns/x', '-f'], 'DELETE', `${base}?force=true`, undefined],
    [['delete-partitioned-topic', 't/ns/x', '--force'], 'DELETE', `${base}/partitions?force=true`, undefined],
    [
      ['create-subscription', 't/ns/x', '-s', 'sub', '--subscription-type', 'Key_Shared', '-m', 'earliest'],
      'PUT',
      `${base}/subscription/sub?subscriptionType=Key_Shared`,
      '{"initialPosition":"Earliest"}',
    ],
    [['unsubscribe', 't/ns/x', '-s', 'sub'], 'DELETE', `${base}/subscription/sub`, undefined],
    [
      ['unsubscribe', 't/ns/x', '-s', 'sub', '-f'],
      'DELETE',
      `${base}/subscription/sub?force=true`,
      undefined,
    ],
    [['skip', 't/ns/x', '-s', 'sub', '-n', '5'], 'POST', `${base}/subscription/sub/skip/5`, undefined],
    [
      ['grant-permission', 't/ns/x', '--role', 'ops', '--actions', 'produce,consume'],
      'POST',
      `${base}/permissions/ops`,
      '["produce","consume"]',
    ],
    [['revoke-permission', 't/ns/x', '--role', 'ops'], 'DELETE', `${base}/permissions/ops`, undefined],
  ])('topics %j', async (args, method, url, body) => {
    const result = await cli(['topics', ...args], { respond: () => noContent() });

    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).not.toBe('');
    expect(result.requests.map((r) => [r.method, r.url, r.body])).toEqual([[method, url, body]]);
  });

  it('refuses an unknown subscription type', async () => {
    const result = await cli([
      'topics',
      'create-subscription',
      't/ns/x',
      '-s',
      'sub',
      '--subscription-type',
      'Nope',
    ]);

    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Allowed choices are Exclusive, Shared, Failover, Key_Shared');
  });

  it('lists topics one per line', async () => {
    const result = await cli(['topics', 'list', 't/ns'], {
      respond: () => jsonResponse(['persistent://t/ns/a', 'persistent://t/ns/b']),
    });

    expect(result.stdout).toBe('persistent://t/ns/a\npersistent://t/ns/b\n');
    expect(result.requests[0]!.url).toBe('http://127.0.0.1:8080/admin/v2/persistent/t/ns');
  });

  it('lists partitioned topics one per line (list-partitioned-topics)', async () => {
    const result = await cli(['topics', 'list-partitioned-topics', 't/ns', '--output', 'json'], {
      respond: () => jsonResponse(['persistent://t/ns/p']),
    });

    expect(JSON.parse(result.stdout)).toEqual(['persistent://t/ns/p']);
    expect(result.requests[0]!.url).toBe('http://127.0.0.1:8080/admin/v2/persistent/t/ns/partitioned');
  });

  it('peeks positions 1..N and prints each message', async () => {
    const result = await cli(['topics', 'peek-messages', 't/ns/x', '-s', 'sub', '-n', '3'], {
      respond: (request) => jsonResponse({ messageId: `1:${request.url.slice(-1)}:-1`, payload: 'aGk=' }),
    });

    expect(result.code).toBe(0);
    expect(result.requests.map((r) => r.url)).toEqual(
      [1, 2, 3].map((n) => `${base}/subscription/sub/position/${n}`),
    );
    expect(result.stdout).toContain('"messageId": "1:3:-1"');
  });

  it('prints a message by id with 64-bit ids intact', async () => {
    const result = await cli(['topics', 'get-message-by-id', 't/ns/x', '-l', BIG_ID, '-e', '0'], {
      respond: () => jsonResponse(undefined, 200, `{"messageId":"m","payload":"","ledgerId":${BIG_ID}}`),
    });

    expect(result.requests[0]!.url).toBe(`${base}/ledger/${BIG_ID}/entry/0`);
    expect(result.stdout).toContain(BIG_ID);
  });

  it('prints stats as pretty JSON', async () => {
    const result = await cli(['topics', 'stats-internal', 't/ns/x'], {
      respond: () => jsonResponse({ entriesAddedCounter: 4 }),
    });

    expect(result.stdout).toBe('{\n  "entriesAddedCounter": 4\n}\n');
    expect(result.requests[0]!.url).toBe(`${base}/internalStats`);
  });
});

describe('ackline-admin namespaces', () => {
  it('grants on a namespace', async () => {
    const result = await cli([
      'namespaces',
      'grant-permission',
      't/ns',
      '--role',
      'ops',
      '--actions',
      'consume',
    ]);

    expect(result.code).toBe(0);
    expect(result.requests.map((r) => [r.method, r.url, r.body])).toEqual([
      ['POST', 'http://127.0.0.1:8080/admin/v2/namespaces/t/ns/permissions/ops', '["consume"]'],
    ]);
  });

  it('prints namespace permissions', async () => {
    const result = await cli(['namespaces', 'permissions', 't/ns'], {
      respond: () => jsonResponse({ ops: ['consume'] }),
    });

    expect(JSON.parse(result.stdout)).toEqual({ ops: ['consume'] });
  });
});

describe('ackline-admin tokens create', () => {
  it('prints a token signed with --secret-key', async () => {
    const result = await cli(['tokens', 'create', '--subject', 'ops', '--secret-key', 'k3y']);

    expect(result.code).toBe(0);
    expect(await verifyWith(secretKeyFrom('k3y'), result.stdout)).toEqual({ role: 'ops' });
    expect(claimsOf(result.stdout)).toEqual({ sub: 'ops' });
    expect(result.requests).toHaveLength(0);
  });

  it.each([
    ['1h', 3_600],
    ['30d', 2_592_000],
    ['90', 90],
  ])('sets exp from --expiry-time %s', async (expiry, seconds) => {
    const result = await cli(['tokens', 'create', '-s', 'ops', '--expiry-time', expiry, '--secret-key', 'k']);

    expect(await verifyWith(secretKeyFrom('k'), result.stdout)).toEqual({
      role: 'ops',
      refusedFromMs: NOW_MS + seconds * 1000,
    });
  });

  it('sets aud from --audience', async () => {
    const result = await cli(['tokens', 'create', '-s', 'ops', '--audience', 'ackline', '--secret-key', 'k']);

    expect(await verifyWith(secretKeyFrom('k'), result.stdout, { audience: 'ackline' })).toEqual({
      role: 'ops',
    });
  });

  it('takes the secret from ACKLINE_TOKEN_SECRET, then from <ACKLINE_DATA_DIR>/token-secret', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ackline-cli-'));
    writeFileSync(join(cwd, 'token-secret'), 'from-file\n');

    const fromEnv = await cli(['tokens', 'create', '-s', 'a'], { env: { ACKLINE_TOKEN_SECRET: 'from-env' } });
    const fromFile = await cli(['tokens', 'create', '-s', 'a'], { env: { ACKLINE_DATA_DIR: '.' }, cwd });

    expect((await verifyWith(secretKeyFrom('from-env'), fromEnv.stdout)).role).toBe('a');
    expect((await verifyWith(secretKeyFrom('from-file'), fromFile.stdout)).role).toBe('a');
  });

  it('refuses both --secret-key and --private-key, and an algorithm the key does not sign', async () => {
    const both = await cli(['tokens', 'create', '-s', 'a', '--secret-key', 'k', '--private-key', 'x']);
    const mismatch = await cli(['tokens', 'create', '-s', 'a', '--secret-key', 'k', '-a', 'RS256']);

    expect([both.code, mismatch.code]).toEqual([1, 1]);
    expect(both.stderr).toBe('ackline-admin: Give --private-key or --secret-key, not both\n');
    expect(mismatch.stderr).toBe(
      'ackline-admin: --signature-algorithm RS256 does not match the key, which signs HS256\n',
    );
  });

  it('refuses a private key it cannot read, without quoting it', async () => {
    const result = await cli(['tokens', 'create', '-s', 'a', '--private-key', 'c2VjcmV0']);

    expect(result.code).toBe(1);
    expect(result.stderr).toBe('ackline-admin: the token private key is neither PEM nor PKCS#8 DER\n');
  });

  it('exits 1 saying where it looked when there is no secret', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ackline-cli-'));

    const result = await cli(['tokens', 'create', '-s', 'a'], { cwd });

    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `ackline-admin: No token secret found: --secret-key not given, ACKLINE_TOKEN_SECRET not set, and ${join(cwd, '.ackline', 'token-secret')} does not exist\n`,
    );
  });

  it('refuses a malformed duration', async () => {
    const result = await cli(['tokens', 'create', '-s', 'a', '-e', '10 parsecs', '--secret-key', 'k']);

    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Invalid duration '10 parsecs'");
  });
});

describe('ackline-admin tokens create-key-pair', () => {
  it.each([
    ['RS256', []],
    ['RS256', ['-a', 'RS256']],
    ['ES256', ['--signature-algorithm', 'ES256']],
  ])('writes a %s pair whose private key signs tokens the server verifies with its public key', async (algorithm, flags) => {
    const cwd = mkdtempSync(join(tmpdir(), 'ackline-cli-'));

    const created = await cli(
      [
        'tokens',
        'create-key-pair',
        ...flags,
        '--output-private-key',
        'private.key',
        '--output-public-key',
        'public.key',
      ],
      { cwd },
    );
    const token = await cli(
      ['tokens', 'create', '-s', 'ops', '--private-key', pathToFileURL(join(cwd, 'private.key')).href],
      { cwd },
    );
    const publicKey = publicKeyFrom(pathToFileURL(join(cwd, 'public.key')).href);

    expect(created).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(token.code).toBe(0);
    expect(publicKey.algorithm).toBe(algorithm);
    expect(await verifyWith(publicKey, token.stdout)).toEqual({ role: 'ops' });
    expect(JSON.parse(Buffer.from(token.stdout.split('.')[0] as string, 'base64url').toString())).toEqual({
      alg: algorithm,
    });
    expect(statSync(join(cwd, 'private.key')).mode & 0o777).toBe(0o600);
  });

  it('refuses another algorithm, and never overwrites a key file', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ackline-cli-'));
    writeFileSync(join(cwd, 'private.key'), 'keep me');
    const args = ['--output-private-key', 'private.key', '--output-public-key', 'public.key'];

    const hs = await cli(['tokens', 'create-key-pair', '-a', 'HS256', ...args], { cwd });
    const existing = await cli(['tokens', 'create-key-pair', ...args], { cwd });

    expect(hs.stderr).toBe("ackline-admin: --signature-algorithm must be RS256 or ES256, got 'HS256'\n");
    expect(existing.code).toBe(1);
    expect(existing.stderr).toBe(`ackline-admin: ${join(cwd, 'private.key')} exists: not overwritten\n`);
    expect(readFileSync(join(cwd, 'private.key'), 'utf8')).toBe('keep me');
  });
});

describe('ackline-admin tokens create-secret-key', () => {
  it('prints 32 random bytes as base64, which sign tokens as data:;base64,', async () => {
    const created = await cli(['tokens', 'create-secret-key']);
    const secret = `data:;base64,${created.stdout.trim()}`;

    const token = await cli(['tokens', 'create', '-s', 'ops', '--secret-key', secret]);

    expect(Buffer.from(created.stdout.trim(), 'base64')).toHaveLength(32);
    expect(await verifyWith(secretKeyFrom(secret), token.stdout)).toEqual({ role: 'ops' });
  });

  it.each([
    ['raw bytes', [], 32],
    ['base64 with --base64', ['--base64'], 45],
  ])('writes --output as %s (mode 0600), usable as file:', async (_label, flags, size) => {
    const cwd = mkdtempSync(join(tmpdir(), 'ackline-cli-'));
    const url = pathToFileURL(join(cwd, 'secret.key')).href;

    const created = await cli(['tokens', 'create-secret-key', '--output', 'secret.key', ...flags], { cwd });
    const token = await cli(['tokens', 'create', '-s', 'ops', '--secret-key', url], { cwd });

    expect(created).toMatchObject({ code: 0, stdout: '' });
    expect(statSync(join(cwd, 'secret.key'))).toMatchObject({ size });
    expect(statSync(join(cwd, 'secret.key')).mode & 0o777).toBe(0o600);
    expect(await verifyWith(secretKeyFrom(url), token.stdout)).toEqual({ role: 'ops' });
  });
});

// Issue 13, criterion 5: the pulsar-admin commands for cursors, backlog, expiry, partitioned stats,
// retention, TTL, tenants and namespaces, checked against the Pulsar REST calls they make.
describe('ackline-admin issue 13 commands', () => {
  const admin = ['--admin-url', 'http://admin.test'];

  it.each([
    [
      ['topics', 'reset-cursor', 't/ns/x', '-s', 'billing', '-m', `${BIG_ID}:3`],
      'POST',
      '/admin/v2/persistent/t/ns/x/subscription/billing/resetcursor',
      `{"ledgerId":${BIG_ID},"entryId":3}`,
    ],
    [
      ['topics', 'reset-cursor', 't/ns/x', '-s', 'billing', '-m', '12:3:-1', '-e'],
      'POST',
      '/admin/v2/persistent/t/ns/x/subscription/billing/resetcursor',
      '{"ledgerId":12,"entryId":3,"excluded":true}',
    ],
    [
      ['topics', 'reset-cursor', 't/ns/x', '-s', 'billing', '-m', 'earliest'],
      'POST',
      '/admin/v2/persistent/t/ns/x/subscription/billing/resetcursor',
      '{"ledgerId":-1,"entryId":-1}',
    ],
    [
      // MessageId.earliest as pulsar-admin parses it (-1:-1, and -1:-1:-1 as a client prints it).
      ['topics', 'reset-cursor', 't/ns/x', '-s', 'billing', '-m', '-1:-1'],
      'POST',
      '/admin/v2/persistent/t/ns/x/subscription/billing/resetcursor',
      '{"ledgerId":-1,"entryId":-1}',
    ],
    [
      ['topics', 'reset-cursor', 't/ns/x', '-s', 'billing', '-m', '-1:-1:-1'],
      'POST',
      '/admin/v2/persistent/t/ns/x/subscription/billing/resetcursor',
      '{"ledgerId":-1,"entryId":-1}',
    ],
    [
      ['topics', 'reset-cursor', 't/ns/x', '-s', 'billing', '-m', 'latest'],
      'POST',
      '/admin/v2/persistent/t/ns/x/subscription/billing/resetcursor',
      '{"ledgerId":9223372036854775807,"entryId":9223372036854775807}',
    ],
    [
      ['topics', 'reset-cursor', 't/ns/x', '-s', 'billing', '-t', '1h'],
      'POST',
      `/admin/v2/persistent/t/ns/x/subscription/billing/resetcursor/${NOW_MS - 3_600_000}`,
      undefined,
    ],
    [
      ['topics', 'clear-backlog', 't/ns/x', '-s', 'a b'],
      'POST',
      '/admin/v2/persistent/t/ns/x/subscription/a%20b/skip_all',
      undefined,
    ],
    [
      ['topics', 'expire-messages', 't/ns/x', '-s', 'billing', '-t', '0'],
      'POST',
      '/admin/v2/persistent/t/ns/x/subscription/billing/expireMessages/0',
      undefined,
    ],
    [
      ['topics', 'reset-cursor', 't/ns/x', '-s', 'billing', '-t', '0'],
      'POST',
      `/admin/v2/persistent/t/ns/x/subscription/billing/resetcursor/${NOW_MS}`,
      undefined,
    ],
    [
      ['topics', 'expire-messages', 't/ns/x', '-s', 'billing', '-t', '2m'],
      'POST',
      '/admin/v2/persistent/t/ns/x/subscription/billing/expireMessages/120',
      undefined,
    ],
    [
      ['topics', 'expire-messages-all-subscriptions', 't/ns/x', '-t', '30'],
      'POST',
      '/admin/v2/persistent/t/ns/x/all_subscription/expireMessages/30',
      undefined,
    ],
    [
      ['namespaces', 'set-retention', 't/ns', '--size', '10G', '--time', '3h'],
      'POST',
      '/admin/v2/namespaces/t/ns/retention',
      '{"retentionTimeInMinutes":180,"retentionSizeInMB":10240}',
    ],
    [
      ['namespaces', 'set-retention', 't/ns', '-s', '-1', '-t', '-1'],
      'POST',
      '/admin/v2/namespaces/t/ns/retention',
      '{"retentionTimeInMinutes":-1,"retentionSizeInMB":-1}',
    ],
    [
      ['namespaces', 'set-message-ttl', 't/ns', '--messageTTL', '1h'],
      'POST',
      '/admin/v2/namespaces/t/ns/messageTTL',
      '3600',
    ],
    [['namespaces', 'remove-retention', 't/ns'], 'DELETE', '/admin/v2/namespaces/t/ns/retention', undefined],
    [
      ['namespaces', 'remove-message-ttl', 't/ns'],
      'DELETE',
      '/admin/v2/namespaces/t/ns/messageTTL',
      undefined,
    ],
    [['namespaces', 'create', 't/ns'], 'PUT', '/admin/v2/namespaces/t/ns', undefined],
    [
      ['namespaces', 'create', 't/ns', '-c', 'standalone', '-b', '4'],
      'PUT',
      '/admin/v2/namespaces/t/ns',
      '{"replication_clusters":["standalone"],"bundles":{"numBundles":4}}',
    ],
    [
      ['namespaces', 'set-message-ttl', 't/ns', '-ttl', '3600'],
      'POST',
      '/admin/v2/namespaces/t/ns/messageTTL',
      '3600',
    ],
    [['namespaces', 'delete', 't/ns'], 'DELETE', '/admin/v2/namespaces/t/ns', undefined],
    [['namespaces', 'delete', 't/ns', '-f'], 'DELETE', '/admin/v2/namespaces/t/ns?force=true', undefined],
    [
      ['tenants', 'create', 'acme', '-r', 'ops,alice', '-c', 'standalone'],
      'PUT',
      '/admin/v2/tenants/acme',
      '{"adminRoles":["ops","alice"],"allowedClusters":["standalone"]}',
    ],
    [['tenants', 'delete', 'acme', '--force'], 'DELETE', '/admin/v2/tenants/acme?force=true', undefined],
  ])('%j calls %s %s', async (argv, method, path, body) => {
    const result = await cli([...admin, ...argv]);

    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.requests).toHaveLength(1);
    expect(result.requests[0]).toMatchObject({ method, url: `http://admin.test${path}` });
    expect(result.requests[0]!.body).toBe(body);
  });

  it.each([
    [['topics', 'reset-cursor', 't/ns/x', '-s', 'billing', '-t', '1h'], '/subscription/billing/resetcursor/'],
    [
      ['topics', 'reset-cursor', 't/ns/x', '-s', 'billing', '-m', '12:3'],
      '/subscription/billing/resetcursor',
    ],
    [['topics', 'clear-backlog', 't/ns/x', '-s', 'billing'], '/subscription/billing/skip_all'],
    [['topics', 'expire-messages', 't/ns/x', '-s', 'billing', '-t', '60'], '/expireMessages/60'],
    [
      ['topics', 'expire-messages-all-subscriptions', 't/ns/x', '-t', '60'],
      '/all_subscription/expireMessages/60',
    ],
  ])('%j --dry-run asks for a dry run and prints its report as JSON', async (argv, pathPart) => {
    const report = { operation: 'x', dryRun: true, subscriptions: { billing: [] } };
    const result = await cli([...admin, ...argv, '--dry-run'], { respond: () => jsonResponse(report) });

    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const url = new URL(result.requests[0]!.url);
    expect(url.pathname).toContain(pathPart);
    expect(url.searchParams.get('dryRun')).toBe('true');
    expect(JSON.parse(result.stdout)).toEqual(report);
  });

  it.each([
    [
      ['namespaces', 'get-retention', 't/ns'],
      '/retention',
      jsonResponse({ retentionTimeInMinutes: 60, retentionSizeInMB: -1 }),
      { retentionTimeInMinutes: 60, retentionSizeInMB: -1 },
    ],
    [['namespaces', 'get-retention', 't/ns'], '/retention', noContent(), null],
    [['namespaces', 'get-message-ttl', 't/ns'], '/messageTTL', jsonResponse(3600), 3600],
    [['namespaces', 'get-message-ttl', 't/ns'], '/messageTTL', noContent(), null],
  ])('%j GETs %s and prints the policy as JSON (null when none is set)', async (argv, suffix, answer, printed) => {
    const result = await cli([...admin, ...argv], { respond: () => answer.clone() });

    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.requests[0]).toMatchObject({
      method: 'GET',
      url: `http://admin.test/admin/v2/namespaces/t/ns${suffix}`,
    });
    expect(JSON.parse(result.stdout)).toEqual(printed);
  });

  it('reset-cursor needs exactly one of -t and -m', async () => {
    const neither = await cli([...admin, 'topics', 'reset-cursor', 't/ns/x', '-s', 'b']);
    const both = await cli([
      ...admin,
      'topics',
      'reset-cursor',
      't/ns/x',
      '-s',
      'b',
      '-t',
      '1h',
      '-m',
      '1:2',
    ]);

    expect([neither.code, both.code]).toEqual([1, 1]);
    expect(neither.stderr).toContain('Give either -t/--time or -m/--messageId');
    expect(neither.requests.length + both.requests.length).toBe(0);
  });

  it('tenants create without -c asks the server for its clusters, as pulsar-admin', async () => {
    const result = await cli([...admin, 'tenants', 'create', 'acme'], {
      respond: (request) => (request.method === 'GET' ? jsonResponse(['standalone']) : noContent()),
    });

    expect(result.code).toBe(0);
    expect(result.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET http://admin.test/admin/v2/clusters',
      'PUT http://admin.test/admin/v2/tenants/acme',
    ]);
    expect(result.requests[1]!.body).toBe('{"adminRoles":[],"allowedClusters":["standalone"]}');
  });

  it.each([
    [
      ['tenants', 'list'],
      ['public', 'acme'],
      ['public', 'acme'],
    ],
    [['namespaces', 'list', 'acme'], ['acme/a'], ['acme/a']],
    [['topics', 'partitioned-stats', 't/ns/x', '--per-partition'], { msgInCounter: 3 }, { msgInCounter: 3 }],
    [
      ['tenants', 'get', 'acme'],
      { adminRoles: [], allowedClusters: ['standalone'] },
      { adminRoles: [], allowedClusters: ['standalone'] },
    ],
  ])('%j --output json prints one JSON document', async (argv, answer, printed) => {
    const result = await cli([...admin, ...argv, '--output', 'json'], {
      respond: () => jsonResponse(answer),
    });

    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(printed);
  });

  it('--output json turns a confirmation and a list of messages into one document each; text is the default', async () => {
    const created = await cli([...admin, 'topics', 'create', 't/ns/x', '--output', 'json']);
    const text = await cli([...admin, 'topics', 'create', 't/ns/x']);
    const peeked = await cli(
      [...admin, 'topics', 'peek-messages', 't/ns/x', '-s', 'b', '-n', '2', '--output', 'json'],
      {
        respond: () => jsonResponse({ payload: 'x' }),
      },
    );
    const bad = await cli([...admin, 'topics', 'create', 't/ns/x', '--output', 'yaml']);

    expect(JSON.parse(created.stdout)).toEqual({ message: 'Created topic persistent://t/ns/x' });
    expect(text.stdout).toBe('Created topic persistent://t/ns/x\n');
    expect(Array.isArray(JSON.parse(peeked.stdout))).toBe(true);
    expect(bad.code).toBe(1);
    expect(bad.requests).toHaveLength(0);
  });

  it("finds the embedded stack's URL in the data directory and mints a superuser token with its secret", async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ackline-cli-'));
    const dataDir = join(cwd, 'data');
    const secret = 'local-secret-0123456789abcdef0123456789';
    mkdirSync(dataDir);
    writeFileSync(join(dataDir, 'endpoints.json'), JSON.stringify({ gateway: 'http://127.0.0.1:41234' }));
    writeFileSync(join(dataDir, 'token-secret'), `${secret}\n`);
    const env = { ACKLINE_DATA_DIR: 'data', ACKLINE_SUPERUSER_ROLES: 'root,admin' };

    const local = await cli(['tenants', 'list'], { cwd, env, respond: () => jsonResponse([]) });
    const elsewhere = await cli(['--admin-url', 'http://other.test', 'tenants', 'list'], {
      cwd,
      env,
      respond: () => jsonResponse([]),
    });

    expect(local.requests[0]!.url).toBe('http://127.0.0.1:41234/admin/v2/tenants');
    const token = (local.requests[0]!.headers.authorization as string).replace('Bearer ', '');
    const verified = await verifyWith(secretKeyFrom(secret), token);
    expect(verified.role).toBe('root');
    // The local secret never signs a call to another server.
    expect(elsewhere.requests[0]!.url).toBe('http://other.test/admin/v2/tenants');
    expect(elsewhere.requests[0]!.headers.authorization).toBeUndefined();
  });
});
