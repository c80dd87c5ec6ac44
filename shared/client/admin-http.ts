import { AcklineAdminConnectionError, AcklineAdminError } from './errors.ts';
import { type FetchFunction, type HttpErrors, type HttpRequest, HttpTransport } from './http-transport.ts';

export type { FetchFunction } from './http-transport.ts';

/** One admin REST call; its path starts with `/admin/v2/` (or `/admin/v1/`). */
export type AdminRequest = HttpRequest;

/** Settings of {@link AdminHttp}. */
export interface AdminHttpSettings {
  /** Base URL; may carry a path prefix such as an API Gateway stage (`https://.../prod`). */
  readonly serviceHttpUrl: string;
  readonly authToken: string | undefined;
  readonly fetch: FetchFunction;
  readonly requestTimeoutMs: number;
}

const ADMIN_ERRORS: HttpErrors = {
  apiName: 'admin API',
  answer: (statusCode, reason, options) => new AcklineAdminError(statusCode, reason, options),
  unreachable: (url, reason, options) => new AcklineAdminConnectionError(url, reason, options),
};

/**
 * Sends admin REST calls; failures are {@link AcklineAdminError}s: a non-2xx answer carries the
 * server's `reason` (or the status text), an unreachable server becomes
 * {@link AcklineAdminConnectionError} naming the URL. Holds no connection state.
 */
export class AdminHttp extends HttpTransport {
  constructor(settings: AdminHttpSettings) {
    super({
      serviceUrl: settings.serviceHttpUrl,
      authToken: settings.authToken,
      fetch: settings.fetch,
      requestTimeoutMs: settings.requestTimeoutMs,
      errors: ADMIN_ERRORS,
    });
  }
}
