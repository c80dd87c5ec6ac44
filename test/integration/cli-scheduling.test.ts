import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { run } from '../../shared/cli/main.ts';
import { AdminApi, parseMessageId, SUPERUSER_ROLE, TopicRef, tokenFor } from '../support/admin-fixtures.ts';
import { ConsumerApi, type TimedMessage } from '../support/consumer-fixtures.ts';

// Issue 24, criterion 7: `ackline-admin topics scheduled|pending|reschedule` against the shared
// embedded stack, with --output json.

const url = inject('acklineUrl');
const admin = AdminApi.shared();
const consumers = ConsumerApi.shared();
const dirs: string[] = [];

afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function cli(argv: readonly string[]) {
  let stdout = '';
  let stderr = '';
  const cwd = await mkdtemp(join(tmpdir(), 'ackline-cli-sched-'));
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
    env: { ACKLINE_ADMIN_URL: url, ACKLINE_AUTH_TOKEN: tokenFor(SUPERUSER_ROLE) },
    cwd,
  });
  return { code, stdout, stderr };
}

describe('ackline-admin topics scheduled|pending|reschedule', () => {
  it('lists what waits and who holds what, and reschedules one message, as JSON', async () => {
    const topic = TopicRef.unique('clisched');
    const consumer = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      negativeAckRedeliveryDelayMs: 120_000,
    });
    await admin.produce(topic, [{ payload: 'a' }, { payload: 'b' }]);
    const got: TimedMessage[] = [];
    for (let poll = 0; poll < 10 && got.length < 2; poll++) got.push(...(await consumer.receive(2)));
    const [nacked, held] = got as [TimedMessage, TimedMessage];
    await consumer.nack([nacked]);

    const scheduled = await cli(['topics', 'scheduled', topic.shortName, '-s', 'sub', '--output', 'json']);
    const pending = await cli([
      'topics',
      'pending',
      topic.shortName,
      '-s',
      'sub',
      '-c',
      consumer.id,
      '--output',
      'json',
    ]);
    const histogram = await cli([
      'topics',
      'scheduled',
      topic.shortName,
      '-s',
      'sub',
      '--histogram',
      '3600',
      '--output',
      'json',
    ]);
    const dry = await cli([
      'topics',
      'reschedule',
      topic.shortName,
      '-s',
      'sub',
      '-m',
      nacked.messageId,
      '-t',
      '+3600s',
      '--dry-run',
      '--output',
      'json',
    ]);
    const preview = await cli([
      'topics',
      'preview',
      topic.shortName,
      '-s',
      'sub',
      '-m',
      nacked.messageId,
      '-n',
      '2',
      '--output',
      'json',
    ]);
    const moved = await cli([
      'topics',
      'reschedule',
      topic.shortName,
      '-s',
      'sub',
      '-m',
      nacked.messageId,
      '-t',
      '+3600s',
    ]);
    const refused = await cli([
      'topics',
      'reschedule',
      topic.shortName,
      '-s',
      'sub',
      '-m',
      held.messageId,
      '-t',
      '+60s',
    ]);
    const badTime = await cli([
      'topics',
      'reschedule',
      topic.shortName,
      '-s',
      'sub',
      '-m',
      held.messageId,
      '-t',
      'tomorrow',
    ]);

    expect([scheduled.code, pending.code, histogram.code, dry.code, moved.code]).toEqual([0, 0, 0, 0, 0]);
    expect(JSON.parse(scheduled.stdout).messages).toEqual([
      expect.objectContaining({ messageId: nacked.messageId, reason: 'nack', redeliveryCount: 1 }),
    ]);
    expect(JSON.parse(pending.stdout).messages).toEqual([
      expect.objectContaining({
        messageId: held.messageId,
        consumer: consumer.id,
        comesBackBecause: 'lease',
      }),
    ]);
    expect(JSON.parse(histogram.stdout)).toMatchObject({ bucketSeconds: 3600, total: 1 });
    expect(JSON.parse(dry.stdout)).toMatchObject({ messageId: nacked.messageId, dryRun: true });
    // The pending redelivery first, at the due time `scheduled` lists; the next after the delay.
    const { dueAt } = JSON.parse(scheduled.stdout).messages[0] as { dueAt: number };
    expect(JSON.parse(preview.stdout)).toMatchObject({
      messageId: nacked.messageId,
      consumer: consumer.id,
      redeliveryCount: 1,
      nack: [
        { redeliveryCount: 1, earliestMs: dueAt, latestMs: dueAt },
        { redeliveryCount: 2, earliestMs: dueAt + 120_000, latestMs: dueAt + 120_000 },
      ],
      ackTimeout: [],
    });
    expect(moved.stdout).toContain(`Rescheduled ${nacked.messageId} on sub`);
    // acknowledgeMessage's dry run says what scheduled and pending say, not the publish-time deliverAt.
    const dryAck = async (id: string) => {
      const { ledgerId, entryId } = parseMessageId(id);
      return (await admin.acknowledge(topic, { ledgerId, entryId, subscriptionNames: ['sub'], dryRun: true }))
        .body as { subscriptions: { sub: unknown } };
    };
    const movedDue = (
      (await admin.expectStatus(200, 'GET', `${topic.adminPath}/subscription/sub/scheduled`)).body as {
        messages: { dueAt: number }[];
      }
    ).messages[0]?.dueAt;
    expect((await dryAck(nacked.messageId)).subscriptions.sub).toEqual({
      state: 'waiting',
      dueAt: movedDue,
      reason: 'rescheduled',
    });
    const heldBack = (JSON.parse(pending.stdout).messages[0] as { comesBackAt: number }).comesBackAt;
    expect((await dryAck(held.messageId)).subscriptions.sub).toEqual({
      state: 'held',
      consumer: consumer.id,
      comesBackAt: heldBack,
    });
    const after = (await admin.expectStatus(200, 'GET', `${topic.adminPath}/subscription/sub/scheduled`))
      .body as {
      messages: { reason: string }[];
    };
    expect(after.messages.map((m) => m.reason)).toEqual(['rescheduled']);
    expect([refused.code, refused.stderr]).toEqual([1, expect.stringContaining('409 Conflict')]);
    const many = await cli([
      'topics',
      'acknowledgeMessages',
      topic.shortName,
      '-m',
      `${nacked.messageId},${held.messageId}`,
      '-s',
      'sub',
    ]);
    expect([many.code, many.stdout]).toEqual([0, expect.stringContaining('Acknowledged 2 messages')]);
    expect((await admin.stats(topic)).subscriptions.sub).toMatchObject({ msgBacklog: 0 });
    expect([badTime.code, badTime.stderr]).toEqual([
      1,
      expect.stringContaining('--deliver-at must be epoch milliseconds'),
    ]);
  });

  it('previews a held message: its ack-timeout list starts when pending says it comes back', async () => {
    const topic = TopicRef.unique('clipreview');
    const consumer = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      ackTimeoutMs: 600_000,
    });
    await admin.produce(topic, [{ payload: 'a' }]);
    const got: TimedMessage[] = [];
    for (let poll = 0; poll < 10 && got.length < 1; poll++) got.push(...(await consumer.receive(1)));
    const [held] = got as [TimedMessage];

    const pending = (await admin.expectStatus(200, 'GET', `${topic.adminPath}/subscription/sub/pending`))
      .body as { messages: { comesBackAt: number; redeliveryCount: number }[] };
    const preview = await cli([
      'topics',
      'preview',
      topic.shortName,
      '-s',
      'sub',
      '-m',
      held.messageId,
      '-n',
      '2',
      '--output',
      'json',
    ]);

    const comesBackAt = pending.messages[0]?.comesBackAt as number;
    expect(JSON.parse(preview.stdout)).toMatchObject({
      redeliveryCount: 0,
      ackTimeout: [
        { redeliveryCount: 1, earliestMs: comesBackAt, latestMs: comesBackAt },
        { redeliveryCount: 2, earliestMs: comesBackAt + 600_000 },
      ],
    });
  });
});
