import { describe, expect, it } from 'vitest';
import { tokenFor } from '../../../shared/application/delivery.ts';
import { MAX_INLINE_BYTES } from '../../../shared/domain/delivery-token.ts';
import { Position } from '../../../shared/domain/position.ts';
import { TopicName } from '../../../shared/domain/topic-name.ts';
import type { StoredEntry } from '../../../shared/ports/ledger.ts';

const partition = TopicName.parse('persistent://public/default/orders');

function entry(payload: string): StoredEntry {
  return {
    position: Position.of('7', '3'),
    payload,
    key: 'customer-42',
    properties: { a: 'b' },
    publishTimeMs: 1,
    deliverAtMs: 2,
  };
}

describe('tokenFor', () => {
  it('carries a small message inline', () => {
    expect(tokenFor(partition, entry('small'), 1).message).toEqual({
      payload: 'small',
      key: 'customer-42',
      properties: { a: 'b' },
      publishTimeMs: 1,
      deliverAtMs: 2,
    });
  });

  it('sends a large one by reference, keeping the key (Key_Shared routing) and deliverAt (never early)', () => {
    const token = tokenFor(partition, entry('x'.repeat(MAX_INLINE_BYTES)), 1);

    expect(token).toStrictEqual({
      topic: partition.toString(),
      ledgerId: '7',
      entryId: '3',
      redeliveryCount: 1,
      key: 'customer-42',
      deliverAtMs: 2,
    });
  });
});
