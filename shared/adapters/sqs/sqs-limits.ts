import type { BatchLimits } from '../../domain/batches.ts';

/**
 * SQS's largest message, body plus attributes in UTF-8 bytes, as AWS documents
 * it: 1 MiB (1,048,576 bytes), the default MaximumMessageSize of a queue.
 * Older accounts, and queues created while the limit was 256 KiB, keep
 * MaximumMessageSize 262,144: set this to 256 * 1024 there. Every token and
 * job ackline sends is checked against this one constant; a token whose inline
 * message would not fit travels by reference instead.
 */
export const SQS_MAX_MESSAGE_BYTES = 1024 * 1024;

/** SendMessageBatch: at most 10 entries and 1 MiB (1,048,576 bytes) in all, as AWS documents it. */
export const SQS_SEND_BATCH_LIMITS: BatchLimits = { maxCount: 10, maxBytes: 1024 * 1024 };

/** DeleteMessageBatch and ChangeMessageVisibilityBatch: at most 10 entries. */
export const SQS_MAX_BATCH_ENTRIES = 10;
