import type { ClientClock, ScheduledTask } from './client-clock.ts';
import type { DataHttp, DataTopic } from './data-http.ts';
import { AcklineClientError, AcklineProducerBusyError, AcklineProducerFencedError } from './errors.ts';

/**
 * Pulsar's `ProducerAccessMode`: `Shared` (the default), `Exclusive`, `WaitForExclusive`,
 * `ExclusiveWithFencing` (see `ProducerBuilder.accessMode`).
 */
export type ProducerAccessMode = 'Shared' | 'Exclusive' | 'WaitForExclusive' | 'ExclusiveWithFencing';

/** How long a WaitForExclusive producer waits between two attempts to take the topic (plus jitter). */
const WAIT_FOR_EXCLUSIVE_RETRY_MS = 500;

/** `POST /topics/{domain}/{tenant}/{namespace}/{topic}/producers[/{producerId}[/heartbeat]]`. */
function producersPath(topic: DataTopic, producerId?: string, action?: string): string {
  const id = producerId === undefined ? '' : `/${encodeURIComponent(producerId)}`;
  return `/topics/${topic.pathSegments}/producers${id}${action ? `/${action}` : ''}`;
}

/** What registering a producer needs. */
export interface AccessRequest {
  readonly http: DataHttp;
  readonly clock: ClientClock;
  readonly topic: DataTopic;
  readonly producerName: string | undefined;
  readonly accessMode: ProducerAccessMode;
}

/**
 * Registers a producer with its access mode (one request): a Shared one is checked (refused with
 * AcklineProducerBusyError while an exclusive producer holds the topic), an exclusive one takes the
 * topic and gets its lease. WaitForExclusive asks again every ~500 ms until the topic is free.
 * @returns the exclusive producer's lease, or undefined for Shared.
 */
export async function registerProducerAccess(request: AccessRequest): Promise<ProducerLease | undefined> {
  const { http, topic, accessMode } = request;
  for (;;) {
    try {
      const answer = (await http.json({
        method: 'POST',
        path: producersPath(topic),
        body: { accessMode, ...(request.producerName ? { producerName: request.producerName } : {}) },
      })) as { producerId?: unknown; leaseMs?: unknown };
      if (typeof answer.producerId !== 'string') return undefined;
      return new ProducerLease(request, answer.producerId, Number(answer.leaseMs));
    } catch (error) {
      if (!(error instanceof AcklineClientError) || error.statusCode !== 409) throw error;
      if (accessMode !== 'WaitForExclusive') throw conflictOf(error, accessMode !== 'Shared');
      await new Promise<void>((resolve) =>
        request.clock.schedule(resolve, WAIT_FOR_EXCLUSIVE_RETRY_MS * (1 + Math.random())),
      );
    }
  }
}

/** A 409 of the producer paths as the error Pulsar names: fenced for an exclusive producer, else busy. */
export function conflictOf(error: AcklineClientError, exclusive: boolean): AcklineClientError {
  const options = { cause: error, statusText: error.statusText };
  return exclusive
    ? new AcklineProducerFencedError(error.statusCode, error.reason, options)
    : new AcklineProducerBusyError(error.statusCode, error.reason, options);
}

/**
 * An exclusive producer's hold on its topic: renewed by its publishes and, while it does not
 * publish, by a heartbeat every third of the lease (one request, one write per partition); given
 * back by `release()` (its close). Once the server says it was fenced, it stays fenced.
 */
export class ProducerLease {
  private fencedBy: AcklineProducerFencedError | undefined;
  private renewedAtMs: number;
  private task: ScheduledTask | undefined;
  private released = false;

  constructor(
    private readonly request: AccessRequest,
    /** The registration's id, sent with each publish. */
    readonly producerId: string,
    private readonly leaseMs: number,
  ) {
    this.renewedAtMs = request.clock.nowMs();
    this.schedule();
  }

  /** The error every send rejects with once fenced, else undefined. */
  get fenced(): AcklineProducerFencedError | undefined {
    return this.fencedBy;
  }

  /** A publish answered: it renewed the lease on the server. */
  renewed(): void {
    this.renewedAtMs = this.request.clock.nowMs();
  }

  /** A publish or heartbeat answered 409: fenced from now on. */
  fence(error: AcklineProducerFencedError): void {
    this.fencedBy ??= error;
    this.task?.cancel();
  }

  /** Gives the topic back (unless fenced); stops the heartbeat. Failures are ignored: the lease lapses. */
  async release(): Promise<void> {
    this.released = true;
    this.task?.cancel();
    if (this.fencedBy) return;
    await this.request.http
      .json({ method: 'DELETE', path: producersPath(this.request.topic, this.producerId) })
      .catch(() => undefined);
  }

  private schedule(): void {
    if (this.released || this.fencedBy) return;
    this.task = this.request.clock.schedule(() => void this.beat(), Math.max(1_000, this.leaseMs / 3));
  }

  private async beat(): Promise<void> {
    const { clock, http, topic } = this.request;
    if (clock.nowMs() - this.renewedAtMs >= this.leaseMs / 3) {
      try {
        await http.json({ method: 'POST', path: producersPath(topic, this.producerId, 'heartbeat') });
        this.renewed();
      } catch (error) {
        if (error instanceof AcklineClientError && error.statusCode === 409) {
          this.fence(conflictOf(error, true) as AcklineProducerFencedError);
        }
        // Another failure: the next beat tries again; a lease that lapses meanwhile is kept
        // unless another producer takes the topic (then the next publish is refused).
      }
    }
    this.schedule();
  }
}
