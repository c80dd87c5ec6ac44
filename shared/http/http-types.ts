import type { Principal } from '../application/tenancy/principal.ts';

export type { Principal };

/** What a route sees of a request: decoded, lower-cased headers, multi-value query. */
export interface HttpRequest {
  readonly method: string;
  readonly path: string;
  /** URL-decoded path parameters. */
  readonly params: Readonly<Record<string, string>>;
  /** Path parameters as they came (still percent-encoded), for parsers that decode themselves. */
  readonly rawParams: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, readonly string[]>>;
  readonly headers: Readonly<Record<string, string>>;
  /** The body as text (base64 bodies are decoded), or undefined when empty. */
  readonly body: string | undefined;
  /** Undefined only on public routes. */
  readonly principal: Principal | undefined;
  readonly requestId: string;
  /**
   * Epoch ms by which the answer must be on its way, so that it beats API Gateway's integration
   * timeout: 25 s after the request's start (answerDeadlineMs). Use cases that wait or write a lot
   * take it as their deadline.
   */
  readonly answerByMs: number;
}

export interface HttpResponse {
  readonly statusCode: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

export type RouteHandler = (request: HttpRequest) => Promise<HttpResponse>;

export interface Route {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** middy http-router syntax: `/admin/v2/persistent/{tenant}/{namespace}/{topic}`. */
  readonly path: string;
  readonly handler: RouteHandler;
}

export const noContent = (): HttpResponse => ({ statusCode: 204 });
export const ok = (body: unknown): HttpResponse => ({ statusCode: 200, body });
