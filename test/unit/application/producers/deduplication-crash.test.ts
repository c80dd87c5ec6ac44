// Producer deduplication's crash window (issue 23): a publisher that dies after its append and
// before its record. A retry past DEDUPLICATION_CLAIM_TIMEOUT_MS reads what the dead publisher
// stored and answers it as a duplicate. Then a model-based check (fast-check): a producer whose
// publishes are answered, lost, or die at any step, and that retries until answered, stores each
// sequence id exactly once, under the MessageId it was answered.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEDUPLICATION_CLAIM_TIMEOUT_MS,
  deduplicate,
} from '../../../../shared/application/producers/deduplication.ts';
import { lastSequenceId } from '../../../../shared/application/producers/last-sequence-id.ts';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { createTopic } from '../../../../shared/application/topics/manage-topics.ts';
import type { UseCasePorts } from '../../../../shared/application/use-case-ports.ts';
import { ServiceUnavailableError } from '../../../../shared/domain/errors.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import type { NewEntry, StoredEntry } from '../../../../shared/ports/ledger.ts';
import { InMemoryLedger } from '../../../support/in-memory-ledger.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

const admin: Principal = { role: 'admin', superuser: true };

async function world(maxEntriesPerLedger = 1000) {
  const clock = new ManualClock(1_700_000_000_000);
  const { ports } = inMemoryPorts({ clock, ledger: new InMemoryLedger(maxEntriesPerLedger) });
  const topic = TopicName.parse('persistent://public/default/dedup-crash');
  await createTopic(ports, admin, topic, 0);
  await ports.policies.update({ topic: topic.toString() }, { deduplicationEnabled: true });
  return { clock, ports, topic };
}

const sequenced = (ids: readonly number[]): NewEntry[] =>
  ids.map((sequenceId) => ({ payload: `m${sequenceId}`, properties: {}, producerName: 'p', sequenceId }));

function publish(ports: UseCasePorts, topic: TopicName, ids: readonly number[]) {
  return publishMessages(ports, admin, topic, { messages: sequenced(ids), router: new RoundRobinRouter(0) });
}

/** A publish whose invocation dies after its append, before its record (the crash window). */
async function appendThenDie(ports: UseCasePorts, topic: TopicName, ids: readonly number[]) {
  const entries = sequenced(ids);
  const group = await deduplicate(ports, topic, entries);
  const fresh = group.fresh.map((index) => entries[index] as NewEntry);
  if (fresh.length > 0) await ports.ledger.append(topic, fresh, ports.clock.nowMs());
}

/** A publish whose invocation dies after its claim, before its append. */
async function claimThenDie(ports: UseCasePorts, topic: TopicName, ids: readonly number[]) {
  await deduplicate(ports, topic, sequenced(ids));
}

/** Every stored entry of the partition, in order. */
async function storedEntries(ports: UseCasePorts, topic: TopicName): Promise<StoredEntry[]> {
  const state = await ports.ledger.state(topic);
  const all: StoredEntry[] = [];
  for (const ledger of state?.ledgers ?? []) {
    all.push(...(await ports.ledger.readEntries(ledger.ledgerId, 0n, ledger.entries - 1n)));
  }
  return all;
}

describe('producer deduplication: the crash window', () => {
  it.each([
    ['one ledger', 1000],
    ['an append across a rollover', 3],
  ])('a publisher that died after its append and before its record: the retry after the timeout stores nothing again (%s)', async (_, maxEntriesPerLedger) => {
    const { clock, ports, topic } = await world(maxEntriesPerLedger);
    await publish(ports, topic, [0, 1]);
    await appendThenDie(ports, topic, [2, 3, 4]);
    const stored = await storedEntries(ports, topic);

    const tooSoon = await publish(ports, topic, [2, 3, 4]).catch((error: unknown) => error);
    clock.advance(DEDUPLICATION_CLAIM_TIMEOUT_MS + 1);
    const retried = await publish(ports, topic, [2, 3, 4, 5]);

    expect(tooSoon).toBeInstanceOf(ServiceUnavailableError);
    expect(retried.slice(0, 3).map((result) => result.messageId)).toEqual(
      stored.slice(2).map((entry) => `${entry.position.toString()}:-1`),
    );
    const after = await storedEntries(ports, topic);
    expect(after.map((entry) => entry.sequenceId)).toEqual([0, 1, 2, 3, 4, 5]);
    expect((await lastSequenceId(ports, admin, topic, 'p')).lastSequenceId).toBe(5);
  });

  it('a publisher that died after its claim, before its append: the retry after the timeout stores the messages once', async () => {
    const { clock, ports, topic } = await world();
    await publish(ports, topic, [0]);
    await claimThenDie(ports, topic, [1, 2]);

    clock.advance(DEDUPLICATION_CLAIM_TIMEOUT_MS + 1);
    const retried = await publish(ports, topic, [1, 2]);
    const again = await publish(ports, topic, [1, 2]);

    expect(retried.every((result) => result.errorCode === 0)).toBe(true);
    expect(again).toEqual(retried);
    expect((await storedEntries(ports, topic)).map((entry) => entry.sequenceId)).toEqual([0, 1, 2]);
  });
});

type Fate = 'answered' | 'answerLost' | 'diedAfterAppend' | 'diedAfterClaim';

interface Step {
  readonly fate: Fate;
  /** How many of the producer's next messages the attempt sends (at least the unanswered ones). */
  readonly batch: number;
  /** How long the producer waits before the attempt, ms. */
  readonly waitMs: number;
}

const steps = fc.array(
  fc.record({
    fate: fc.constantFrom<Fate>('answered', 'answerLost', 'diedAfterAppend', 'diedAfterClaim'),
    batch: fc.integer({ min: 1, max: 4 }),
    waitMs: fc.constantFrom(0, 1_000, DEDUPLICATION_CLAIM_TIMEOUT_MS + 1),
  }),
  { minLength: 1, maxLength: 25 },
);

/**
 * Runs a producer through `script`: each step sends its unanswered messages (plus new ones, up to
 * `batch`) and meets its fate; a 503 (a claim still fresh) is an attempt that did nothing. Then it
 * retries, waiting out the claim timeout, until every message is answered.
 * @returns the MessageId each sequence id was answered with.
 */
async function runProducer(
  ports: UseCasePorts,
  clock: ManualClock,
  topic: TopicName,
  script: readonly Step[],
) {
  const answered = new Map<number, string>();
  let next = 0;
  const attempt = async (ids: number[], fate: Fate) => {
    if (fate === 'diedAfterAppend') return appendThenDie(ports, topic, ids);
    if (fate === 'diedAfterClaim') return claimThenDie(ports, topic, ids);
    const results = await publish(ports, topic, ids);
    if (fate !== 'answered') return;
    results.forEach((result, i) => {
      answered.set(ids[i] as number, result.messageId);
    });
  };
  const unanswered = () => Array.from({ length: next }, (_, id) => id).filter((id) => !answered.has(id));
  for (const step of script) {
    clock.advance(step.waitMs);
    const ids = unanswered();
    while (ids.length < step.batch) ids.push(next++);
    await attempt(ids, step.fate).catch((error: unknown) => {
      if (!(error instanceof ServiceUnavailableError)) throw error;
    });
  }
  for (let tries = 0; unanswered().length > 0; tries++) {
    if (tries > 3) throw new Error(`still unanswered: ${unanswered().join(',')}`);
    clock.advance(DEDUPLICATION_CLAIM_TIMEOUT_MS + 1);
    await attempt(unanswered(), 'answered');
  }
  return answered;
}

describe('producer deduplication: model-based (fast-check)', () => {
  it('whatever is lost or dies, each sequence id is stored once, under the MessageId it was answered', async () => {
    await fc.assert(
      fc.asyncProperty(steps, fc.constantFrom(3, 1000), async (script, maxEntriesPerLedger) => {
        const { clock, ports, topic } = await world(maxEntriesPerLedger);

        const answered = await runProducer(ports, clock, topic, script);

        const stored = await storedEntries(ports, topic);
        const ids = stored.map((entry) => entry.sequenceId as number);
        expect(ids).toEqual([...answered.keys()].sort((a, b) => a - b));
        for (const entry of stored) {
          expect(answered.get(entry.sequenceId as number)).toBe(`${entry.position.toString()}:-1`);
        }
      }),
      { numRuns: 150, seed: 23 },
    );
  });
});
