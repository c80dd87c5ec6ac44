import type { FetchFunction } from '../client/http-transport.ts';
import type { TokenSupplier } from './authentication.ts';

/**
 * The `fetch` of a client whose `AuthenticationToken` may be a supplier function: it adds
 * `Authorization: Bearer <token>` to every request. The supplier is called once, when the first
 * request needs a token, and again when a request is refused with 401 (an expired token), after which
 * that request is sent once more (a 401 request stored nothing). Concurrent requests share one call.
 */
export class TokenFetch {
  private token: Promise<string> | undefined;

  constructor(private readonly supplier: TokenSupplier) {}

  readonly fetch: FetchFunction = async (url, init) => {
    const response = await globalThis.fetch(url, await this.withToken(init, false));
    if (response.status !== 401 || typeof this.supplier === 'string') return response;
    await response.body?.cancel();
    return globalThis.fetch(url, await this.withToken(init, true));
  };

  private async withToken(init: RequestInit, refresh: boolean): Promise<RequestInit> {
    if (refresh || this.token === undefined) {
      const { supplier } = this;
      this.token = typeof supplier === 'string' ? Promise.resolve(supplier) : Promise.resolve(supplier());
      // A failed supplier call is retried by the next request, not remembered.
      this.token.catch(() => {
        this.token = undefined;
      });
    }
    const token = await this.token;
    const headers = {
      ...(init.headers as Record<string, string> | undefined),
      authorization: `Bearer ${token}`,
    };
    return { ...init, headers };
  }
}
