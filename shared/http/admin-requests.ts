import { ValidationError } from '../domain/errors.ts';
import { Position } from '../domain/position.ts';
import type { InitialPosition } from '../domain/subscription-name.ts';
import { describeValue } from './request-parsing.ts';

/** The body of a subscription's creation: `{"initialPosition":"Earliest"}`, absent meaning Latest. */
export function initialPositionOf(body: unknown): InitialPosition {
  if (body === undefined || body === null) return 'Latest';
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new ValidationError('The body must be a JSON object like {"initialPosition":"Earliest"}');
  }
  const value = (body as { initialPosition?: unknown }).initialPosition;
  const { ledgerId, entryId } = body as { ledgerId?: unknown; entryId?: unknown };
  if (value === undefined && (ledgerId !== undefined || entryId !== undefined)) {
    return resetCursorPositionOf(ledgerId, entryId);
  }
  if (value === undefined) return 'Latest';
  if (value !== 'Earliest' && value !== 'Latest') {
    throw new ValidationError(`initialPosition must be Earliest or Latest, got ${describeValue(value)}`);
  }
  return value;
}

/**
 * Pulsar's own body (ResetCursorData, what pulsar-admin and Swagger clients send): MessageId.earliest
 * is `-1:-1`, MessageId.latest is `Long.MAX_VALUE:Long.MAX_VALUE` (past Number.MAX_SAFE_INTEGER once
 * parsed). A subscription at any other message id is not supported.
 */
function resetCursorPositionOf(ledgerId: unknown, entryId: unknown): InitialPosition {
  if (ledgerId === -1 && entryId === -1) return 'Earliest';
  if (
    typeof ledgerId === 'number' &&
    typeof entryId === 'number' &&
    ledgerId >= Number.MAX_SAFE_INTEGER &&
    entryId >= Number.MAX_SAFE_INTEGER
  ) {
    return 'Latest';
  }
  throw new ValidationError(
    `A subscription starts at earliest (-1:-1) or latest (${Number.MAX_SAFE_INTEGER}+); got ${JSON.stringify(ledgerId)}:${JSON.stringify(entryId)}`,
  );
}

/** `{"type":"messageId","messageIds":[{"ledgerId":L,"entryId":E}]}`; ids as numbers or numeric strings. */
export function messageIdsOf(body: unknown): Position[] {
  const shape = body as { type?: unknown; messageIds?: unknown } | undefined;
  if (
    typeof shape !== 'object' ||
    shape === null ||
    (shape.type !== undefined && shape.type !== 'messageId') ||
    !Array.isArray(shape.messageIds) ||
    shape.messageIds.length === 0 ||
    shape.messageIds.length > 10_000
  ) {
    throw new ValidationError(
      'The body must be {"type":"messageId","messageIds":[{"ledgerId":L,"entryId":E}, ...]} with 1 to 10000 ids',
    );
  }
  return shape.messageIds.map((id: unknown) => {
    const { ledgerId, entryId } = (id ?? {}) as { ledgerId?: unknown; entryId?: unknown };
    if (!isId(ledgerId) || !isId(entryId)) {
      throw new ValidationError(`Each message id needs a ledgerId and an entryId, got ${JSON.stringify(id)}`);
    }
    return Position.of(ledgerId, entryId);
  });
}

function isId(value: unknown): value is number | string {
  return typeof value === 'number' || typeof value === 'string';
}

/**
 * Pulsar's ResetCursorData body of `resetcursor`:
 * `{"ledgerId":L,"entryId":E[,"partitionIndex":i,"batchIndex":-1,"excluded":false]}`. Pulsar's field
 * is `isExcluded`, but Lombok names its accessors `isExcluded()`/`setExcluded()`, so Jackson (the
 * broker and pulsar-admin) and the Swagger definition spell it `excluded`; ackline's SDK and CLI send
 * `isExcluded`, accepted too (the two may not disagree).
 */
export type ResetCursorBody =
  | {
      readonly position: Position;
      readonly partitionIndex?: number;
      readonly isExcluded: boolean;
    }
  /**
   * MessageId.earliest (`-1:-1`) or MessageId.latest (`Long.MAX_VALUE` twice); with a
   * `partitionIndex` (>= 0) on that partition only.
   */
  | { readonly edge: 'earliest' | 'latest'; readonly partitionIndex?: number };

/** Long.MAX_VALUE, MessageId.latest's ledger and entry id. */
const LONG_MAX = '9223372036854775807';

/**
 * MessageId.earliest or MessageId.latest, as Pulsar's clients send them; undefined for any other id.
 * Exactly -1, and exactly Long.MAX_VALUE: as a string, or as the JSON number, which JSON.parse reads
 * as 2^63 (the nearest double; a number past it is no Long and is refused as an id).
 */
function messageIdEdgeOf(ledgerId: unknown, entryId: unknown): 'earliest' | 'latest' | undefined {
  const isMinusOne = (value: unknown) => value === -1 || value === '-1';
  const isLongMax = (value: unknown) => value === 2 ** 63 || value === LONG_MAX;
  if (isMinusOne(ledgerId) && isMinusOne(entryId)) return 'earliest';
  if (isLongMax(ledgerId) && isLongMax(entryId)) return 'latest';
  return undefined;
}

export function resetCursorBodyOf(body: unknown): ResetCursorBody {
  const shape = body as Record<string, unknown> | undefined;
  if (typeof shape !== 'object' || shape === null || Array.isArray(shape)) {
    throw new ValidationError(
      'The body must be a MessageId like {"ledgerId":3,"entryId":15} (optional: partitionIndex, excluded)',
    );
  }
  const { ledgerId, entryId, partitionIndex, batchIndex, excluded, isExcluded } = shape;
  if (
    partitionIndex !== undefined &&
    (typeof partitionIndex !== 'number' || !Number.isSafeInteger(partitionIndex) || partitionIndex < -1)
  ) {
    throw new ValidationError(
      `partitionIndex must be an integer >= -1, got ${JSON.stringify(partitionIndex)}`,
    );
  }
  if (batchIndex !== undefined && batchIndex !== -1) {
    // ackline stores every message as its own entry: there is no batch to reset inside.
    throw new ValidationError(
      `batchIndex must be -1 or absent (ackline keeps one message per entry), got ${JSON.stringify(batchIndex)}`,
    );
  }
  for (const [name, value] of Object.entries({ excluded, isExcluded })) {
    if (value !== undefined && typeof value !== 'boolean') {
      throw new ValidationError(`${name} must be true or false, got ${describeValue(value)}`);
    }
  }
  if (excluded !== undefined && isExcluded !== undefined && excluded !== isExcluded) {
    throw new ValidationError(
      `excluded (${excluded}) and isExcluded (${isExcluded}) disagree: send one of them (Pulsar's is excluded)`,
    );
  }
  // The other fields are checked for earliest and latest too: a malformed body never moves a cursor.
  const edge = messageIdEdgeOf(ledgerId, entryId);
  if (edge) {
    return typeof partitionIndex === 'number' && partitionIndex >= 0 ? { edge, partitionIndex } : { edge };
  }
  if (!isId(ledgerId) || !isId(entryId)) {
    throw new ValidationError(`The MessageId needs a ledgerId and an entryId, got ${describeValue(body)}`);
  }
  return {
    position: Position.of(ledgerId, entryId),
    ...(partitionIndex !== undefined ? { partitionIndex } : {}),
    isExcluded: excluded === true || isExcluded === true,
  };
}

/** Pulsar's RetentionPolicies body: `{"retentionTimeInMinutes":T,"retentionSizeInMB":S}`, integers. */
export function retentionBodyOf(body: unknown): {
  retentionTimeInMinutes: number;
  retentionSizeInMB: number;
} {
  const shape = body as Record<string, unknown> | undefined;
  const integer = (value: unknown) => typeof value === 'number' && Number.isSafeInteger(value);
  if (
    typeof shape !== 'object' ||
    shape === null ||
    Array.isArray(shape) ||
    !integer(shape.retentionTimeInMinutes) ||
    !integer(shape.retentionSizeInMB)
  ) {
    throw new ValidationError(
      'The body must be {"retentionTimeInMinutes":T,"retentionSizeInMB":S} with integers (-1: no limit)',
    );
  }
  return {
    retentionTimeInMinutes: shape.retentionTimeInMinutes as number,
    retentionSizeInMB: shape.retentionSizeInMB as number,
  };
}

/** Integer.MAX_VALUE. */
const MAX_JAVA_INT = 2_147_483_647;

/**
 * The body of a set-maxSubscriptionsPerTopic or set-maxConsumersPerSubscription call: a JSON
 * integer (Pulsar's int; a negative one is the use case's 412, as Pulsar).
 */
export function limitOf(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value > MAX_JAVA_INT) {
    throw new ValidationError(`The body must be ${name}, an integer up to ${MAX_JAVA_INT}`);
  }
  return value;
}

/** A message TTL in seconds: a JSON integer body (namespace) or a `messageTTL` query value (topic). */
export function messageTTLOf(value: unknown, where: string): number {
  const parsed = typeof value === 'string' && /^-?\d{1,15}$/.test(value) ? Number(value) : value;
  if (typeof parsed !== 'number' || !Number.isSafeInteger(parsed)) {
    throw new ValidationError(`${where} must be the message TTL in seconds, an integer`);
  }
  if (parsed > MAX_JAVA_INT) {
    // Pulsar's messageTTL is a Java int: its clients cannot send more, nor read more back.
    throw new ValidationError(
      `${where} must be at most ${MAX_JAVA_INT} seconds (Pulsar's TTL is an int), got ${parsed}`,
    );
  }
  return parsed;
}

/**
 * The body of a namespace's creation: Pulsar's clients send a Policies object (pulsar-admin a
 * default one). ackline keeps none of its fields at creation, but a body must be a JSON object.
 */
export function requireNamespaceCreateBody(body: unknown): void {
  if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body))) {
    throw new ValidationError('The body must be a JSON object (Pulsar Policies) or empty');
  }
}
