import { describe, expect, it } from 'vitest';
import { type HeldMessage, type PathClient, PathOracle } from '../../../support/sim/consumer-path-oracle.ts';

/**
 * The consumer-path oracle's nack rule (consumer-path-oracle.ts): a redelivery after a nack that
 * released the entry comes no earlier than its backoff; a nack of what the consumer's own
 * redeliverUnacknowledged gave back meanwhile released nothing, so what comes back at once is no
 * violation (`npm run sim -- --path consumer --types Key_Shared --seed 6` reported one).
 */
const T0 = 1_700_000_000_000;

function world() {
  const client: PathClient = {
    index: 0,
    id: 'c0',
    state: 'open',
    held: [],
    releasedSinceSeq: 0,
    mustRewind: false,
  };
  const oracle = new PathOracle(
    {
      type: 'Key_Shared',
      skewMs: 0,
      ackTimeoutDelayMs: () => 0,
      nackDelayMs: (count) => 1_000 * 2 ** count,
    },
    [client],
  );
  const deliver = (count: number, atMs: number, startSeq: number): HeldMessage => {
    const message: HeldMessage = {
      position: '2:0',
      messageId: '2:0:1',
      handle: `h${count}`,
      count,
      key: 'k2',
      atMs,
      seq: oracle.next(),
    };
    oracle.delivered(client, message, startSeq);
    client.held.push(message);
    return message;
  };
  return { client, oracle, deliver };
}

describe('consumer path oracle: nacks', () => {
  it('reports a redelivery before the nack backoff of the count it was handed with', () => {
    const { client, oracle, deliver } = world();
    const first = deliver(0, T0, oracle.next());
    const startSeq = oracle.next();
    oracle.nack(client, first, { startSeq, atMs: T0 + 500, endSeq: oracle.next() });
    expect(() => deliver(1, T0 + 1_000, oracle.next())).toThrow(
      /^I5: 2:0 redelivered at \d+, before its nack backoff ended at \d+/,
    );
  });

  it('accepts a redelivery after the backoff', () => {
    const { client, oracle, deliver } = world();
    const first = deliver(0, T0, oracle.next());
    oracle.nack(client, first, { startSeq: oracle.next(), atMs: T0 + 500, endSeq: oracle.next() });
    expect(() => deliver(1, T0 + 1_500, oracle.next())).not.toThrow();
  });

  it('accepts a redelivery at once when the consumer redelivered everything after the receive that handed it over', () => {
    const { client, oracle, deliver } = world();
    // A redeliverUnacknowledged started, a receive alongside it returned 2:0, then it ended.
    oracle.next();
    const first = deliver(0, T0, oracle.next());
    client.releasedSinceSeq = oracle.next();
    client.gaveBackAtSeq = client.releasedSinceSeq;
    const receiveStart = oracle.next();
    oracle.nack(client, first, { startSeq: oracle.next(), atMs: T0 + 500, endSeq: oracle.next() });
    expect(() => deliver(1, T0 + 500, receiveStart)).not.toThrow();
  });

  it('still holds a nack to its backoff when the redeliver ended before the delivery', () => {
    const { client, oracle, deliver } = world();
    client.gaveBackAtSeq = oracle.next();
    const first = deliver(0, T0, oracle.next());
    oracle.nack(client, first, { startSeq: oracle.next(), atMs: T0 + 500, endSeq: oracle.next() });
    expect(() => deliver(1, T0 + 500, oracle.next())).toThrow(/^I5: /);
  });
});
