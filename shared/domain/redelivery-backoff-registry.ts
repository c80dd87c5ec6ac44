import { ConflictError, ValidationError } from './errors.ts';
import { quote } from './quote.ts';
import {
  DEFAULT_FIXED_DELAY_MS,
  DEFAULT_MAX_DELAY_MS,
  DEFAULT_MIN_DELAY_MS,
  DEFAULT_MULTIPLIER,
  FIXED_REDELIVERY_BACKOFF,
  FixedRedeliveryBackoff,
  InvalidRedeliveryBackoffError,
  MULTIPLIER_REDELIVERY_BACKOFF,
  MultiplierRedeliveryBackoff,
  type RedeliveryBackoff,
} from './redelivery-backoff.ts';

/** A redelivery backoff class name is registered twice. */
export class DuplicateRedeliveryBackoffClassError extends ConflictError {}

/** No redelivery backoff is registered under the given class name. */
export class UnknownRedeliveryBackoffClassError extends ValidationError {}

/**
 * Builds a backoff from its JSON parameters (`undefined` when the JSON had none). It must validate
 * the parameters itself and throw a `ValidationError` (e.g. InvalidRedeliveryBackoffError) when
 * they are wrong.
 */
export type RedeliveryBackoffFactory = (params: unknown) => RedeliveryBackoff;

/** Pulsar's package for its backoff classes, accepted as a prefix of the built-in names. */
const PULSAR_IMPL_PACKAGE = 'org.apache.pulsar.client.impl.';

/**
 * Turns a backoff's stored or wire form (`{ className, params }`) back into a {@link RedeliveryBackoff}.
 * Built-ins ({@link RedeliveryBackoffRegistry.withBuiltIns}): `MultiplierRedeliveryBackoff` (also as
 * `ExponentialRedeliveryBackoff`, its name before Pulsar 2.10, and with Pulsar's package
 * `org.apache.pulsar.client.impl.`) and `FixedRedeliveryBackoff`. Users may register their own.
 *
 * @example
 * const registry = RedeliveryBackoffRegistry.withBuiltIns();
 * const backoff = registry.fromJson({ className: 'MultiplierRedeliveryBackoff', params: { minDelayMs: 1000 } });
 * backoff.next(1); // 2000
 */
export class RedeliveryBackoffRegistry {
  private readonly factories = new Map<string, RedeliveryBackoffFactory>();

  /** A registry holding the built-in backoffs. */
  static withBuiltIns(): RedeliveryBackoffRegistry {
    const registry = new RedeliveryBackoffRegistry();
    for (const name of [
      MULTIPLIER_REDELIVERY_BACKOFF,
      'ExponentialRedeliveryBackoff',
      `${PULSAR_IMPL_PACKAGE}${MULTIPLIER_REDELIVERY_BACKOFF}`,
      `${PULSAR_IMPL_PACKAGE}ExponentialRedeliveryBackoff`,
    ]) {
      registry.register(name, multiplierFromParams);
    }
    registry.register(FIXED_REDELIVERY_BACKOFF, fixedFromParams);
    return registry;
  }

  /**
   * Registers a backoff class under `className`.
   * @throws DuplicateRedeliveryBackoffClassError when the name is taken.
   */
  register(className: string, factory: RedeliveryBackoffFactory): this {
    if (className.length === 0) {
      throw new InvalidRedeliveryBackoffError('Invalid redelivery backoff class name "": it is empty');
    }
    if (this.factories.has(className)) {
      throw new DuplicateRedeliveryBackoffClassError(
        `Redelivery backoff class ${quote(className)} is already registered`,
      );
    }
    this.factories.set(className, factory);
    return this;
  }

  /** The registered class names, sorted. */
  get classNames(): readonly string[] {
    return [...this.factories.keys()].sort();
  }

  /**
   * Builds the backoff registered as `className` from its parameters.
   * @throws UnknownRedeliveryBackoffClassError listing the known names.
   * @throws InvalidRedeliveryBackoffError (or the factory's ValidationError) for bad parameters.
   */
  create(className: string, params?: unknown): RedeliveryBackoff {
    const factory = this.factories.get(className);
    if (factory === undefined) {
      throw new UnknownRedeliveryBackoffClassError(
        `Unknown redelivery backoff class ${quote(className)}; known classes: ${this.classNames.join(', ')}`,
      );
    }
    return factory(params);
  }

  /**
   * Builds a backoff from `{ className, params? }`, e.g. the output of `backoff.toJSON()`.
   * @throws InvalidRedeliveryBackoffError when `json` is not of that shape.
   */
  fromJson(json: unknown): RedeliveryBackoff {
    if (!isPlainObject(json)) {
      throw new InvalidRedeliveryBackoffError(
        `Invalid redelivery backoff ${describe(json)}: expected an object { className, params }`,
      );
    }
    const unknownKeys = Object.keys(json).filter((key) => key !== 'className' && key !== 'params');
    if (unknownKeys.length > 0) {
      throw new InvalidRedeliveryBackoffError(
        `Invalid redelivery backoff: unknown field(s) ${unknownKeys.map(quote).join(', ')}; expected className and params`,
      );
    }
    const { className, params } = json;
    if (typeof className !== 'string') {
      throw new InvalidRedeliveryBackoffError(
        `Invalid redelivery backoff: className ${describe(className)} must be a string`,
      );
    }
    return this.create(className, params);
  }
}

function multiplierFromParams(params: unknown): MultiplierRedeliveryBackoff {
  const values = readNumberParams(MULTIPLIER_REDELIVERY_BACKOFF, params, {
    minDelayMs: DEFAULT_MIN_DELAY_MS,
    maxDelayMs: DEFAULT_MAX_DELAY_MS,
    multiplier: DEFAULT_MULTIPLIER,
    jitter: 0,
  });
  return MultiplierRedeliveryBackoff.builder()
    .minDelayMs(values.minDelayMs)
    .maxDelayMs(values.maxDelayMs)
    .multiplier(values.multiplier)
    .jitter(values.jitter)
    .build();
}

function fixedFromParams(params: unknown): FixedRedeliveryBackoff {
  const values = readNumberParams(FIXED_REDELIVERY_BACKOFF, params, { delayMs: DEFAULT_FIXED_DELAY_MS });
  return FixedRedeliveryBackoff.of(values.delayMs);
}

/**
 * Reads numeric parameters strictly: `params` must be an object (or absent), every key known and
 * every value a number; a missing key takes its default.
 */
function readNumberParams<K extends string>(
  className: string,
  params: unknown,
  defaults: Readonly<Record<K, number>>,
): Record<K, number> {
  const values: Record<K, number> = { ...defaults };
  if (params === undefined) {
    return values;
  }
  const known = Object.keys(defaults) as K[];
  if (!isPlainObject(params)) {
    throw new InvalidRedeliveryBackoffError(
      `Invalid ${className} params ${describe(params)}: expected an object with ${known.join(', ')}`,
    );
  }
  for (const [key, value] of Object.entries(params)) {
    if (!(known as string[]).includes(key)) {
      throw new InvalidRedeliveryBackoffError(
        `Invalid ${className} params: unknown parameter ${quote(key)}; known parameters: ${known.join(', ')}`,
      );
    }
    if (typeof value !== 'number') {
      throw new InvalidRedeliveryBackoffError(
        `Invalid ${className} params: ${key} ${describe(value)} must be a number`,
      );
    }
    values[key as K] = value;
  }
  return values;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === undefined) {
    return 'undefined';
  }
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
