import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { run } from '../../shared/cli/main.ts';
import {
  AdminApi,
  NamespaceRef,
  parseMessageId,
  SUPERUSER_ROLE,
  TopicRef,
  tokenFor,
  uniqueRole,
} from '../support/admin-fixtures.ts';
import { REPO_ROOT } from '../support/embedded-process.ts';

// `ackline-admin` against the shared embedded stack over real HTTP: exit 0 on success, non-zero
// with the server's reason on stderr. Most cases run the CLI's `run` in-process (same code as the
// binary, real fetch); two spawn bin/ackline-admin.js to check the process exit code itself.

const url = inject('acklineUrl');
const api = AdminApi.shared();
const dirs: string[] = [];

afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI in-process, as `role` (or without a token), against the shared stack. */
async function cli(
  argv: readonly string[],
  options: { role?: string | null; env?: Record<string, string>; nowMs?: () => number } = {},
) {
  let stdout = '';
  let stderr = '';
  const role = options.role === undefined ? SUPERUSER_ROLE : options.role;
  const cwd = await mkdtemp(join(tmpdir(), 'ackline-cli-it-'));
  dirs.push(cwd);
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
    env: {
      ACKLINE_ADMIN_URL: url,
      ...(role === null ? {} : { ACKLINE_AUTH_TOKEN: tokenFor(role) }),
      ...options.env,
    },
    cwd,
    ...(options.nowMs ? { nowMs: options.nowMs } : {}),
  });
  return { code, stdout, stderr } satisfies CliResult;
}

/** Runs bin/ackline-admin.js as a child process. */
function spawnCli(argv: readonly string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'bin/ackline-admin.js'), ...argv], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('ackline-admin (the binary)', () => {
  it('exits 0 on success', async () => {
    const topic = TopicRef.unique('clibin');

    const result = await spawnCli(['topics', 'create', topic.shortName], {
      ACKLINE_ADMIN_URL: url,
      ACKLINE_AUTH_TOKEN: tokenFor(SUPERUSER_ROLE),
    });
    const metadata = await api.send('GET', `${topic.adminPath}/partitions`);

    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`Created topic ${topic.name}\n`);
    expect(metadata.body).toEqual({ partitions: 0 });
  });

  it("exits non-zero with the server's reason on stderr", async () => {
    const topic = TopicRef.unique('clibinfail');
    await api.createTopic(topic);

    const result = await spawnCli(['topics', 'create', topic.shortName], {
      ACKLINE_ADMIN_URL: url,
      ACKLINE_AUTH_TOKEN: tokenFor(SUPERUSER_ROLE),
    });

    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`ackline-admin: 409 Conflict: Topic ${topic.name} already exists\n`);
  });
});

describe('ackline-admin topics', () => {
  it('creates a partitioned topic, lists its partitions and deletes it', async () => {
    const topic = TopicRef.unique('cliparted');

    const created = await cli(['topics', 'create-partitioned-topic', topic.shortName, '-p', '2']);
    const listed = await cli(['topics', 'list', topic.namespace.name]);
    const deleted = await cli(['topics', 'delete', topic.name]);
    const listedAfter = await cli(['topics', 'list', topic.namespace.name]);

    expect(created).toEqual({
      code: 0,
      stdout: `Created partitioned topic ${topic.name} with 2 partitions\n`,
      stderr: '',
    });
    expect(listed).toEqual({
      code: 0,
      stdout: `${topic.partition(0).name}\n${topic.partition(1).name}\n`,
      stderr: '',
    });
    expect(deleted.code).toBe(0);
    expect(listedAfter).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('delete-partitioned-topic deletes a partitioned topic and refuses a non-partitioned one', async () => {
    const parted = TopicRef.unique('clidelparted');
    const single = TopicRef.unique('clidelsingle');
    await cli(['topics', 'create-partitioned-topic', parted.shortName, '-p', '3']);
    await cli(['topics', 'create', single.shortName]);

    const refused = await cli(['topics', 'delete-partitioned-topic', single.name]);
    const deleted = await cli(['topics', 'delete-partitioned-topic', parted.name]);
    const listed = await cli(['topics', 'list', parted.namespace.name]);
    const listedSingle = await cli(['topics', 'list', single.namespace.name]);

    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`404 Not Found: Partitioned topic ${single.name} does not exist`);
    expect(deleted).toEqual({ code: 0, stdout: `Deleted partitioned topic ${parted.name}\n`, stderr: '' });
    expect(listedSingle.stdout.split('\n')).toContain(single.name);
    expect(listed.stdout).not.toContain(parted.name);
  });

  it('creates, lists and deletes subscriptions', async () => {
    const topic = TopicRef.unique('clisubs');
    await api.createTopic(topic);

    const created = await cli([
      'topics',
      'create-subscription',
      topic.shortName,
      '-s',
      'billing',
      '--subscription-type',
      'Shared',
      '-m',
      'earliest',
    ]);
    const duplicate = await cli(['topics', 'create-subscription', topic.shortName, '-s', 'billing']);
    const listed = await cli(['topics', 'subscriptions', topic.shortName]);
    const stats = await api.stats(topic);
    const removed = await cli(['topics', 'unsubscribe', topic.shortName, '-s', 'billing']);
    const removedAgain = await cli(['topics', 'unsubscribe', topic.shortName, '-s', 'billing']);

    expect(created.code).toBe(0);
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toBe(
      `ackline-admin: 409 Conflict: Subscription billing already exists on topic ${topic.name}\n`,
    );
    expect(listed.stdout).toBe('billing\n');
    expect(stats.subscriptions.billing?.type).toBe('Shared');
    expect(removed.code).toBe(0);
    expect(removedAgain.code).toBe(1);
    expect(removedAgain.stderr).toMatch(/^ackline-admin: 404 Not Found: .*billing/);
  });

  it('prints stats, internal stats, peeked messages and a message by id as JSON', async () => {
    const topic = TopicRef.unique('clistats');
    await api.createTopic(topic);
    await api.createSubscription(topic, 'sub');
    const ids = await api.produce(topic, [{ payload: 'hello', key: 'k' }, { payload: 'world' }]);
    const { ledgerId, entryId } = parseMessageId(ids[1] as string);

    const stats = await cli(['topics', 'stats', topic.shortName]);
    const internal = await cli(['topics', 'stats-internal', topic.shortName]);
    const peeked = await cli(['topics', 'peek-messages', topic.shortName, '-s', 'sub', '-n', '1']);
    const byId = await cli(['topics', 'get-message-by-id', topic.shortName, '-l', ledgerId, '-e', entryId]);

    expect(stats.code).toBe(0);
    expect(JSON.parse(stats.stdout)).toMatchObject({
      msgInCounter: 2,
      subscriptions: { sub: { msgBacklog: 2 } },
    });
    expect(JSON.parse(internal.stdout)).toMatchObject({
      cursors: { sub: { markDeletePosition: `${ledgerId}:-1` } },
    });
    expect(JSON.parse(peeked.stdout)).toMatchObject({ messageId: ids[0], payload: 'hello', key: 'k' });
    expect(JSON.parse(byId.stdout)).toMatchObject({ messageId: ids[1], payload: 'world' });
  });

  it('skips messages of a subscription', async () => {
    const topic = TopicRef.unique('cliskip');
    await api.createTopic(topic);
    await api.createSubscription(topic, 'sub');
    await api.produceMany(topic, 3);

    const result = await cli(['topics', 'skip', topic.shortName, '-s', 'sub', '-n', '2']);
    const backlogs = await api.backlogs(topic);

    expect(result.code).toBe(0);
    expect(backlogs).toEqual({ sub: 1 });
  });
});

describe('ackline-admin topics acknowledgeMessage', () => {
  async function fixture(label: string) {
    const topic = TopicRef.unique(label);
    await api.createTopic(topic);
    await api.createSubscription(topic, 'a');
    await api.createSubscription(topic, 'b');
    await api.createSubscription(topic, 'x', { type: 'Exclusive' });
    const [id] = await api.produceMany(topic, 2);
    return { topic, ledgerId: parseMessageId(id as string).ledgerId };
  }

  it('acknowledges on the named subscriptions, exit 0', async () => {
    const { topic, ledgerId } = await fixture('cliack');

    const result = await cli([
      'topics',
      'acknowledgeMessage',
      topic.shortName,
      '-l',
      ledgerId,
      '-e',
      '0',
      '-s',
      'a,b',
    ]);
    const backlogs = await api.backlogs(topic);

    expect(result).toEqual({
      code: 0,
      stdout: `Acknowledged message ${ledgerId}:0 on subscriptions a, b of ${topic.name}\n`,
      stderr: '',
    });
    expect(backlogs).toEqual({ a: 1, b: 1, x: 2 });
  });

  it('prints the dry-run report and changes nothing', async () => {
    const { topic, ledgerId } = await fixture('clidry');

    const result = await cli([
      'topics',
      'acknowledgeMessage',
      topic.shortName,
      '-l',
      ledgerId,
      '-e',
      '1',
      '-s',
      'a',
      '--dry-run',
    ]);
    const backlogs = await api.backlogs(topic);

    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      messageId: `${ledgerId}:1:-1`,
      subscriptions: { a: { state: 'in backlog' } },
    });
    expect(backlogs).toEqual({ a: 2, b: 2, x: 2 });
  });

  it.each([
    [
      'an Exclusive subscription',
      ['-l', 'L', '-e', '0', '-s', 'a,x'],
      /^ackline-admin: 412 Precondition Failed: .*x \(Exclusive\)/,
    ],
    [
      'an unknown subscription',
      ['-l', 'L', '-e', '0', '-s', 'nobody'],
      /^ackline-admin: 404 Not Found: .*nobody/,
    ],
    [
      'a message that is not there',
      ['-l', 'L', '-e', '7'],
      /^ackline-admin: 404 Not Found: Message L:7 not found/,
    ],
  ])('exits 1 with the server reason for %s, acknowledging nothing', async (_label, options, reason) => {
    const { topic, ledgerId } = await fixture('clirefused');
    const argv = options.map((option) => (option === 'L' ? ledgerId : option));

    const result = await cli(['topics', 'acknowledgeMessage', topic.shortName, ...argv]);
    const backlogs = await api.backlogs(topic);

    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(new RegExp(reason.source.replace('L:', `${ledgerId}:`)));
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(backlogs).toEqual({ a: 2, b: 2, x: 2 });
  });

  it('exits 1 with 401 without a token and with 403 for a role without acknowledge_message', async () => {
    const { topic, ledgerId } = await fixture('cliauth');

    const anonymous = await cli(
      ['topics', 'acknowledgeMessage', topic.shortName, '-l', ledgerId, '-e', '0'],
      {
        role: null,
      },
    );
    const stranger = await cli(['topics', 'acknowledgeMessage', topic.shortName, '-l', ledgerId, '-e', '0'], {
      role: uniqueRole('cli'),
    });

    expect(anonymous.code).toBe(1);
    expect(anonymous.stderr).toMatch(/^ackline-admin: 401 Unauthorized: Unauthorized/);
    expect(stranger.code).toBe(1);
    expect(stranger.stderr).toMatch(/^ackline-admin: 403 Forbidden: .*acknowledge_message/);
  });

  it('shows the audit trail as JSON', async () => {
    const { topic, ledgerId } = await fixture('cliaudit');
    await cli(['topics', 'acknowledgeMessage', topic.shortName, '-l', ledgerId, '-e', '1', '-s', 'b']);

    const result = await cli(['topics', 'acknowledgeMessage-audit', topic.shortName]);

    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([
      expect.objectContaining({
        role: SUPERUSER_ROLE,
        position: `${ledgerId}:1`,
        subscriptions: ['b'],
        outcome: 'acknowledged',
      }),
    ]);
  });
});

describe('ackline-admin permissions and tokens', () => {
  it('grants, lists and revokes topic permissions; a token minted by the CLI authenticates the role', async () => {
    const topic = TopicRef.unique('cliperm');
    await api.createTopic(topic);
    const role = uniqueRole('cli');

    const granted = await cli([
      'topics',
      'grant-permission',
      topic.shortName,
      '--role',
      role,
      '--actions',
      'produce',
    ]);
    const listed = await cli(['topics', 'permissions', topic.shortName]);
    const minted = await cli(['tokens', 'create', '--subject', role], {
      role: null,
      env: { ACKLINE_TOKEN_SECRET: inject('acklineTokenSecret') },
    });
    const produced = await api
      .withToken(minted.stdout.trim())
      .send('POST', topic.producePath, { body: { messages: [{ payload: 'x' }] } });
    const revoked = await cli(['topics', 'revoke-permission', topic.shortName, '--role', role]);
    const producedAfter = await api
      .withToken(minted.stdout.trim())
      .send('POST', topic.producePath, { body: { messages: [{ payload: 'x' }] } });

    expect(granted.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual({ [role]: ['produce'] });
    expect(minted.code).toBe(0);
    expect(produced.status).toBe(200);
    expect(revoked.code).toBe(0);
    expect(producedAfter.status).toBe(403);
  });

  it('grants and lists namespace permissions; a non-superuser is refused with 403', async () => {
    const topic = TopicRef.unique('clinsperm');
    await api.createTopic(topic);
    const role = uniqueRole('clins');

    const refused = await cli(
      ['namespaces', 'grant-permission', topic.namespace.name, '--role', role, '--actions', 'consume'],
      { role },
    );
    const granted = await cli([
      'namespaces',
      'grant-permission',
      topic.namespace.name,
      '--role',
      role,
      '--actions',
      'consume,acknowledge_message',
    ]);
    const listed = await cli(['namespaces', 'permissions', topic.namespace.name]);

    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^ackline-admin: 403 Forbidden: .*superuser/);
    expect(granted.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual({ [role]: ['acknowledge_message', 'consume'] });
  });

  it('tokens minted by the CLI expire: valid before --expiry-time, refused (401) after', async () => {
    const topic = TopicRef.unique('cliexpired');
    const secretEnv = { ACKLINE_TOKEN_SECRET: inject('acklineTokenSecret') };
    const fresh = await cli(['tokens', 'create', '--subject', SUPERUSER_ROLE, '--expiry-time', '1h'], {
      role: null,
      env: secretEnv,
    });
    // Minted two hours ago with a one-hour lifetime.
    const stale = await cli(['tokens', 'create', '--subject', SUPERUSER_ROLE, '--expiry-time', '1h'], {
      role: null,
      env: secretEnv,
      nowMs: () => Date.now() - 7_200_000,
    });

    const created = await api.withToken(fresh.stdout.trim()).send('PUT', topic.adminPath);
    const refused = await api.withToken(stale.stdout.trim()).send('GET', `${topic.adminPath}/stats`);

    expect(created.status).toBe(204);
    expect(refused.status).toBe(401);
  });
});

describe('ackline-admin tenants and namespaces (issue 13)', () => {
  it('creates a tenant and a namespace, lists them as JSON, and deletes them; refusals exit 1 with the reason', async () => {
    const tenant = uniqueRole('cli-tenant');

    const created = await cli(['tenants', 'create', tenant, '-r', 'ops']);
    const namespace = await cli(['namespaces', 'create', `${tenant}/ns`]);
    const tenants = await cli(['tenants', 'list', '--output', 'json']);
    const info = await cli(['tenants', 'get', tenant, '--output', 'json']);
    const namespaces = await cli(['namespaces', 'list', tenant, '--output', 'json']);
    const busy = await cli(['tenants', 'delete', tenant]);
    const nsDeleted = await cli(['namespaces', 'delete', `${tenant}/ns`]);
    const deleted = await cli(['tenants', 'delete', tenant, '--output', 'json']);

    expect([created.code, namespace.code, tenants.code, info.code, namespaces.code]).toEqual([0, 0, 0, 0, 0]);
    expect(JSON.parse(tenants.stdout)).toEqual(expect.arrayContaining(['public', tenant]));
    expect(JSON.parse(info.stdout)).toEqual({ adminRoles: ['ops'], allowedClusters: ['standalone'] });
    expect(JSON.parse(namespaces.stdout)).toEqual([`${tenant}/ns`]);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain(`409 Conflict: The tenant ${tenant} still has active namespaces`);
    expect(nsDeleted.code).toBe(0);
    expect(JSON.parse(deleted.stdout)).toEqual({ message: `Deleted tenant ${tenant}` });
  });

  it('sets, shows and removes a namespace retention and message TTL', async () => {
    const namespace = NamespaceRef.unique('cli-policies').name;

    const setRetention = await cli([
      'namespaces',
      'set-retention',
      namespace,
      '--size',
      '10G',
      '--time',
      '3h',
    ]);
    const setTTL = await cli(['namespaces', 'set-message-ttl', namespace, '--messageTTL', '1h']);
    const retention = await cli(['namespaces', 'get-retention', namespace]);
    const ttl = await cli(['namespaces', 'get-message-ttl', namespace]);
    const removed = [
      await cli(['namespaces', 'remove-retention', namespace]),
      await cli(['namespaces', 'remove-message-ttl', namespace]),
    ];
    const noRetention = await cli(['namespaces', 'get-retention', namespace]);
    const noTTL = await cli(['namespaces', 'get-message-ttl', namespace, '--output', 'json']);

    expect([setRetention.code, setTTL.code, ...removed.map((r) => r.code)]).toEqual([0, 0, 0, 0]);
    expect(JSON.parse(retention.stdout)).toEqual({ retentionTimeInMinutes: 180, retentionSizeInMB: 10_240 });
    expect(JSON.parse(ttl.stdout)).toBe(3600);
    expect(JSON.parse(noRetention.stdout)).toBeNull();
    expect(JSON.parse(noTTL.stdout)).toBeNull();
  });

  it("sets, shows and removes a topic's own retention and message TTL; -ap shows the namespace's once it has none", async () => {
    const topic = TopicRef.unique('cli-topic-policies');
    await cli(['topics', 'create', topic.name]);
    await cli(['namespaces', 'set-retention', topic.namespace.name, '-s', '-1', '-t', '2d']);
    await cli(['namespaces', 'set-message-ttl', topic.namespace.name, '--messageTTL', '600']);

    const set = [
      await cli(['topics', 'set-retention', topic.name, '-s', '16G', '-t', '90m']),
      await cli(['topics', 'set-message-ttl', topic.name, '-t', '2h']),
    ];
    const own = [
      await cli(['topics', 'get-retention', topic.name]),
      await cli(['topics', 'get-message-ttl', topic.name, '--output', 'json']),
    ];
    const removed = [
      await cli(['topics', 'remove-retention', topic.name]),
      await cli(['topics', 'remove-message-ttl', topic.name]),
    ];
    const ownAfter = [
      await cli(['topics', 'get-retention', topic.name]),
      await cli(['topics', 'get-message-ttl', topic.name]),
    ];
    const applied = [
      await cli(['topics', 'get-retention', topic.name, '-ap']),
      await cli(['topics', 'get-message-ttl', topic.name, '--applied']),
    ];
    const refused = await cli(['topics', 'set-retention', topic.name, '-s', 'lots', '-t', '1h']);

    expect(set).toEqual([
      {
        code: 0,
        stdout: `Set the retention of ${topic.name} to 90 minutes and 16384 MB\n`,
        stderr: '',
      },
      { code: 0, stdout: `Set the message TTL of ${topic.name} to 7200 s\n`, stderr: '' },
    ]);
    expect(own.map((result) => JSON.parse(result.stdout))).toEqual([
      { retentionTimeInMinutes: 90, retentionSizeInMB: 16_384 },
      7200,
    ]);
    expect(removed.map((result) => result.code)).toEqual([0, 0]);
    expect(ownAfter.map((result) => JSON.parse(result.stdout))).toEqual([null, null]);
    expect(applied.map((result) => JSON.parse(result.stdout))).toEqual([
      { retentionTimeInMinutes: 2880, retentionSizeInMB: -1 },
      600,
    ]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("Invalid size 'lots'");
  });

  it('sets, shows and removes the subscription limits with pulsar-admin names (-m, -c); a topic at its limit refuses with the reason', async () => {
    const topic = TopicRef.unique('cli-limits');
    await cli(['topics', 'create', topic.name]);
    const namespace = topic.namespace.name;

    const set = [
      await cli(['namespaces', 'set-max-subscriptions-per-topic', namespace, '-m', '1']),
      await cli([
        'namespaces',
        'set-max-consumers-per-subscription',
        namespace,
        '--max-consumers-per-subscription',
        '4',
      ]),
      await cli(['topics', 'set-max-consumers-per-subscription', topic.name, '-c', '3']),
    ];
    const shown = [
      await cli(['namespaces', 'get-max-subscriptions-per-topic', namespace]),
      await cli(['namespaces', 'get-max-consumers-per-subscription', namespace]),
      await cli(['topics', 'get-max-consumers-per-subscription', topic.name]),
      await cli(['topics', 'get-max-subscriptions-per-topic', topic.name]),
      await cli(['topics', 'get-max-subscriptions-per-topic', topic.name, '-ap']),
    ];
    const first = await cli(['topics', 'create-subscription', topic.name, '-s', 'a']);
    const second = await cli(['topics', 'create-subscription', topic.name, '-s', 'b']);
    const removed = [
      await cli(['topics', 'remove-max-consumers-per-subscription', topic.name]),
      await cli(['namespaces', 'remove-max-subscriptions-per-topic', namespace]),
      await cli(['namespaces', 'remove-max-consumers-per-subscription', namespace]),
    ];
    const applied = [
      await cli(['topics', 'get-max-subscriptions-per-topic', topic.name, '--applied']),
      await cli(['topics', 'get-max-consumers-per-subscription', topic.name, '-ap']),
    ];
    const invalid = await cli(['topics', 'set-max-subscriptions-per-topic', topic.name, '-m', '-2']);

    expect(set.map((result) => result.stdout)).toEqual([
      `Set maxSubscriptionsPerTopic of ${namespace} to 1\n`,
      `Set maxConsumersPerSubscription of ${namespace} to 4\n`,
      `Set maxConsumersPerSubscription of ${topic.name} to 3\n`,
    ]);
    expect(shown.map((result) => JSON.parse(result.stdout))).toEqual([1, 4, 3, null, 1]);
    expect(first.code).toBe(0);
    expect(second.code).not.toBe(0);
    expect(second.stderr).toContain(
      `412 Precondition Failed: Exceed the maximum number of subscriptions of the topic: ${topic.name}`,
    );
    expect(removed.map((result) => result.code)).toEqual([0, 0, 0]);
    expect(applied.map((result) => JSON.parse(result.stdout))).toEqual([1000, 1000]);
    expect(invalid.code).not.toBe(0);
  });
});
