import { describe, expect, it } from 'vitest';
import {
  InvalidSubscriptionTypeError,
  isCumulativeAckType,
  parseSubscriptionType,
  SUBSCRIPTION_TYPES,
  type SubscriptionType,
} from '../../../shared/domain/subscription-type.ts';

describe('subscription types', () => {
  it.each<[SubscriptionType, boolean]>([
    ['Exclusive', true],
    ['Failover', true],
    ['Shared', false],
    ['Key_Shared', false],
  ])('parses %s (cumulative: %s)', (text, cumulative) => {
    // Act
    const type = parseSubscriptionType(text);

    // Assert
    expect(type).toBe(text);
    expect(isCumulativeAckType(type)).toBe(cumulative);
  });

  it.each([
    ['exclusive'],
    ['SHARED'],
    ['KeyShared'],
    ['Key-Shared'],
    ['key_shared'],
    [' Shared'],
    [''],
  ])('rejects %o', (text) => {
    expect(() => parseSubscriptionType(text)).toThrow(InvalidSubscriptionTypeError);
    expect(() => parseSubscriptionType(text)).toThrow(
      `Invalid subscription type ${JSON.stringify(text)}: expected one of Exclusive, Failover, Shared, Key_Shared`,
    );
  });

  it('lists the four Pulsar types', () => {
    expect(SUBSCRIPTION_TYPES).toEqual(['Exclusive', 'Failover', 'Shared', 'Key_Shared']);
  });
});
