import type { InitialPosition } from '../application/subscription-name.ts';
import { ValidationError } from '../domain/errors.ts';
import { Position } from '../domain/position.ts';

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
    throw new ValidationError(`initialPosition must be Earliest or Latest, got ${JSON.stringify(value)}`);
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
