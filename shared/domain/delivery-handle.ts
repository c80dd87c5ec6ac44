import { createHmac, timingSafeEqual } from 'node:crypto';
import { AcklineError, ValidationError } from './errors.ts';
import { quote } from './quote.ts';

/**
 * What a consumer gets back to acknowledge or nack one delivery: the subscription's cursor of the
 * partition, the entry, and the count it was delivered with. Opaque to consumers.
 */
export interface DeliveryHandle {
  readonly cursorId: string;
  readonly ledgerId: string;
  readonly entryId: string;
  readonly partitionIndex: number;
  readonly redeliveryCount: number;
}

/**
 * The version prefix of the handles this code issues. Handles of the unsigned format before it
 * (base64url JSON, no prefix) and of any other version are refused.
 */
export const DELIVERY_HANDLE_PREFIX = 'dh1.';

/** Bytes of the HMAC-SHA256 tag a handle keeps: 128 bits, as much as forging needs to guess. */
export const DELIVERY_HANDLE_TAG_BYTES = 16;

/** Bytes of a handle key (HMAC-SHA256's block is 64; 32 random bytes give its full strength). */
export const DELIVERY_HANDLE_KEY_BYTES = 32;

/** base64url of DELIVERY_HANDLE_TAG_BYTES bytes, without padding. */
const TAG_CHARS = Math.ceil((DELIVERY_HANDLE_TAG_BYTES * 4) / 3);
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const DECIMAL_ID = /^\d{1,19}$/;

/**
 * A delivery handle this server did not issue: forged, altered, signed with another key, or of
 * the unsigned format of earlier versions (400; nothing is acknowledged).
 */
export class InvalidDeliveryHandleError extends ValidationError {}

/**
 * Issues and verifies delivery handles: `dh1.<payload>.<tag>`, where the payload is the base64url
 * JSON array [cursorId, ledgerId, entryId, partitionIndex, redeliveryCount] and the tag the first
 * 16 bytes of HMAC-SHA256(key, `dh1.<payload>`), base64url. Every field is signed, and the
 * version prefix with them, so a handle names exactly an entry the server handed out on that
 * cursor with that count: checking one needs no read, and a consumer cannot build one for an entry
 * not yet written, of another topic's ledger, or with a count of its choosing.
 *
 * Pure: the key is given (the composition root loads it, see HandleKeyStore). Cost: one
 * HMAC-SHA256 over about 100 bytes per handle issued or verified.
 *
 * @example
 * const handles = new DeliveryHandleSigner(key);
 * const text = handles.issue({ cursorId, ledgerId: '7', entryId: '0', partitionIndex: -1, redeliveryCount: 0 });
 * handles.verify(text).entryId; // '0'
 */
export class DeliveryHandleSigner {
  private readonly key: Buffer;

  constructor(key: Uint8Array) {
    if (key.length < DELIVERY_HANDLE_KEY_BYTES) {
      throw new AcklineError(
        `A delivery handle key needs ${DELIVERY_HANDLE_KEY_BYTES} bytes, got ${key.length}`,
      );
    }
    this.key = Buffer.from(key);
  }

  issue(handle: DeliveryHandle): string {
    const payload = Buffer.from(
      JSON.stringify([
        handle.cursorId,
        handle.ledgerId,
        handle.entryId,
        handle.partitionIndex,
        handle.redeliveryCount,
      ]),
    ).toString('base64url');
    return `${DELIVERY_HANDLE_PREFIX}${payload}.${this.tagOf(payload)}`;
  }

  /**
   * The handle `text` names, when this key signed it; InvalidDeliveryHandleError otherwise. The
   * tag is compared in constant time before the payload is parsed. One spelling per handle: a
   * handle with any character changed is refused.
   */
  verify(text: string): DeliveryHandle {
    const refused = () =>
      new InvalidDeliveryHandleError(
        `Delivery handle ${quote(text.slice(0, 40))} is not a handle this server issued`,
      );
    if (!text.startsWith(DELIVERY_HANDLE_PREFIX)) throw refused();
    const [payload, tag, ...rest] = text.slice(DELIVERY_HANDLE_PREFIX.length).split('.');
    if (
      payload === undefined ||
      tag === undefined ||
      rest.length > 0 ||
      !BASE64URL.test(payload) ||
      tag.length !== TAG_CHARS ||
      !BASE64URL.test(tag)
    ) {
      throw refused();
    }
    // The text of the tags, not their bytes: base64url's last character carries unused bits, which
    // decoding ignores, so comparing bytes would take four spellings of one tag.
    const given = Buffer.from(tag, 'latin1');
    const expected = Buffer.from(this.tagOf(payload), 'latin1');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw refused();
    const handle = handleOf(payload);
    if (!handle) throw refused(); // signed by this key yet not a handle: never issued by this code
    return handle;
  }

  /** The tag of a payload, base64url (TAG_CHARS characters). */
  private tagOf(payload: string): string {
    return createHmac('sha256', this.key)
      .update(`${DELIVERY_HANDLE_PREFIX}${payload}`)
      .digest()
      .subarray(0, DELIVERY_HANDLE_TAG_BYTES)
      .toString('base64url');
  }
}

function handleOf(payload: string): DeliveryHandle | undefined {
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (
    !Array.isArray(parts) ||
    parts.length !== 5 ||
    typeof parts[0] !== 'string' ||
    typeof parts[1] !== 'string' ||
    !DECIMAL_ID.test(parts[1]) ||
    typeof parts[2] !== 'string' ||
    !DECIMAL_ID.test(parts[2]) ||
    !Number.isSafeInteger(parts[3]) ||
    !Number.isSafeInteger(parts[4]) ||
    (parts[4] as number) < 0
  ) {
    return undefined;
  }
  return {
    cursorId: parts[0],
    ledgerId: parts[1],
    entryId: parts[2],
    partitionIndex: parts[3] as number,
    redeliveryCount: parts[4] as number,
  };
}
