import { describe, expect, it } from 'vitest';
import {
  type DeliveryToken,
  decodeDeliveryToken,
  encodeDeliveryToken,
  encodeWithinLimit,
  withoutInlineMessage,
} from '../../../shared/domain/delivery-token.ts';
import { ValidationError } from '../../../shared/domain/errors.ts';

const reference: DeliveryToken = {
  topic: 'persistent://t/n/a',
  ledgerId: '1',
  entryId: '2',
  redeliveryCount: 3,
};
const inline: DeliveryToken = {
  ...reference,
  message: { payload: 'p', key: 'k', properties: { a: 'b' }, publishTimeMs: 4, deliverAtMs: 5 },
};

describe('delivery token', () => {
  it.each<[string, DeliveryToken]>([
    ['a token with its message', inline],
    ['a token by reference', reference],
    ['a token by reference with key and deliverAt', { ...reference, key: 'k', deliverAtMs: 5 }],
  ])('round-trips %s', (_, token) => {
    expect(decodeDeliveryToken(encodeDeliveryToken(token))).toStrictEqual(token);
  });

  it.each([
    ['a numeric key', { v: 1, t: 't', l: '1', e: '2', c: 0, k: 7 }],
    ['a string deliverAt', { v: 1, t: 't', l: '1', e: '2', c: 0, da: '5' }],
  ])('rejects %s', (_, wire) => {
    expect(() => decodeDeliveryToken(JSON.stringify(wire))).toThrow(ValidationError);
  });

  it('withoutInlineMessage keeps what routing and the not-before check need', () => {
    expect(withoutInlineMessage(inline)).toStrictEqual({ ...reference, key: 'k', deliverAtMs: 5 });
    expect(withoutInlineMessage(reference)).toBe(reference);
  });

  it.each<[string, DeliveryToken, number, DeliveryToken]>([
    ['fits: inline', inline, 1024, inline],
    ['over: by reference', inline, 100, { ...reference, key: 'k', deliverAtMs: 5 }],
    ['by reference already: as it is, even when over', reference, 10, reference],
  ])('encodeWithinLimit, %s', (_, token, maxBytes, expected) => {
    expect(decodeDeliveryToken(encodeWithinLimit(token, maxBytes, encodeDeliveryToken))).toStrictEqual(
      expected,
    );
  });

  it('encodeWithinLimit measures UTF-8 bytes, not characters', () => {
    const token: DeliveryToken = { ...reference, message: { payload: 'é'.repeat(100), publishTimeMs: 1 } };
    const chars = encodeDeliveryToken(token).length;
    expect(encodeWithinLimit(token, chars, encodeDeliveryToken)).not.toContain('é');
  });
});
