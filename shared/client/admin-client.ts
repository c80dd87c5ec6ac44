import { AdminHttp } from './admin-http.ts';
import { AcklineAdminArgumentError } from './errors.ts';
import { ServiceBuilder } from './http-transport.ts';
import { Namespaces } from './namespaces.ts';
import { Tenants } from './tenants.ts';
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
  private readonly tenantsApi: Tenants;

  /** Use {@link AcklineAdmin.builder}. */
  constructor(http: AdminHttp) {
    this.topicsApi = new Topics(http);
    this.namespacesApi = new Namespaces(http);
    this.tenantsApi = new Tenants(http);
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

  /**
   * Tenant administration.
   * @example const tenants = await admin.tenants().getTenants();
   */
  tenants(): Tenants {
    return this.tenantsApi;
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
export class AcklineAdminBuilder extends ServiceBuilder {
  constructor() {
    super(DEFAULT_REQUEST_TIMEOUT_MS);
  }

  /** The admin REST API's base URL, e.g. `http://127.0.0.1:8080`; a path prefix (API Gateway stage) is kept. */
  serviceHttpUrl(url: string): this {
    this.url = url;
    return this;
  }

  /** @throws AcklineAdminArgumentError when the service URL is missing or not http(s). */
  build(): AcklineAdmin {
    const { serviceUrl, ...rest } = this.settings(
      'admin service URL',
      (reason) => new AcklineAdminArgumentError(reason),
    );
    return new AcklineAdmin(new AdminHttp({ serviceHttpUrl: serviceUrl, ...rest }));
  }
}
