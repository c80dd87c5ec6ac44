import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyToken } from '../../../shared/adapters/hs256-tokens.ts';
import { run } from '../../../shared/cli/main.ts';
import type { FetchFunction } from '../../../shared/client/admin-http.ts';
import { fakeFetch, jsonResponse, noContent, type Responder, reasonResponse } from '../client/fake-fetch.ts';

const BIG_ID = '18446744073709551615';
const NOW_MS = Date.UTC(2030, 0, 1);

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
    [
      ['create-subscription', 't/ns/x', '-s', 'sub', '--subscription-type', 'Key_Shared', '-m', 'earliest'],
      'PUT',
      `${base}/subscription/sub?subscriptionType=Key_Shared`,
      '{"initialPosition":"Earliest"}',
    ],
    [['unsubscribe', 't/ns/x', '-s', 'sub'], 'DELETE', `${base}/subscription/sub`, undefined],
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
    const claims = verifyToken(result.stdout.trim(), 'k3y', Date.now());
    expect(claims).toEqual({ sub: 'ops' });
    expect(result.requests).toHaveLength(0);
  });

  it.each([
    ['1h', 3_600],
    ['30d', 2_592_000],
    ['90', 90],
  ])('sets exp from --expiry-time %s', async (expiry, seconds) => {
    const result = await cli(['tokens', 'create', '-s', 'ops', '--expiry-time', expiry, '--secret-key', 'k']);

    expect(verifyToken(result.stdout.trim(), 'k', NOW_MS).exp).toBe(NOW_MS / 1000 + seconds);
  });

  it('takes the secret from ACKLINE_TOKEN_SECRET, then from <ACKLINE_DATA_DIR>/token-secret', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ackline-cli-'));
    writeFileSync(join(cwd, 'token-secret'), 'from-file\n');

    const fromEnv = await cli(['tokens', 'create', '-s', 'a'], { env: { ACKLINE_TOKEN_SECRET: 'from-env' } });
    const fromFile = await cli(['tokens', 'create', '-s', 'a'], { env: { ACKLINE_DATA_DIR: '.' }, cwd });

    expect(verifyToken(fromEnv.stdout.trim(), 'from-env', NOW_MS).sub).toBe('a');
    expect(verifyToken(fromFile.stdout.trim(), 'from-file', NOW_MS).sub).toBe('a');
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
