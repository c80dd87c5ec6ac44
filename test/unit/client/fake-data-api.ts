import type { FetchFunction } from '../../../shared/client/http-transport.ts';
import { fakeFetch, jsonResponse, noContent, type RecordedRequest } from './fake-fetch.ts';

/** A message as the data API's receive answers it. */
export interface WireMessage {
  readonly messageId: string;
  readonly payload: string;
  readonly key?: string | null;
  readonly properties?: Record<string, string> | null;
  readonly redeliveryCount?: number;
  readonly publishTime?: number;
  readonly eventTime?: number | null;
  readonly deliveryHandle?: string;
}

export const CONSUMER_ID = 'c-1';

/** Message `n` of ledger 1: id `1:n:-1`, payload `m<n>`, handle `h<n>`. */
export function wireMessage(n: number, overrides: Partial<WireMessage> = {}): WireMessage {
  return {
    messageId: `1:${n}:-1`,
    payload: `m${n}`,
    key: null,
    properties: {},
    redeliveryCount: 0,
    publishTime: 1_700_000_000_000 + n,
    eventTime: null,
    deliveryHandle: `h${n}`,
    ...overrides,
  };
}

interface HeldPoll {
  readonly maxMessages: number;
  readonly answer: (messages: readonly WireMessage[]) => void;
}

/**
 * An in-memory data API behind a fake fetch: subscribe answers {@link CONSUMER_ID}, receive answers
 * the available messages at once or holds the poll (a long poll) until {@link deliver} or its
 * `waitMs` elapses, produce answers ids `1:<n>:-1` in order, everything else 204. `override` answers
 * first when it returns a response. A held poll rejects when its request is aborted.
 */
export class FakeDataApi {
  readonly fetch: FetchFunction;
  readonly requests: RecordedRequest[];
  private readonly available: WireMessage[] = [];
  private readonly held: HeldPoll[] = [];
  private nextEntryId = 0;

  constructor(
    private readonly override?: (request: RecordedRequest) => Response | Promise<Response> | undefined,
  ) {
    const fake = fakeFetch((request) => this.respond(request));
    this.fetch = fake.fetch;
    this.requests = fake.requests;
  }

  /** Makes messages available: a held poll answers them at once, else the next poll does. */
  deliver(...messages: WireMessage[]): void {
    this.available.push(...messages);
    const poll = this.held.shift();
    if (poll) poll.answer(this.available.splice(0, poll.maxMessages));
  }

  /** `METHOD path?query` of every request, without the base URL. */
  calls(): string[] {
    return this.requests.map((request) => {
      const url = new URL(request.url);
      return `${request.method} ${url.pathname}${url.search}`;
    });
  }

  /** The parsed JSON bodies of the requests to `pathSuffix`. */
  bodiesTo(pathSuffix: string): unknown[] {
    return this.requests
      .filter((request) => new URL(request.url).pathname.endsWith(pathSuffix))
      .map((request) => (request.body === undefined ? undefined : JSON.parse(request.body)));
  }

  private respond(request: RecordedRequest): Response | Promise<Response> {
    const overridden = this.override?.(request);
    if (overridden) return overridden;
    const url = new URL(request.url);
    if (request.method === 'POST' && url.pathname.includes('/subscription/')) {
      return jsonResponse({ consumerId: CONSUMER_ID });
    }
    if (request.method === 'POST' && url.pathname.startsWith('/topics/')) {
      const { messages } = JSON.parse(request.body ?? '{}') as { messages: unknown[] };
      return jsonResponse({
        messagePublishResults: messages.map(() => ({
          messageId: `1:${this.nextEntryId++}:-1`,
          errorCode: 0,
        })),
      });
    }
    if (request.method === 'POST' && url.pathname.endsWith('/receive')) {
      return this.receive(request, url);
    }
    return noContent();
  }

  private receive(request: RecordedRequest, url: URL): Response | Promise<Response> {
    const maxMessages = Number(url.searchParams.get('maxMessages'));
    const waitMs = Number(url.searchParams.get('waitMs'));
    if (this.available.length > 0 || waitMs === 0) {
      return jsonResponse({ messages: this.available.splice(0, maxMessages) });
    }
    return new Promise<Response>((resolve, reject) => {
      const poll: HeldPoll = {
        maxMessages,
        answer: (messages) => {
          clearTimeout(timer);
          resolve(jsonResponse({ messages }));
        },
      };
      const timer = setTimeout(() => {
        this.release(poll);
        resolve(jsonResponse({ messages: [] }));
      }, waitMs);
      request.signal?.addEventListener('abort', () => {
        clearTimeout(timer);
        this.release(poll);
        reject(request.signal?.reason);
      });
      this.held.push(poll);
    });
  }

  private release(poll: HeldPoll): void {
    const index = this.held.indexOf(poll);
    if (index >= 0) this.held.splice(index, 1);
  }
}
