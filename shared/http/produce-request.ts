import { z } from 'zod';
import { PayloadTooLargeError, ValidationError } from '../domain/errors.ts';
import {
  PRODUCER_ACCESS_MODES,
  type ProducerAccessMode,
  type ProducerAccessToken,
} from '../domain/producer-access.ts';
import type { NewEntry } from '../ports/ledger.ts';

/**
 * Largest payload of one message, in bytes: UTF-8 bytes of a text payload, the decoded bytes of a
 * base64 one (SQS's historical 256 KiB, which a token may carry inline).
 */
export const MAX_PAYLOAD_BYTES = 256 * 1024;
/**
 * Key plus properties of one message, in UTF-8 bytes. With a full payload the
 * message still fits one entries item (350 KB), so storage never refuses what
 * validation accepted.
 */
export const MAX_METADATA_BYTES = 64 * 1024;
/** Standard base64 with its padding (what Buffer and btoa write). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** Messages per produce request. */
export const MAX_MESSAGES_PER_REQUEST = 1_000;
/** deliverAt / eventTime bounds: epoch milliseconds up to year 2286 (13 digits). */
const MAX_EPOCH_MS = 9_999_999_999_999;

/** A producer registration id as the server makes them (base64url, bounded). */
export const PRODUCER_ID = /^[A-Za-z0-9_-]{1,64}$/;

const message = z
  .object({
    payload: z.string(),
    key: z.string().max(1024).optional(),
    properties: z.record(z.string().max(1024), z.string().max(16_384)).optional(),
    eventTime: z.number().int().min(0).max(MAX_EPOCH_MS).optional(),
    deliverAt: z.number().int().min(0).max(MAX_EPOCH_MS).optional(),
    deliverAfterMs: z.number().int().min(0).max(MAX_EPOCH_MS).optional(),
    /** `base64`: the payload is bytes, base64-encoded (JSON carries no bytes); default: UTF-8 text. */
    payloadEncoding: z.enum(['base64', 'utf8']).optional(),
    /** Pulsar's per-message `sequenceId`: with the request's producerName, what deduplication keys on. */
    sequenceId: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  })
  .strict();

const produceBody = z
  .object({
    messages: z.array(message).min(1).max(MAX_MESSAGES_PER_REQUEST),
    /** Pulsar's REST produce `producerName`: stored on every message of the request. */
    producerName: z
      .string()
      .min(1)
      .max(256)
      .refine((name) => ![...name].some((char) => char.charCodeAt(0) < 0x20), 'no control characters')
      .optional(),
    /** An exclusive producer's registration id (`POST .../producers`): the publish is refused once it is fenced. */
    producerId: z.string().regex(PRODUCER_ID).optional(),
  })
  .passthrough();

/**
 * The exclusive producer a produce body names (`producerId`), if any; validated with the rest by
 * parseProduceRequest.
 */
export function producerAccessOf(body: unknown): ProducerAccessToken | undefined {
  const producerId = (body as { producerId?: unknown } | null | undefined)?.producerId;
  return typeof producerId === 'string' ? { producerId } : undefined;
}

const ACCESS_MODES = z.enum(PRODUCER_ACCESS_MODES);

const registrationBody = z
  .object({
    producerName: z.string().max(256).optional(),
    accessMode: ACCESS_MODES.optional(),
  })
  .strict();

/** The body of `POST .../producers`: `{"producerName"?, "accessMode"?}` (default Shared). */
export function parseProducerRegistration(body: unknown): {
  readonly producerName: string;
  readonly accessMode: ProducerAccessMode;
} {
  const parsed = registrationBody.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'body';
    throw new ValidationError(`Invalid producer registration at ${where}: ${issue?.message ?? 'invalid'}`);
  }
  return { producerName: parsed.data.producerName ?? '', accessMode: parsed.data.accessMode ?? 'Shared' };
}

/**
 * Pulsar's REST produce body: `{"producerName"?, "messages":[{"payload","key","properties",
 * "eventTime","deliverAt","deliverAfterMs","sequenceId","payloadEncoding"}]}`. Validates everything before
 * anything is stored: a bad field is a 400, an oversized payload a 413.
 */
export function parseProduceRequest(body: unknown, nowMs: number): NewEntry[] {
  refuseUnstorablePropertyNames(body);
  const parsed = produceBody.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'body';
    throw new ValidationError(`Invalid produce request at ${where}: ${issue?.message ?? 'invalid'}`);
  }
  const { producerName } = parsed.data;
  if (producerName === undefined && parsed.data.messages.some((m) => m.sequenceId !== undefined)) {
    throw new ValidationError("Invalid produce request: a sequenceId needs the request's producerName");
  }
  return parsed.data.messages.map((m, index) => {
    const binary = m.payloadEncoding === 'base64';
    if (binary && !BASE64.test(m.payload)) {
      throw new ValidationError(`Message ${index} has payloadEncoding base64 but its payload is not base64`);
    }
    const bytes = Buffer.byteLength(m.payload, binary ? 'base64' : 'utf8');
    if (bytes > MAX_PAYLOAD_BYTES) {
      throw new PayloadTooLargeError(
        `Message ${index} has a payload of ${bytes} bytes; the limit is ${MAX_PAYLOAD_BYTES} bytes`,
      );
    }
    const metadataBytes =
      Buffer.byteLength(m.key ?? '', 'utf8') +
      Object.entries(m.properties ?? {}).reduce(
        (sum, [name, value]) => sum + Buffer.byteLength(name, 'utf8') + Buffer.byteLength(value, 'utf8'),
        0,
      );
    if (metadataBytes > MAX_METADATA_BYTES) {
      throw new PayloadTooLargeError(
        `Message ${index} has ${metadataBytes} bytes of key and properties; the limit is ${MAX_METADATA_BYTES} bytes`,
      );
    }
    if (m.deliverAt !== undefined && m.deliverAfterMs !== undefined) {
      throw new ValidationError(`Message ${index} sets both deliverAt and deliverAfterMs; set one`);
    }
    const entry: { -readonly [K in keyof NewEntry]: NewEntry[K] } = {
      payload: m.payload,
      properties: m.properties ?? {},
    };
    if (binary) entry.binary = true;
    if (producerName !== undefined) entry.producerName = producerName;
    if (m.sequenceId !== undefined) entry.sequenceId = m.sequenceId;
    if (m.key !== undefined) entry.key = m.key;
    if (m.eventTime !== undefined) entry.eventTimeMs = m.eventTime;
    if (m.deliverAt !== undefined) entry.deliverAtMs = m.deliverAt;
    if (m.deliverAfterMs !== undefined) entry.deliverAtMs = nowMs + m.deliverAfterMs;
    return entry;
  });
}

/**
 * A property named `__proto__` would be dropped silently (a JavaScript object cannot hold it as a
 * plain key), storing a message that differs from the one sent: refused instead.
 */
function refuseUnstorablePropertyNames(body: unknown): void {
  const messages = (body as { messages?: unknown } | null | undefined)?.messages;
  if (!Array.isArray(messages)) return;
  messages.forEach((message: unknown, index) => {
    const properties = (message as { properties?: unknown } | null | undefined)?.properties;
    if (typeof properties === 'object' && properties !== null && Object.hasOwn(properties, '__proto__')) {
      throw new ValidationError(`Message ${index} has a property named __proto__, which cannot be stored`);
    }
  });
}
