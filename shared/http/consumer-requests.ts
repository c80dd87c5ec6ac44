import { z } from 'zod';
import type { SubscribeRequest } from '../application/consumers/subscribe-consumer.ts';
import { MAX_CONSUMER_LEASE_MS, MIN_CONSUMER_LEASE_MS } from '../domain/consumer-lease.ts';
import { ValidationError } from '../domain/errors.ts';
import { validateHashRanges } from '../domain/key-shared-sticky.ts';
import { parseSubscriptionType } from '../domain/subscription-type.ts';
import type { TopicName } from '../domain/topic-name.ts';
import { MAX_NAME_BYTES } from './request-parsing.ts';

/** A name of at most MAX_NAME_BYTES; a topic name whose every part (domain, tenant, ...) is one. */
const fitsName = (value: string) => Buffer.byteLength(value, 'utf8') <= MAX_NAME_BYTES;
const fitsNames = (value: string) => value.split('/').every(fitsName);
const TOO_LONG = { message: `too long (names are at most ${MAX_NAME_BYTES} bytes)` };

const backoff = z.union([
  z
    .object({
      minDelayMs: z.number().optional(),
      maxDelayMs: z.number().optional(),
      multiplier: z.number().optional(),
      jitter: z.number().optional(),
    })
    .strict(),
  z.object({ className: z.string().min(1), params: z.unknown().optional() }).strict(),
]);

const subscribeBody = z
  .object({
    consumerName: z.string().min(1).max(256).optional(),
    subscriptionType: z.string().optional(),
    subscriptionInitialPosition: z.enum(['Latest', 'Earliest']).optional(),
    ackTimeoutMs: z.number().int().min(0).max(86_400_000).optional(),
    /** How long the consumer stays alive without a call (10 s to 1 h; default 60 s). */
    leaseMs: z.number().int().min(MIN_CONSUMER_LEASE_MS).max(MAX_CONSUMER_LEASE_MS).optional(),
    /** 'lambda': an event-driven consumer (durable, not leased); its function's timeout. */
    consumerKind: z.enum(['http', 'lambda']).optional(),
    functionTimeoutMs: z.number().int().min(1_000).max(900_000).optional(),
    ackTimeoutRedeliveryBackoff: backoff.optional(),
    negativeAckRedeliveryDelayMs: z.number().int().min(0).max(86_400_000).optional(),
    negativeAckRedeliveryBackoff: backoff.optional(),
    /** Pulsar's `KeySharedMeta`: STICKY with the consumer's own hash ranges (0..65535), or AUTO_SPLIT (the default). */
    keySharedPolicy: z
      .object({
        keySharedMode: z.enum(['AUTO_SPLIT', 'STICKY']),
        hashRanges: z
          .array(z.object({ start: z.number().int(), end: z.number().int() }).strict())
          .max(1000)
          .optional(),
        allowOutOfOrderDelivery: z.boolean().optional(),
      })
      .strict()
      .optional(),
    deadLetterPolicy: z
      .object({
        maxRedeliverCount: z.number().int(),
        deadLetterTopic: z.string().min(1).refine(fitsNames, TOO_LONG).optional(),
        initialSubscriptionName: z.string().min(1).refine(fitsName, TOO_LONG).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

function invalid(error: z.ZodError, what: string): ValidationError {
  const issue = error.issues[0];
  const where = issue?.path.length ? issue.path.join('.') : 'body';
  return new ValidationError(`Invalid ${what} at ${where}: ${issue?.message ?? 'invalid'}`);
}

/** The subscribe body of `POST /consumers/persistent/{tenant}/{namespace}/{topic}/subscription/{sub}`. */
export function parseSubscribeRequest(
  topic: TopicName,
  subscription: string,
  body: unknown,
): SubscribeRequest {
  const parsed = subscribeBody.safeParse(body ?? {});
  if (!parsed.success) throw invalid(parsed.error, 'subscribe request');
  const input = parsed.data;
  const request: { -readonly [K in keyof SubscribeRequest]: SubscribeRequest[K] } = {
    topic,
    subscription,
    subscriptionType: parseSubscriptionType(input.subscriptionType ?? 'Exclusive'),
    initialPosition: input.subscriptionInitialPosition ?? 'Latest',
    policy: {
      ...(input.ackTimeoutMs !== undefined ? { ackTimeoutMs: input.ackTimeoutMs } : {}),
      ...(input.ackTimeoutRedeliveryBackoff
        ? { ackTimeoutRedeliveryBackoff: input.ackTimeoutRedeliveryBackoff }
        : {}),
      ...(input.negativeAckRedeliveryDelayMs !== undefined
        ? { negativeAckRedeliveryDelayMs: input.negativeAckRedeliveryDelayMs }
        : {}),
      ...(input.negativeAckRedeliveryBackoff
        ? { negativeAckRedeliveryBackoff: input.negativeAckRedeliveryBackoff }
        : {}),
      ...(input.deadLetterPolicy ? { deadLetterPolicy: input.deadLetterPolicy } : {}),
    },
  };
  if (input.consumerName !== undefined) request.consumerName = input.consumerName;
  const keyShared = input.keySharedPolicy;
  if (keyShared?.keySharedMode === 'STICKY') {
    if (request.subscriptionType !== 'Key_Shared') {
      throw new ValidationError('subscribe request: keySharedPolicy goes with subscriptionType Key_Shared');
    }
    request.hashRanges = keyShared.hashRanges ?? [];
    validateHashRanges(request.hashRanges);
  } else if (keyShared?.hashRanges !== undefined) {
    throw new ValidationError('subscribe request: hashRanges go with keySharedMode STICKY');
  }
  if (input.leaseMs !== undefined) request.leaseMs = input.leaseMs;
  if (input.consumerKind === 'lambda') {
    request.lambda = { functionTimeoutMs: input.functionTimeoutMs ?? 30_000 };
  } else if (input.functionTimeoutMs !== undefined) {
    throw new ValidationError('subscribe request: functionTimeoutMs goes with consumerKind "lambda"');
  }
  return request;
}

const idList = z.array(z.string().min(1).max(4096)).max(1000);
const ackBody = z
  .object({ messageIds: idList.optional(), deliveryHandles: idList.optional() })
  .strict()
  .refine((body) => (body.messageIds?.length ?? 0) + (body.deliveryHandles?.length ?? 0) > 0, {
    message: 'give messageIds and/or deliveryHandles',
  });

/** `{"messageIds":[...]}` and/or `{"deliveryHandles":[...]}` (ack, nack). */
export function parseIdsBody(body: unknown): { messageIds: string[]; deliveryHandles: string[] } {
  const parsed = ackBody.safeParse(body);
  if (!parsed.success) throw invalid(parsed.error, 'request');
  return { messageIds: parsed.data.messageIds ?? [], deliveryHandles: parsed.data.deliveryHandles ?? [] };
}

const nackBody = z
  .object({
    messageIds: idList.optional(),
    deliveryHandles: idList.optional(),
    /** ackline, beyond Pulsar (apache/pulsar #24372): this nack's delay instead of the consumer's backoff. */
    delayMs: z.number().int().min(0).max(86_400_000).optional(),
  })
  .strict()
  .refine((body) => (body.messageIds?.length ?? 0) + (body.deliveryHandles?.length ?? 0) > 0, {
    message: 'give messageIds and/or deliveryHandles',
  });

/** nack: `{"messageIds":[...]}` and/or `{"deliveryHandles":[...]}`, and an optional `delayMs` (0 to 24 h). */
export function parseNackBody(body: unknown): {
  messageIds: string[];
  deliveryHandles: string[];
  delayMs?: number;
} {
  const parsed = nackBody.safeParse(body);
  if (!parsed.success) throw invalid(parsed.error, 'request');
  const { messageIds = [], deliveryHandles = [], delayMs } = parsed.data;
  return { messageIds, deliveryHandles, ...(delayMs !== undefined ? { delayMs } : {}) };
}

/** redeliver-unacknowledged: no body, or `{"deliveryHandles":[...]}`. */
export function parseOptionalHandles(body: unknown): string[] {
  if (body === undefined || body === null) return [];
  const parsed = z.object({ deliveryHandles: idList.optional() }).strict().safeParse(body);
  if (!parsed.success) throw invalid(parsed.error, 'request');
  return parsed.data.deliveryHandles ?? [];
}

export function parseCumulativeBody(body: unknown): string {
  const parsed = z
    .object({ messageId: z.string().min(1).max(100) })
    .strict()
    .safeParse(body);
  if (!parsed.success) throw invalid(parsed.error, 'request');
  return parsed.data.messageId;
}
