import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../shared/domain/errors.ts';
import {
  FixedRedeliveryBackoff,
  InvalidRedeliveryBackoffError,
  MultiplierRedeliveryBackoff,
  type RedeliveryBackoff,
  type RedeliveryBackoffJson,
} from '../../../shared/domain/redelivery-backoff.ts';
import {
  DuplicateRedeliveryBackoffClassError,
  RedeliveryBackoffRegistry,
  UnknownRedeliveryBackoffClassError,
} from '../../../shared/domain/redelivery-backoff-registry.ts';

const COUNTS = [-1, 0, 1, 2, 3, 5, 8, 13, 100, 2 ** 31 - 1];

function delays(backoff: RedeliveryBackoff): number[] {
  return COUNTS.map((count) => backoff.next(count));
}

/** A user-defined backoff: linear growth. */
class LinearBackoff implements RedeliveryBackoff {
  constructor(private readonly stepMs: number) {}

  next(redeliveryCount: number): number {
    return this.stepMs * (Math.max(redeliveryCount, 0) + 1);
  }

  toJSON(): RedeliveryBackoffJson {
    return { className: 'com.example.LinearBackoff', params: { stepMs: this.stepMs } };
  }
}

describe('RedeliveryBackoffRegistry', () => {
  const registry = RedeliveryBackoffRegistry.withBuiltIns();

  it.each<[string, RedeliveryBackoff]>([
    [
      'multiplier',
      MultiplierRedeliveryBackoff.builder().minDelayMs(1000).maxDelayMs(60_000).multiplier(1.5).build(),
    ],
    ['multiplier defaults', MultiplierRedeliveryBackoff.builder().build()],
    ['multiplier from zero', MultiplierRedeliveryBackoff.builder().minDelayMs(0).build()],
    ['fixed', FixedRedeliveryBackoff.of(1234)],
  ])('round-trips a %s backoff through its JSON', (_name, original) => {
    // Act
    const rebuilt = registry.fromJson(JSON.parse(JSON.stringify(original.toJSON())));

    // Assert
    expect(delays(rebuilt)).toEqual(delays(original));
    expect(rebuilt.toJSON()).toEqual(original.toJSON());
  });

  it.each([
    ['MultiplierRedeliveryBackoff'],
    ['ExponentialRedeliveryBackoff'],
    ['org.apache.pulsar.client.impl.MultiplierRedeliveryBackoff'],
  ])('knows %s, with Pulsar defaults for missing parameters', (className) => {
    // Act
    const backoff = registry.create(className, { minDelayMs: 1000 });

    // Assert
    expect(backoff.next(1)).toBe(2000);
    expect(backoff.next(100)).toBe(600_000);
    expect(backoff.toJSON().className).toBe('MultiplierRedeliveryBackoff');
  });

  it('takes all defaults when params are absent', () => {
    expect(delays(registry.create('MultiplierRedeliveryBackoff'))).toEqual(
      delays(MultiplierRedeliveryBackoff.builder().build()),
    );
    expect(registry.fromJson({ className: 'FixedRedeliveryBackoff' }).next(0)).toBe(60_000);
  });

  it.each([
    [
      'MultiplierRedeliveryBackoff',
      { minDelayMs: 1000, maxDelay: 5 },
      /unknown parameter "maxDelay"; known parameters: minDelayMs, maxDelayMs, multiplier/,
    ],
    ['MultiplierRedeliveryBackoff', { minDelayMs: '1000' }, /minDelayMs "1000" must be a number/],
    ['MultiplierRedeliveryBackoff', { multiplier: null }, /multiplier null must be a number/],
    ['MultiplierRedeliveryBackoff', { multiplier: 1 }, /multiplier "1" must be a finite number > 1/],
    [
      'MultiplierRedeliveryBackoff',
      { minDelayMs: 5000, maxDelayMs: 10 },
      /maxDelayMs "10" must be >= minDelayMs "5000"/,
    ],
    ['MultiplierRedeliveryBackoff', [1000], /expected an object/],
    ['MultiplierRedeliveryBackoff', 'fast', /expected an object/],
    ['MultiplierRedeliveryBackoff', null, /expected an object/],
    ['FixedRedeliveryBackoff', { delayMs: -1 }, /delayMs "-1"/],
    ['FixedRedeliveryBackoff', { delayMs: 10, minDelayMs: 1 }, /unknown parameter "minDelayMs"/],
  ])('rejects %s params %o', (className, params, reason) => {
    expect(() => registry.create(className, params)).toThrow(InvalidRedeliveryBackoffError);
    expect(() => registry.create(className, params)).toThrow(reason);
  });

  it('rejects an unknown class, listing the known ones', () => {
    // Act
    const act = () => registry.create('LinearBackoff', {});

    // Assert
    expect(act).toThrow(UnknownRedeliveryBackoffClassError);
    expect(act).toThrow(
      'Unknown redelivery backoff class "LinearBackoff"; known classes: ExponentialRedeliveryBackoff, FixedRedeliveryBackoff, MultiplierRedeliveryBackoff, org.apache.pulsar.client.impl.ExponentialRedeliveryBackoff, org.apache.pulsar.client.impl.MultiplierRedeliveryBackoff',
    );
  });

  it.each([
    [null, /expected an object/],
    ['MultiplierRedeliveryBackoff', /expected an object/],
    [{}, /className undefined must be a string/],
    [{ className: 3 }, /className 3 must be a string/],
    [{ className: 'FixedRedeliveryBackoff', params: {}, extra: 1 }, /unknown field\(s\) "extra"/],
  ])('fromJson rejects %o', (json, reason) => {
    expect(() => registry.fromJson(json)).toThrow(InvalidRedeliveryBackoffError);
    expect(() => registry.fromJson(json)).toThrow(reason);
  });

  it('builds a registered user class and round-trips it', () => {
    // Arrange
    const custom = RedeliveryBackoffRegistry.withBuiltIns().register(
      'com.example.LinearBackoff',
      (params) => {
        const stepMs = (params as { stepMs?: unknown } | undefined)?.stepMs;
        if (typeof stepMs !== 'number') {
          throw new InvalidRedeliveryBackoffError(
            `LinearBackoff needs a numeric stepMs, got ${JSON.stringify(stepMs)}`,
          );
        }
        return new LinearBackoff(stepMs);
      },
    );

    // Act
    const backoff = custom.fromJson({ className: 'com.example.LinearBackoff', params: { stepMs: 100 } });
    const rebuilt = custom.fromJson(backoff.toJSON());

    // Assert
    expect([0, 1, 2].map((count) => backoff.next(count))).toEqual([100, 200, 300]);
    expect(delays(rebuilt)).toEqual(delays(backoff));
    expect(() => custom.create('com.example.LinearBackoff', {})).toThrow(ValidationError);
    expect(() => registry.create('com.example.LinearBackoff', { stepMs: 1 })).toThrow(
      UnknownRedeliveryBackoffClassError,
    );
  });

  it('refuses to register a name twice or an empty name', () => {
    // Arrange
    const custom = new RedeliveryBackoffRegistry();
    custom.register('A', () => FixedRedeliveryBackoff.of(1));

    // Act & Assert
    expect(() => custom.register('A', () => FixedRedeliveryBackoff.of(2))).toThrow(
      DuplicateRedeliveryBackoffClassError,
    );
    expect(() => custom.register('', () => FixedRedeliveryBackoff.of(2))).toThrow(
      InvalidRedeliveryBackoffError,
    );
    expect(custom.create('A').next(0)).toBe(1);
    expect(custom.classNames).toEqual(['A']);
  });

  it('starts empty without the built-ins', () => {
    expect(() => new RedeliveryBackoffRegistry().create('MultiplierRedeliveryBackoff')).toThrow(
      UnknownRedeliveryBackoffClassError,
    );
  });
});
