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
  readonly message?: InlineMessage;
}

export interface InlineMessage {
  readonly payload: string;
  readonly key?: string;
  readonly properties?: Readonly<Record<string, string>>;
  readonly publishTimeMs: number;
  readonly eventTimeMs?: number;
  readonly deliverAtMs?: number;
}

/** Tokens stay well under SQS's 256 KiB message limit; larger messages travel by reference. */
export const MAX_INLINE_BYTES = 192 * 1024;

interface WireToken {
  v: 1;
  t: string;
  l: string;
  e: string;
  c: number;
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
    typeof wire.c !== 'number'
  ) {
    throw new ValidationError('Delivery token is malformed');
  }
  const token: { -readonly [K in keyof DeliveryToken]: DeliveryToken[K] } = {
    topic: wire.t,
    ledgerId: wire.l,
    entryId: wire.e,
    redeliveryCount: wire.c,
  };
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
 * What a consumer gets back to acknowledge or nack one delivery: the
 * subscription queue (by cursor), the SQS receipt, the entry and the count it
 * was delivered with. Opaque to consumers (base64url JSON).
 */
export interface DeliveryHandle {
  readonly cursorId: string;
  readonly receipt: string;
  readonly ledgerId: string;
  readonly entryId: string;
  readonly partitionIndex: number;
  readonly redeliveryCount: number;
}

export function encodeDeliveryHandle(handle: DeliveryHandle): string {
  return Buffer.from(
    JSON.stringify([
      handle.cursorId,
      handle.receipt,
      handle.ledgerId,
      handle.entryId,
      handle.partitionIndex,
      handle.redeliveryCount,
    ]),
  ).toString('base64url');
}

export function decodeDeliveryHandle(text: string): DeliveryHandle {
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw new ValidationError(`Invalid delivery handle '${text.slice(0, 40)}'`);
  }
  if (
    !Array.isArray(parts) ||
    parts.length !== 6 ||
    typeof parts[0] !== 'string' ||
    typeof parts[1] !== 'string' ||
    typeof parts[2] !== 'string' ||
    !/^\d{1,19}$/.test(parts[2]) ||
    typeof parts[3] !== 'string' ||
    !/^\d{1,19}$/.test(parts[3]) ||
    !Number.isSafeInteger(parts[4]) ||
    !Number.isSafeInteger(parts[5]) ||
    (parts[5] as number) < 0
  ) {
    throw new ValidationError(`Invalid delivery handle '${text.slice(0, 40)}'`);
  }
  return {
    cursorId: parts[0],
    receipt: parts[1],
    ledgerId: parts[2],
    entryId: parts[3],
    partitionIndex: parts[4] as number,
    redeliveryCount: parts[5] as number,
  };
}
