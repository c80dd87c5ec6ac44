import { AcklineAdminConnectionError, AcklineAdminError } from './errors.ts';
import { type JsonInput, type JsonValue, parseJson, stringifyJson } from './lossless-json.ts';

/** The subset of the WHATWG `fetch` the client uses; inject a fake in tests. */
export type FetchFunction = (url: string, init: RequestInit) => Promise<Response>;

/** One admin REST call. */
export interface AdminRequest {
  readonly method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  /** Already percent-encoded, starting with `/admin/v2/`. */
  readonly path: string;
  /** Name/value pairs; a name may repeat (`subscriptionNames=a&subscriptionNames=b`). */
  readonly query?: readonly (readonly [string, string])[];
  /** Sent as JSON when defined. */
  readonly body?: JsonInput;
}

/** Settings of {@link AdminHttp}. */
export interface AdminHttpSettings {
  /** Base URL; may carry a path prefix such as an API Gateway stage (`https://.../prod`). */
  readonly serviceHttpUrl: string;
  readonly authToken: string | undefined;
  readonly fetch: FetchFunction;
  readonly requestTimeoutMs: number;
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
 * Sends admin REST calls and maps failures to {@link AcklineAdminError}: a non-2xx answer carries the
 * server's `reason` (or the status text), an unreachable server becomes
 * {@link AcklineAdminConnectionError} naming the URL. Holds no connection state.
 */
export class AdminHttp {
  private readonly baseUrl: string;

  constructor(private readonly settings: AdminHttpSettings) {
    this.baseUrl = settings.serviceHttpUrl.replace(/\/+$/, '');
  }

  /** Sends the call; resolves to the parsed JSON body, or undefined when the body is empty (204). */
  async send(request: AdminRequest): Promise<JsonValue | undefined> {
    const url = this.url(request);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.settings.authToken) headers.authorization = `Bearer ${this.settings.authToken}`;
    const init: RequestInit = {
      method: request.method,
      headers,
      signal: AbortSignal.timeout(this.settings.requestTimeoutMs),
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
      throw new AcklineAdminConnectionError(url, `Cannot reach the admin API at ${url}: ${describe(error)}`, {
        cause: error,
      });
    }
    const statusText = response.statusText || STATUS_TEXTS[response.status] || '';
    if (!response.ok) {
      throw new AcklineAdminError(
        response.status,
        reasonOf(text) ?? (statusText || `HTTP ${response.status}`),
        {
          statusText,
        },
      );
    }
    if (text.trim().length === 0) return undefined;
    try {
      return parseJson(text);
    } catch (error) {
      throw new AcklineAdminError(
        response.status,
        `The server answered ${request.method} ${url} with invalid JSON`,
        {
          statusText,
          cause: error,
        },
      );
    }
  }

  /** As {@link send}, for calls that must answer with a body. */
  async json(request: AdminRequest): Promise<JsonValue> {
    const body = await this.send(request);
    if (body === undefined) {
      throw new AcklineAdminError(200, `The server answered ${request.method} ${request.path} with no body`);
    }
    return body;
  }

  private url(request: AdminRequest): string {
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
  // AbortSignal.timeout() rejects with a DOMException, told apart only by its standard name.
  if (error instanceof DOMException && error.name === 'TimeoutError') return 'the request timed out';
  const cause = error instanceof Error ? error.cause : undefined;
  if (cause instanceof Error && cause.message) return cause.message;
  if (error instanceof Error && error.message) return error.message;
  return String(error);
}
