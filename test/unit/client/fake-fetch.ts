import type { FetchFunction } from '../../../shared/client/admin-http.ts';

/** A request as the fake fetch saw it. */
export interface RecordedRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | undefined;
  /** The request's abort signal (its timeout, and a consumer's close for receive polls). */
  readonly signal: AbortSignal | undefined;
}

export type Responder = (request: RecordedRequest) => Response | Promise<Response>;

/** A fetch that answers from `respond` and records every request; no network. */
export function fakeFetch(respond: Responder = () => noContent()): {
  readonly fetch: FetchFunction;
  readonly requests: RecordedRequest[];
} {
  const requests: RecordedRequest[] = [];
  const fetch: FetchFunction = async (url, init) => {
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value;
    });
    const request: RecordedRequest = {
      url,
      method: init.method ?? 'GET',
      headers,
      body: typeof init.body === 'string' ? init.body : undefined,
      signal: init.signal ?? undefined,
    };
    requests.push(request);
    return respond(request);
  };
  return { fetch, requests };
}

export const noContent = (): Response => new Response(null, { status: 204 });

/** A JSON answer; `text` lets a test send JSON that `JSON.stringify` cannot write (64-bit integers). */
export function jsonResponse(body: unknown, status = 200, text?: string): Response {
  return new Response(text ?? JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

/** An error answer as the server gives it: `{"reason": ...}`. */
export function reasonResponse(status: number, statusText: string, reason: string): Response {
  return new Response(JSON.stringify({ reason }), {
    status,
    statusText,
    headers: { 'content-type': 'application/json' },
  });
}
