import { QueueDoesNotExist } from '@aws-sdk/client-sqs';

/**
 * How long a call on a queue keeps trying while SQS answers `QueueDoesNotExist`. A queue created a
 * moment ago may not be usable yet: "After you create a queue, you must wait at least one second
 * after the queue is created to be able to use the queue"
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html), and
 * a doorbell is often used within that second (a subscribe, then at once a receive or a publish's
 * ring, perhaps in another Lambda container that cannot know the queue is new).
 */
export interface NewQueueRetry {
  /** Calls in all, the first included. */
  readonly attempts: number;
  /** The ceiling of the first pause; each later pause doubles it. */
  readonly firstPauseMs: number;
}

/**
 * Five calls with pauses of 100-200, 200-400, 400-800 and 800-1600 ms (each drawn from the upper
 * half of its doubling ceiling, so callers that started together spread out): the last call comes
 * 1.5 to 3 s after the first, past the second SQS documents.
 */
export const NEW_QUEUE_RETRY: NewQueueRetry = { attempts: 5, firstPauseMs: 200 };

/**
 * Runs `operation` (given the attempt number, from 1) again while it fails with QueueDoesNotExist,
 * at most `retry.attempts` times in all. After the last attempt the QueueDoesNotExist is thrown to
 * the caller, which takes the queue as gone (deleted with its subscription). Any other error is
 * thrown at once.
 */
export async function retryWhileQueueMissing<T>(
  operation: (attempt: number) => Promise<T>,
  retry: NewQueueRetry = NEW_QUEUE_RETRY,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation(attempt);
    } catch (error) {
      if (!(error instanceof QueueDoesNotExist) || attempt >= retry.attempts) throw error;
      const ceilingMs = retry.firstPauseMs * 2 ** (attempt - 1);
      await new Promise((resolve) => setTimeout(resolve, ceilingMs / 2 + Math.random() * (ceilingMs / 2)));
    }
  }
}
