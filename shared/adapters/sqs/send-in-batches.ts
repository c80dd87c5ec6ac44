import {
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { splitIntoBatches } from '../../domain/batches.ts';
import { SQS_SEND_BATCH_LIMITS } from './sqs-limits.ts';

/** Attempts per batch: the first send and up to four resends of the entries SQS reported as failed. */
const MAX_ATTEMPTS = 5;

/** A SendMessageBatch entry before it is given its batch-local Id. */
export type MessageToSend = Omit<SendMessageBatchRequestEntry, 'Id'> & { readonly MessageBody: string };

/**
 * Sends `messages` to `queueUrl` in order, in as few SendMessageBatch calls as
 * SQS's documented limits allow (10 entries, 1 MiB in all: by the bodies' UTF-8
 * bytes, as SQS counts them; ackline sends no message attributes). Entries SQS
 * reports as failed are sent again, up to MAX_ATTEMPTS in all; after the last
 * attempt this throws, naming how many failed (what was already sent stays sent).
 * Every body must already be within the per-message limit.
 */
export async function sendInBatches(
  client: SQSClient,
  queueUrl: string,
  messages: readonly MessageToSend[],
  what: string,
): Promise<void> {
  const batches = splitIntoBatches(messages, SQS_SEND_BATCH_LIMITS, (message) =>
    Buffer.byteLength(message.MessageBody, 'utf8'),
  );
  for (const batch of batches) {
    let entries: SendMessageBatchRequestEntry[] = batch.map((message, index) => ({
      ...message,
      Id: String(index),
    }));
    for (let attempt = 1; entries.length > 0; attempt++) {
      const result = await client.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
      const failed = new Set((result.Failed ?? []).map((failure) => failure.Id));
      if (failed.size > 0 && attempt >= MAX_ATTEMPTS) {
        const first = result.Failed?.[0];
        throw new Error(
          `SendMessageBatch to ${what} failed for ${failed.size} messages after ${attempt} attempts (${first?.Code}: ${first?.Message})`,
        );
      }
      entries = entries.filter((entry) => failed.has(entry.Id));
    }
  }
}
