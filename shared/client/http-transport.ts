import type { AcklineClientError, AcklineClientErrorOptions } from './errors.ts';
import { type JsonInput, type JsonValue, parseJson, stringifyJson } from './lossless-json.ts';

/** The subset of the WHATWG `fetch` the clients use; inject a fake in tests. */
export type FetchFunction = (url: string, init: RequestInit) => Promise<Response>;

/** One REST call. */
export interface HttpRequest {
  readonly method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  /** Already percent-encoded, starting with `/`. */
  readonly path: string;
  /** Name/value pairs; a name may repeat (`subscriptionNames=a&subscriptionNames=b`). */
  readonly query?: readonly (readonly [string, string])[];
  /** Sent as JSON when defined. */
  readonly body?: JsonInput;
  /** Overrides the transport's request timeout, e.g. to cover a long poll's wait. */
  readonly timeoutMs?: number;
  /** Aborts the request early (a consumer closing during a long poll). */
  readonly signal?: AbortSignal;
}

/** How a transport turns failures into the errors of its client (admin or SDK). */
export interface HttpErrors {
  /** Names the API in connection errors: `Cannot reach the <apiName> at <url>`. */
  readonly apiName: string;
  /** An HTTP answer that is an error, or not the answer expected. */
  answer(statusCode: number, reason: string, options: AcklineClientErrorOptions): AcklineClientError;
  /** No HTTP answer: connection refused, DNS failure, timeout, abort. */
  unreachable(url: string, reason: string, options: AcklineClientErrorOptions): AcklineClientError;
}

/** Settings of {@link HttpTransport}. */
export interface HttpTransportSettings {
  /** Base URL; may carry a path prefix such as an API Gateway stage (`https://.../prod`). */
  readonly serviceUrl: string;
  readonly authToken: string | undefined;
  readonly fetch: FetchFunction;
  readonly requestTimeoutMs: number;
  readonly errors: HttpErrors;
}

// Used when the response carries no status text (HTTP/2, some gateways).
const STATUS_TEXTS: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Payload Too Large',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/**
 * Sends REST calls with JSON bodies and maps failures to the client's errors: a non-2xx answer
 * carries the server's `reason` (or the status text), an unreachable server becomes a connection
 * error naming the URL. Integers above 2^53 in answers come back as exact decimal strings. Holds no
 * connection state; shared by the admin client and the producer/consumer SDK.
 */
export class HttpTransport {
  private readonly baseUrl: string;

  constructor(private readonly settings: HttpTransportSettings) {
    this.baseUrl = settings.serviceUrl.replace(/\/+$/, '');
  }

  /** Sends the call; resolves to the parsed JSON body, or undefined when the body is empty (204). */
  async send(request: HttpRequest): Promise<JsonValue | undefined> {
    const { errors } = this.settings;
    const url = this.url(request);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.settings.authToken) headers.authorization = `Bearer ${this.settings.authToken}`;
    const timeout = AbortSignal.timeout(request.timeoutMs ?? this.settings.requestTimeoutMs);
    const init: RequestInit = {
      method: request.method,
      headers,
      signal: request.signal ? AbortSignal.any([timeout, request.signal]) : timeout,
    };
    if (request.body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = stringifyJson(request.body);
    }
    let response: Response;
    let text: string;
    try {
      response = await this.settings.fetch(url, init);
      text = await response.text();
    } catch (error) {
      throw errors.unreachable(url, `Cannot reach the ${errors.apiName} at ${url}: ${describe(error)}`, {
        cause: error,
      });
    }
    const statusText = response.statusText || STATUS_TEXTS[response.status] || '';
    if (!response.ok) {
      throw errors.answer(response.status, reasonOf(text) ?? (statusText || `HTTP ${response.status}`), {
        statusText,
      });
    }
    if (text.trim().length === 0) return undefined;
    try {
      return parseJson(text);
    } catch (error) {
      throw errors.answer(response.status, `The server answered ${request.method} ${url} with invalid JSON`, {
        statusText,
        cause: error,
      });
    }
  }

  /** As {@link send}, for calls that must answer with a body. */
  async json(request: HttpRequest): Promise<JsonValue> {
    const body = await this.send(request);
    if (body === undefined) {
      throw this.settings.errors.answer(
        200,
        `The server answered ${request.method} ${request.path} with no body`,
        {},
      );
    }
    return body;
  }

  private url(request: HttpRequest): string {
    const query = (request.query ?? [])
      .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
      .join('&');
    return `${this.baseUrl}${request.path}${query ? `?${query}` : ''}`;
  }
}

/** The server's `{"reason": "..."}`, when the body is one. */
function reasonOf(text: string): string | undefined {
  try {
    const body = parseJson(text);
    if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
      const reason = (body as { readonly [key: string]: JsonValue }).reason;
      if (typeof reason === 'string' && reason.length > 0) return reason;
    }
  } catch {
    // Not JSON (a proxy's HTML page, say): fall back to the status text.
  }
  return undefined;
}

/** One line on a network failure: undici hides the useful part (ECONNREFUSED...) in `cause`. */
function describe(error: unknown): string {
  // AbortSignal rejects with DOMExceptions, told apart only by their standard names.
  if (error instanceof DOMException && error.name === 'TimeoutError') return 'the request timed out';
  if (error instanceof DOMException && error.name === 'AbortError') return 'the request was aborted';
  const cause = error instanceof Error ? error.cause : undefined;
  if (cause instanceof Error && cause.message) return cause.message;
  if (error instanceof Error && error.message) return error.message;
  return String(error);
}

/**
 * Checks a client builder's service URL (http or https; a path prefix is allowed) and request
 * timeout (a positive integer of ms), returning the URL.
 * @param what names the URL in the error, e.g. `admin service URL`.
 * @param refuse builds the client's argument error.
 */
export function checkServiceSettings(
  url: string | undefined,
  requestTimeoutMs: number,
  what: string,
  refuse: (reason: string) => Error,
): string {
  if (url === undefined || !URL.canParse(url)) {
    throw refuse(`Invalid ${what} '${url ?? ''}': expected http(s)://host[:port]`);
  }
  const { protocol } = new URL(url);
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw refuse(`Invalid ${what} '${url}': expected http or https`);
  }
  if (!Number.isSafeInteger(requestTimeoutMs) || requestTimeoutMs <= 0) {
    throw refuse(`Invalid request timeout '${requestTimeoutMs}' ms: expected a positive integer`);
  }
  return url;
}

/** The settings both client builders produce (besides what each adds). */
export interface ServiceSettings {
  readonly serviceUrl: string;
  readonly authToken: string | undefined;
  readonly fetch: FetchFunction;
  readonly requestTimeoutMs: number;
}

/**
 * What AcklineClient's and AcklineAdmin's builders share, as Pulsar's ClientBuilder and
 * PulsarAdminBuilder do: the token, the `fetch` and the request timeout. Each builder names its URL
 * setter as Pulsar does (`serviceUrl`, `serviceHttpUrl`) and has its own default timeout.
 */
export abstract class ServiceBuilder {
  protected url: string | undefined;
  private token: string | undefined;
  private fetchFunction: FetchFunction | undefined;

  protected constructor(private timeoutMs: number) {}

  /**
   * A token sent as `Authorization: Bearer <token>`; undefined or empty sends none.
   * @example AcklineClient.builder().serviceUrl(url).authToken(process.env.ACKLINE_AUTH_TOKEN);
   */
  authToken(token: string | undefined): this {
    this.token = token;
    return this;
  }

  /**
   * The `fetch` to use (default: the global one); tests inject a fake.
   * @example AcklineClient.builder().serviceUrl(url).fetch((input, init) => fetch(input, init));
   */
  fetch(fetchFunction: FetchFunction): this {
    this.fetchFunction = fetchFunction;
    return this;
  }

  /**
   * How long one request may take before it fails (the client's default is 30 000 ms, Pulsar's
   * operation timeout, and a receive poll may take this plus the wait it asks for; the admin's is
   * 60 000 ms).
   * @example AcklineClient.builder().serviceUrl(url).requestTimeoutMs(10_000);
   */
  requestTimeoutMs(timeoutMs: number): this {
    this.timeoutMs = timeoutMs;
    return this;
  }

  /**
   * The checked settings (see checkServiceSettings).
   * @param what names the URL in the error, e.g. `admin service URL`.
   */
  protected settings(what: string, refuse: (reason: string) => Error): ServiceSettings {
    return {
      serviceUrl: checkServiceSettings(this.url, this.timeoutMs, what, refuse),
      authToken: this.token || undefined,
      fetch: this.fetchFunction ?? ((url, init) => fetch(url, init)),
      requestTimeoutMs: this.timeoutMs,
    };
  }
}
