import { AdminHttp, type FetchFunction } from './admin-http.ts';
import { AcklineAdminArgumentError } from './errors.ts';
import { checkServiceSettings } from './http-transport.ts';
import { Namespaces } from './namespaces.ts';
import { Topics } from './topics.ts';

const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/**
 * The ackline admin client: Pulsar's admin REST API over `fetch`, grouped as Pulsar's Java
 * `PulsarAdmin`. Holds no connections; build one per configuration and share it.
 *
 * @example
 * const admin = AcklineAdmin.builder().serviceHttpUrl('http://127.0.0.1:8080').authToken(token).build();
 * await admin.topics().acknowledgeMessage('my-tenant/my-ns/orders', { ledgerId: '12', entryId: '3' });
 */
export class AcklineAdmin {
  private readonly topicsApi: Topics;
  private readonly namespacesApi: Namespaces;

  /** Use {@link AcklineAdmin.builder}. */
  constructor(http: AdminHttp) {
    this.topicsApi = new Topics(http);
    this.namespacesApi = new Namespaces(http);
  }

  /**
   * Starts configuring a client.
   * @example const admin = AcklineAdmin.builder().serviceHttpUrl('https://abc.execute-api.eu-west-1.amazonaws.com/prod').build();
   */
  static builder(): AcklineAdminBuilder {
    return new AcklineAdminBuilder();
  }

  /**
   * Topic administration.
   * @example const names = await admin.topics().getList('my-tenant/my-ns');
   */
  topics(): Topics {
    return this.topicsApi;
  }

  /**
   * Namespace administration.
   * @example const permissions = await admin.namespaces().getPermissions('my-tenant/my-ns');
   */
  namespaces(): Namespaces {
    return this.namespacesApi;
  }
}

/**
 * Configures an {@link AcklineAdmin}; only the service URL is required.
 *
 * @example
 * const admin = AcklineAdmin.builder()
 *   .serviceHttpUrl('http://127.0.0.1:8080')
 *   .authToken(process.env.ACKLINE_AUTH_TOKEN)
 *   .requestTimeoutMs(10_000)
 *   .build();
 */
export class AcklineAdminBuilder {
  private url: string | undefined;
  private token: string | undefined;
  private fetchFunction: FetchFunction | undefined;
  private timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS;

  /** The admin REST API's base URL, e.g. `http://127.0.0.1:8080`; a path prefix (API Gateway stage) is kept. */
  serviceHttpUrl(url: string): this {
    this.url = url;
    return this;
  }

  /** A token sent as `Authorization: Bearer <token>`; undefined or empty sends none. */
  authToken(token: string | undefined): this {
    this.token = token;
    return this;
  }

  /** The `fetch` to use (default: the global one); tests inject a fake. */
  fetch(fetchFunction: FetchFunction): this {
    this.fetchFunction = fetchFunction;
    return this;
  }

  /** How long one request may take before it fails (default 60 000 ms). */
  requestTimeoutMs(timeoutMs: number): this {
    this.timeoutMs = timeoutMs;
    return this;
  }

  /** @throws AcklineAdminArgumentError when the service URL is missing or not http(s). */
  build(): AcklineAdmin {
    const serviceHttpUrl = checkServiceSettings(
      this.url,
      this.timeoutMs,
      'admin service URL',
      (reason) => new AcklineAdminArgumentError(reason),
    );
    const fetchFunction: FetchFunction = this.fetchFunction ?? ((url, init) => fetch(url, init));
    return new AcklineAdmin(
      new AdminHttp({
        serviceHttpUrl,
        authToken: this.token || undefined,
        fetch: fetchFunction,
        requestTimeoutMs: this.timeoutMs,
      }),
    );
  }
}
