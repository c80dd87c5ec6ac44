import { ValidationError } from './errors.ts';

/**
 * What a subscription queue carries for one message: which entry, how many
 * times this subscription has redelivered it, and (when small) the message
 * itself, so a delivery needs no ledger read. The cursor, not the token, says
 * whether the entry is acknowledged: a token is checked before every delivery.
 */
export interface DeliveryToken {
  /** The topic partition (full name). */
  readonly topic: string;
  readonly ledgerId: string;
  readonly entryId: string;
  readonly redeliveryCount: number;
  /** The message itself, when its token fits one SQS message; otherwise the handler reads the ledger. */
  readonly message?: InlineMessage;
  /**
   * Without an inline message: the message's key and deliverAt, which routing
   * (Key_Shared) and the not-before check need before the ledger is read.
   */
  readonly key?: string;
  readonly deliverAtMs?: number;
}

export interface InlineMessage {
  readonly payload: string;
  readonly key?: string;
  readonly properties?: Readonly<Record<string, string>>;
  readonly publishTimeMs: number;
  readonly eventTimeMs?: number;
  readonly deliverAtMs?: number;
}

/**
 * Messages whose payload, key and properties are larger travel by reference
 * (the handler reads the entry from the ledger). A bound on the raw sizes only:
 * JSON escaping can make a token several times larger than its message, so
 * whatever encodes a token for a queue still checks the encoded size against
 * the queue's message limit ({@link encodeWithinLimit}).
 */
export const MAX_INLINE_BYTES = 192 * 1024;

interface WireToken {
  v: 1;
  t: string;
  l: string;
  e: string;
  c: number;
  /** key and deliverAt of a token without its message. */
  k?: string;
  da?: number;
  m?: { p: string; k?: string; pr?: Record<string, string>; pt: number; et?: number; da?: number };
}

export function encodeDeliveryToken(token: DeliveryToken): string {
  const wire: WireToken = {
    v: 1,
    t: token.topic,
    l: token.ledgerId,
    e: token.entryId,
    c: token.redeliveryCount,
  };
  if (token.key !== undefined) wire.k = token.key;
  if (token.deliverAtMs !== undefined) wire.da = token.deliverAtMs;
  if (token.message) {
    const m: NonNullable<WireToken['m']> = { p: token.message.payload, pt: token.message.publishTimeMs };
    if (token.message.key !== undefined) m.k = token.message.key;
    if (token.message.properties && Object.keys(token.message.properties).length > 0) {
      m.pr = { ...token.message.properties };
    }
    if (token.message.eventTimeMs !== undefined) m.et = token.message.eventTimeMs;
    if (token.message.deliverAtMs !== undefined) m.da = token.message.deliverAtMs;
    wire.m = m;
  }
  return JSON.stringify(wire);
}

export function decodeDeliveryToken(body: string): DeliveryToken {
  let wire: Partial<WireToken>;
  try {
    wire = JSON.parse(body) as Partial<WireToken>;
  } catch {
    throw new ValidationError('Delivery token is not JSON');
  }
  if (
    wire.v !== 1 ||
    typeof wire.t !== 'string' ||
    typeof wire.l !== 'string' ||
    typeof wire.e !== 'string' ||
    typeof wire.c !== 'number' ||
    (wire.k !== undefined && typeof wire.k !== 'string') ||
    (wire.da !== undefined && typeof wire.da !== 'number')
  ) {
    throw new ValidationError('Delivery token is malformed');
  }
  const token: { -readonly [K in keyof DeliveryToken]: DeliveryToken[K] } = {
    topic: wire.t,
    ledgerId: wire.l,
    entryId: wire.e,
    redeliveryCount: wire.c,
  };
  if (wire.k !== undefined) token.key = wire.k;
  if (wire.da !== undefined) token.deliverAtMs = wire.da;
  if (wire.m) {
    const message: { -readonly [K in keyof InlineMessage]: InlineMessage[K] } = {
      payload: wire.m.p,
      publishTimeMs: wire.m.pt,
    };
    if (wire.m.k !== undefined) message.key = wire.m.k;
    if (wire.m.pr !== undefined) message.properties = wire.m.pr;
    if (wire.m.et !== undefined) message.eventTimeMs = wire.m.et;
    if (wire.m.da !== undefined) message.deliverAtMs = wire.m.da;
    token.message = message;
  }
  return token;
}

/**
 * The token without its inline message, keeping what routing and the
 * not-before check need (key, deliverAt): the handler reads the entry from the
 * ledger instead. A token without a message is returned as it is.
 */
export function withoutInlineMessage(token: DeliveryToken): DeliveryToken {
  const { message, ...rest } = token;
  if (message === undefined) return token;
  const reference: { -readonly [K in keyof DeliveryToken]: DeliveryToken[K] } = { ...rest };
  if (message.key !== undefined) reference.key = message.key;
  if (message.deliverAtMs !== undefined) reference.deliverAtMs = message.deliverAtMs;
  return reference;
}

/**
 * `encode(token)`, or `encode(withoutInlineMessage(token))` when that is over
 * `maxBytes` (UTF-8): a message too large to ride along travels by reference
 * rather than failing the send. `encode` wraps the token (a bare token, a
 * scheduler job embedding it). Cost: at most two encodings.
 *
 * @example
 * encodeWithinLimit(token, SQS_MAX_MESSAGE_BYTES, encodeDeliveryToken)
 */
export function encodeWithinLimit(
  token: DeliveryToken,
  maxBytes: number,
  encode: (token: DeliveryToken) => string,
): string {
  const body = encode(token);
  if (token.message === undefined || Buffer.byteLength(body, 'utf8') <= maxBytes) return body;
  return encode(withoutInlineMessage(token));
}
