/**
 * pulsar-client's authentication classes. ackline authenticates every HTTP request with
 * `Authorization: Bearer <JWT>` (Pulsar's token authentication), so {@link AuthenticationToken} is
 * the one that works; the others are accepted by their constructors, as in pulsar-client, and refused
 * by `new Client(...)` with an error that says why.
 */

/** What `AuthenticationToken` takes: a token, or a function (sync or async) that supplies one. */
export type TokenSupplier = string | (() => string) | (() => Promise<string>);

/**
 * Token authentication, as Pulsar's: the JWT goes in every request's `Authorization: Bearer` header.
 * A supplier function is called once, before the first request of the client, and again when a
 * request is refused with 401 (an expired token), never per request.
 *
 * @example
 * const client = new Client({ serviceUrl, authentication: new AuthenticationToken({ token: process.env.TOKEN }) });
 */
export class AuthenticationToken {
  /** @internal the supplier, as given. */
  readonly token: TokenSupplier;

  constructor(params: { token: string | (() => string) | (() => Promise<string>) }) {
    if (params === null || typeof params !== 'object') {
      throw new Error('AuthenticationToken takes { token }: a string or a function that returns one');
    }
    const { token } = params;
    if (typeof token !== 'string' && typeof token !== 'function') {
      throw new Error('AuthenticationToken takes { token }: a string or a function that returns one');
    }
    this.token = token;
  }
}

/**
 * TLS client-certificate authentication. Accepted here; `new Client(...)` refuses it: client
 * certificates authenticate a TLS connection of Pulsar's binary protocol, and ackline's HTTP API
 * (API Gateway) authenticates bearer tokens.
 * @example new AuthenticationTls({ certificatePath, privateKeyPath }); // new Client({ authentication }) throws
 */
export class AuthenticationTls {
  readonly params: { certificatePath: string; privateKeyPath: string };

  constructor(params: { certificatePath: string; privateKeyPath: string }) {
    this.params = params;
  }
}

/** Athenz authentication; refused by `new Client(...)`: ackline takes JWTs ({@link AuthenticationToken}). */
export class AuthenticationAthenz {
  readonly params: unknown;

  constructor(params: string | AthenzConfig | AthenzX509Config) {
    this.params = params;
  }
}

export interface AthenzConfig {
  tenantDomain: string;
  tenantService: string;
  providerDomain: string;
  privateKey: string;
  ztsUrl: string;
  keyId?: string;
  principalHeader?: string;
  roleHeader?: string;
  caCert?: string;
  /** @deprecated */
  tokenExpirationTime?: string;
}

export class AthenzX509Config {
  providerDomain = '';
  privateKey = '';
  x509CertChain = '';
  ztsUrl = '';
  roleHeader?: string;
  caCert?: string;
}

/**
 * OAuth 2.0 authentication; refused by `new Client(...)`: fetch the access token yourself and give it
 * to {@link AuthenticationToken} as a supplier function.
 */
export class AuthenticationOauth2 {
  readonly params: unknown;

  constructor(params: {
    type: string;
    issuer_url: string;
    client_id?: string;
    client_secret?: string;
    private_key?: string;
    audience?: string;
    scope?: string;
  }) {
    this.params = params;
  }
}

/** Basic authentication; refused by `new Client(...)`: ackline takes JWTs ({@link AuthenticationToken}). */
export class AuthenticationBasic {
  readonly params: unknown;

  constructor(params: { username: string; password: string }) {
    this.params = params;
  }
}

/** Any of pulsar-client's authentication objects. */
export type AuthenticationOption =
  | AuthenticationTls
  | AuthenticationAthenz
  | AuthenticationToken
  | AuthenticationOauth2
  | AuthenticationBasic;

/**
 * The token supplier of a client's authentication, or undefined without one.
 * @throws Error when the authentication is not token authentication.
 */
export function tokenSupplierOf(authentication: AuthenticationOption | undefined): TokenSupplier | undefined {
  if (authentication === undefined || authentication === null) return undefined;
  if (authentication instanceof AuthenticationToken) return authentication.token;
  if (authentication instanceof AuthenticationTls) {
    throw new Error(
      "AuthenticationTls needs Pulsar's binary protocol: TLS client certificates authenticate its connections; ackline's HTTP API takes AuthenticationToken (a JWT)",
    );
  }
  const name = authentication.constructor?.name ?? typeof authentication;
  throw new Error(
    `${name} is not supported by ackline: its HTTP API authenticates AuthenticationToken (a JWT)`,
  );
}
