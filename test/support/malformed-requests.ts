import { MAX_REQUEST_BODY_BYTES } from '../../infra/api-routes.ts';
import { parseActions } from '../../shared/application/tenancy/manage-permissions.ts';
import { MessageId } from '../../shared/domain/message-id.ts';
import { validateSubscriptionName } from '../../shared/domain/subscription-name.ts';
import { parseSubscriptionType } from '../../shared/domain/subscription-type.ts';
import { TopicName } from '../../shared/domain/topic-name.ts';
import { initialPositionOf, messageIdsOf, resetCursorBodyOf } from '../../shared/http/admin-requests.ts';
import {
  parseIdsBody,
  parseOptionalHandles,
  parseSubscribeRequest,
} from '../../shared/http/consumer-requests.ts';
import { parseProduceRequest } from '../../shared/http/produce-request.ts';
import { MAX_NAME_BYTES } from '../../shared/http/request-parsing.ts';
import type { Random } from './random.ts';
import type { RawRequest } from './raw-http.ts';
import type { ApiRoute, RouteMatcher } from './route-table.ts';

/**
 * A seeded generator of malformed requests to the admin and data APIs, and the reasoning that keeps
 * them from changing anything.
 *
 * Generated requests are random (routes of the table with broken parameters, queries, bodies and
 * headers; random paths; a curated list of edge cases), so one can by chance be a valid request
 * that writes: `PUT .../topic` with a well-formed name creates a topic. Rather than trust each
 * generator, every request passes one gate, {@link refusalBeforeAnyWrite}: it works out which
 * route the stack will run (the same matching as the gateway and middy's router) and names a defect
 * that route refuses before its first write, as read from the route's code: a GET (every GET
 * route only reads), an unknown route, a refused token, an undecodable or invalid path
 * parameter, a body or query parameter the route's own parser refuses (the product parsers are
 * called here, so the gate cannot drift from them), a position that is not written. When it finds
 * none, the generator breaks one path parameter with invalid percent-encoding, which every route
 * refuses while building the request (http-api toRequest), and checks the gate again.
 */

/** What the stack holds for the suite: the targets the generator aims at, half of the time. */
export interface FuzzFixture {
  readonly tenant: string;
  readonly namespaces: readonly string[];
  /** Local names of the fixture topics and of their partitions. */
  readonly topics: readonly string[];
  readonly subscriptions: readonly string[];
  /** A consumer (Shared, so it refuses cumulative acknowledgement) of {@link consumerTopic}. */
  readonly consumerId: string;
  /** `L:E` of every written entry of the fixture topics. */
  readonly writtenPositions: ReadonlySet<string>;
  readonly roles: readonly string[];
  readonly cluster: string;
  readonly superuserToken: string;
  /** Header values the stack refuses: 401 (no, malformed, expired, forged) or 403 (a role with no grant). */
  readonly refusedAuthorizations: readonly string[];
}

export interface FuzzRequest extends RawRequest {
  /** What was generated, for failure messages. */
  readonly description: string;
  /** The Authorization header is refused (401/403) or repeated: no route runs as a caller that may write. */
  readonly refusedAuthorization?: boolean;
  /** Bytes Node's HTTP parser refuses for certain (bad request line, header or framing). */
  readonly unparsable?: boolean;
}

const BASE = 'http://localhost';

/** The refusal of a request whose route is a GET: it may succeed, since every GET route only reads. */
export const READ_ONLY = 'GET routes only read';

/** Invalid percent-encoding: decodeURIComponent throws on each, so toRequest answers 400. */
export const BAD_PERCENT = ['%ZZ', '%', '%E0%A4%A', '%C0%AF', '%ED%A0%80', '%FF', '%%', '%G1', '%e'];

/** Ids and counts: beyond 64 bits, negative, floats, exponents, other digits, empty, encoded. */
export const NUMBERS = [
  '18446744073709551616',
  '18446744073709551615',
  '9223372036854775808',
  '9223372036854775807',
  '340282366920938463463374607431768211456',
  '9'.repeat(40),
  '-1',
  '-0',
  '1e400',
  '1e3',
  '1.5',
  '0x10',
  '0b1',
  '+1',
  ' 1',
  '١٢',
  '１',
  'NaN',
  'Infinity',
  '',
  '0000000000000000000001',
  '4294967296',
  '2147483648',
  '999999',
  '0',
  '1',
  '5',
  '101',
  '20001',
  'abc',
  '1,2',
  '%31',
  '%2D1',
];

/** Path segments and parameter values that are not what any route expects. */
const JUNK = [
  ...BAD_PERCENT,
  '%00',
  '%0A',
  '%0D%0A',
  '%2F',
  '%2e%2e',
  '%5C',
  '%20',
  '%7F',
  '%C3%A9',
  '%F0%9F%92%A5',
  '%E2%80%AE',
  '%EF%BB%BF',
  'é',
  '💥',
  'Ω≈ç√∫',
  '\u202egnp.exe',
  '\u200b',
  'ｆｕｌｌ',
  '日本語',
  'Z̤͔ͧ̑̓',
  '..',
  '.',
  '~',
  '*',
  '{topic}',
  ';a=b',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'null',
  'undefined',
  "' OR '1'='1",
  '<script>alert(1)</script>',
  `$${'{'}jndi:ldap://x/a}`,
  'x'.repeat(300),
  'a'.repeat(3000),
  ...NUMBERS,
];

/** Literal segments of the route table, so random paths often get close to a real route. */
const ROUTE_WORDS = [
  'admin',
  'topics',
  'consumers',
  'v1',
  'v2',
  'persistent',
  'non-persistent',
  'namespaces',
  'permissions',
  'subscription',
  'subscriptions',
  'stats',
  'internalStats',
  'partitions',
  'acknowledgeMessage',
  'audit',
  'ledger',
  'entry',
  'position',
  'skip',
  'skipByMessageIds',
  'receive',
  'ack',
  'nack',
  'ack-cumulative',
  'redeliver-unacknowledged',
  'brokers',
  'health',
];

const QUERY_NAMES = [
  'ledgerId',
  'entryId',
  'subscriptionNames',
  'dryRun',
  'subscriptionType',
  'maxMessages',
  'waitMs',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  '',
  'é',
  '%ZZ',
  'x[]',
  'a.b',
  'q'.repeat(1000),
];

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'] as const;

const CONTENT_TYPES = [
  'application/json',
  'text/plain',
  'application/xml',
  'multipart/form-data; boundary=xyz',
  'application/json; charset=utf-16',
  'application/x-www-form-urlencoded',
  '',
  '*/*',
];

/** Raw text, not JSON.stringify: numbers JavaScript cannot hold, broken syntax, odd encodings. */
const JUNK_BODIES = [
  '{',
  '}',
  '[',
  '{"a":',
  'null',
  'true',
  '0',
  '-0',
  '1e400',
  '18446744073709551616',
  '9'.repeat(400),
  '"text"',
  '[]',
  '{}',
  'undefined',
  'NaN',
  "{'single':'quotes'}",
  '{"a":1,}',
  '\u0000',
  '\uFEFF{}',
  '{"a":1,"a":2}',
  '{"__proto__":{"admin":true}}',
  '{"constructor":{"prototype":{"x":1}}}',
  '[1,2,3]',
  `${'['.repeat(5000)}${']'.repeat(5000)}`,
  '💥',
  '\u202e{}',
  'a=1&b=2',
  '<xml/>',
];

function decodes(value: string): boolean {
  try {
    decodeURIComponent(value);
    return true;
  } catch {
    return false;
  }
}

function refusedBy(parse: () => unknown): boolean {
  try {
    parse();
    return false;
  } catch {
    return true;
  }
}

/** Percent-encodes what cannot stand raw in a request target, keeping `%` so broken escapes stay broken. */
export function encodeSegment(value: string): string {
  return value.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@%]/gu, (c) => encodeURIComponent(c));
}

function encodeQueryPart(value: string): string {
  return value.replace(/[^A-Za-z0-9\-._~!$'()*,;:@%/?]/gu, (c) => encodeURIComponent(c));
}

interface Target {
  readonly route: ApiRoute;
  readonly raw: Record<string, string>;
  readonly decoded: Record<string, string>;
  readonly query: URLSearchParams;
  readonly pathname: string;
}

/**
 * Why the stack refuses `request` before it writes anything, or undefined when nothing guarantees
 * it. Each reason below cites the check that answers, all of which run before the route's first
 * write (see functions/admin-api/routes.ts, functions/data-api/routes.ts and the use cases they
 * call).
 */
export function refusalBeforeAnyWrite(
  request: FuzzRequest,
  fixture: FuzzFixture,
  matcher: RouteMatcher,
): string | undefined {
  if (request.unparsable) return 'Node refuses the bytes (400)';
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  if (body && body.length > MAX_REQUEST_BODY_BYTES) return 'body over the gateway limit (413)';
  let url: URL;
  try {
    url = new URL(Buffer.from(request.target).toString('latin1'), BASE);
  } catch {
    return 'the target is not a URL (400)';
  }
  if (request.omitHost && (request.version ?? 'HTTP/1.1') === 'HTTP/1.1') return 'no Host (400)';
  const matched = matcher.match(request.method.toUpperCase(), url.pathname);
  if (!matched) return 'no route (404)';
  const { route } = matched;
  if (route.method === 'GET') return READ_ONLY;
  if (request.refusedAuthorization) return 'refused token (401/403)';
  const raw = matched.params;
  if (Object.values(raw).some((value) => !decodes(value))) return 'undecodable path parameter (400)';
  const decoded = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, decodeURIComponent(v)]));
  if (Object.values(decoded).some((value) => Buffer.byteLength(value) > MAX_NAME_BYTES)) {
    return 'path parameter too long (400)';
  }
  const target: Target = { route, raw, decoded, query: url.searchParams, pathname: url.pathname };
  return (
    nameRefusal(target, fixture) ??
    consumerRefusal(target, fixture) ??
    routeRefusal(target, body?.toString('utf8'), fixture)
  );
}

/** topicOf / v1TopicOf / namespaceOf / TopicName.fromRest in the handlers, before any use case. */
function nameRefusal({ route, raw, decoded }: Target, fixture: FuzzFixture): string | undefined {
  if (raw.domain !== undefined && raw.domain !== 'persistent' && raw.domain !== 'non-persistent') {
    return 'unknown domain (404)';
  }
  const invalid = refusedBy(() => {
    if (route.params.includes('property')) {
      const v1 = TopicName.fromRestV1({
        domain: raw.domain as string,
        property: decoded.property as string,
        cluster: decoded.cluster as string,
        namespace: decoded.namespace as string,
        encodedTopic: raw.topic as string,
      });
      if (v1.cluster !== fixture.cluster) throw new Error('unknown cluster (404)');
    } else if (route.params.includes('topic')) {
      TopicName.fromRest(
        raw.domain as string,
        decoded.tenant as string,
        decoded.namespace as string,
        raw.topic as string,
      );
    } else if (route.params.includes('namespace')) {
      TopicName.parse(`persistent://${decoded.tenant}/${decoded.namespace}/x`);
    }
  });
  return invalid ? 'invalid topic, namespace or cluster name (400/404)' : undefined;
}

/** consumerIdOf and requireConsumer: only the fixture consumer exists among the ids generated. */
function consumerRefusal({ decoded }: Target, fixture: FuzzFixture): string | undefined {
  if (decoded.consumerId === undefined) return undefined;
  return decoded.consumerId === fixture.consumerId ? undefined : 'no such consumer (404)';
}

/** What the route checks below read of one request. */
interface RouteInput {
  readonly target: Target;
  readonly fixture: FuzzFixture;
  /** The last segment of the route's path, e.g. `ack` or `{subscription}`. */
  readonly tail: string;
  /** The last value of a query parameter. */
  readonly last: (name: string) => string | undefined;
  /** The body as JSON, undefined when blank; throws when it is not JSON. */
  readonly json: () => unknown;
  /** Whether `parse` refuses the body (a body that is not JSON included). */
  readonly bodyRefused: (parse: (body: unknown) => unknown) => boolean;
}

function routeRefusal(
  target: Target,
  bodyText: string | undefined,
  fixture: FuzzFixture,
): string | undefined {
  const json = (): unknown =>
    bodyText === undefined || bodyText.trim() === '' ? undefined : JSON.parse(bodyText);
  const path = target.route.path;
  const input: RouteInput = {
    target,
    fixture,
    tail: path.slice(path.lastIndexOf('/') + 1),
    last: (name) => target.query.getAll(name).at(-1),
    json,
    bodyRefused: (parse) => refusedBy(() => parse(json())),
  };
  switch (target.route.method) {
    case 'PUT':
      return putRefusal(input);
    case 'POST':
      return postRefusal(input);
    default:
      return undefined;
  }
}

/** Creating partitions or a subscription. */
function putRefusal({ target, tail, last, bodyRefused }: RouteInput): string | undefined {
  if (tail === 'partitions') {
    return bodyRefused((n) => {
      if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) throw new Error('not a count');
    })
      ? 'partitions body refused (400)'
      : undefined;
  }
  if (tail === '{subscription}') {
    if (refusedBy(() => parseSubscriptionType(last('subscriptionType') ?? 'Exclusive'))) {
      return 'subscriptionType refused (400)';
    }
    if (refusedBy(() => validateSubscriptionName(target.decoded.subscription as string))) {
      return 'subscription name refused (400)';
    }
    return bodyRefused(initialPositionOf) ? 'initialPosition refused (400)' : undefined;
  }
  return undefined;
}

function postRefusal(input: RouteInput): string | undefined {
  const { target, tail, bodyRefused } = input;
  const path = target.route.path;
  if (path === '/topics/{domain}/{tenant}/{namespace}/{topic}') {
    return bodyRefused((body) => parseProduceRequest(body, Date.now()))
      ? 'produce body refused (400/413)'
      : undefined;
  }
  if (path.startsWith('/consumers/{domain}/')) return subscribeRefusal(input);
  if (tail === 'receive') return receiveRefusal(input);
  if (tail === 'ack' || tail === 'nack') return ackRefusal(input);
  if (tail === 'ack-cumulative') {
    // The fixture consumer is Shared: acknowledgeCumulative refuses it (412) before reading the id.
    return 'cumulative ack on a Shared consumer (412), or body refused';
  }
  if (tail === 'redeliver-unacknowledged') {
    return bodyRefused(parseOptionalHandles) ? 'redeliver body refused (400)' : undefined;
  }
  if (tail === '{role}') return bodyRefused(parseActions) ? 'actions refused (400)' : undefined;
  if (isCursorOperation(path, tail)) return cursorRefusal(input);
  if (tail === '{count}')
    return /^\d{1,15}$/.test(target.decoded.count ?? '') ? undefined : 'count refused (400)';
  if (tail === 'skipByMessageIds') return skipByMessageIdsRefusal(input);
  if (tail === 'acknowledgeMessage') return acknowledgeMessageRefusal(input);
  return undefined;
}

/** POST /consumers/{domain}/.../subscription/{subscription}: subscribing. */
function subscribeRefusal({ target, bodyRefused }: RouteInput): string | undefined {
  if (refusedBy(() => validateSubscriptionName(target.decoded.subscription as string))) {
    return 'subscription name refused (400)';
  }
  return bodyRefused((body) => parseSubscribeRequest(TopicName.parse('persistent://t/n/x'), 's', body))
    ? 'subscribe body refused (400)'
    : undefined;
}

function receiveRefusal({ last }: RouteInput): string | undefined {
  const bad = (value: string | undefined, max: number) =>
    value !== undefined && value !== '' && (!/^\d{1,6}$/.test(value) || Number(value) > max);
  return bad(last('maxMessages'), 100) || last('maxMessages') === '0' || bad(last('waitMs'), 20_000)
    ? 'maxMessages or waitMs refused (400)'
    : undefined;
}

/** POST /consumers/{consumerId}/ack and /nack. */
function ackRefusal({ tail, fixture, json, bodyRefused }: RouteInput): string | undefined {
  if (bodyRefused(parseIdsBody)) return 'ids body refused (400)';
  const { messageIds } = parseIdsBody(json());
  if (messageIds.some((id) => refusedBy(() => MessageId.parse(id)))) return 'message id refused (400)';
  // An ack naming an unwritten entry is refused before anything is written (requireWritten).
  // A nack of one is not (it answers 204 and does nothing), so it does not count here.
  const unwritten = messageIds.some(
    (id) => !fixture.writtenPositions.has(MessageId.parse(id).position.toString()),
  );
  return tail === 'ack' && unwritten ? 'unwritten position (404)' : undefined;
}

/** Cursor operations: reset-cursor, skip_all, expireMessages. */
function isCursorOperation(path: string, tail: string): boolean {
  return (
    tail === 'resetcursor' ||
    tail === 'skip_all' ||
    path.endsWith('/resetcursor/{timestamp}') ||
    path.endsWith('/expireMessages/{expireTimeInSeconds}')
  );
}

/**
 * Every parameter of a cursor operation is parsed before the first write (an audit record of a
 * refusal included).
 */
function cursorRefusal({ target, tail, last, bodyRefused }: RouteInput): string | undefined {
  const booleanRefused = (name: string) => {
    const value = last(name);
    return value !== undefined && !['', 'true', 'false'].includes(value);
  };
  if (tail === 'resetcursor' && bodyRefused(resetCursorBodyOf)) return 'resetcursor body refused (400)';
  if (booleanRefused('authoritative') || booleanRefused('dryRun')) return 'a boolean refused (400)';
  if (tail === 'resetcursor' && booleanRefused('isExcluded')) return 'isExcluded refused (400)';
  const number = target.decoded.timestamp ?? target.decoded.expireTimeInSeconds;
  if (tail !== 'resetcursor' && tail !== 'skip_all' && !/^\d{1,15}$/.test(number ?? '')) {
    return 'timestamp or expireTimeInSeconds refused (400)';
  }
  return undefined;
}

function skipByMessageIdsRefusal({ fixture, json, bodyRefused }: RouteInput): string | undefined {
  if (bodyRefused(messageIdsOf)) return 'skipByMessageIds body refused (400)';
  const unwritten = messageIdsOf(json()).some((p) => !fixture.writtenPositions.has(p.toString()));
  return unwritten ? 'unwritten position (404)' : undefined;
}

/** A ledger or entry id the admin acknowledge refuses: missing, not 1 to 19 digits, or past 2^63 - 1. */
function idRefused(text: string | undefined): boolean {
  return text === undefined || !/^\d{1,19}$/.test(text) || BigInt(text) > 2n ** 63n - 1n;
}

/** POST .../acknowledgeMessage (PIP-423). */
function acknowledgeMessageRefusal({ target, fixture, last }: RouteInput): string | undefined {
  const { query } = target;
  const known = ['ledgerId', 'entryId', 'subscriptionNames', 'dryRun', 'authoritative'];
  if ([...query.keys()].some((name) => !known.includes(name))) return 'unknown query parameter (400)';
  if (
    query.has('subscriptionNames') &&
    query
      .getAll('subscriptionNames')
      .join(',')
      .split(',')
      .every((n) => n.trim() === '')
  ) {
    return 'empty subscriptionNames (400)';
  }
  if (
    query
      .getAll('subscriptionNames')
      .some((names) => names.split(',').some((n) => Buffer.byteLength(n.trim()) > MAX_NAME_BYTES))
  ) {
    return 'subscription name too long (400)';
  }
  const dryRun = last('dryRun');
  if (dryRun !== undefined && !['', 'true', 'false'].includes(dryRun)) return 'dryRun refused (400)';
  const ledgerId = last('ledgerId');
  const entryId = last('entryId');
  if (idRefused(ledgerId) || idRefused(entryId)) return 'ids refused (412, audited)';
  // resolvePosition: a position no fixture topic wrote is not a message of any topic the
  // generator can name (it creates none), 404 (audited).
  const position = `${BigInt(ledgerId as string)}:${BigInt(entryId as string)}`;
  return fixture.writtenPositions.has(position) ? undefined : 'unwritten position (404, audited)';
}

/** A curated request: described as `curated METHOD target` unless it says otherwise. */
type CuratedRequest = Omit<FuzzRequest, 'description'> & { description?: string };

/** What most curated requests aim at: the first fixture topic, as the superuser. */
interface CuratedTargets {
  /** The topic's admin path. */
  readonly topic: string;
  /** The topic's produce path (data API). */
  readonly produce: string;
  /** The superuser's Authorization and a JSON Content-Type. */
  readonly auth: (readonly [string, string | Buffer])[];
}

/**
 * The requests of one run: {@link curated} first (the same every run), then random ones up to
 * `total`, each passed through {@link refusalBeforeAnyWrite} (and broken further if needed).
 */
export class MalformedRequests {
  constructor(
    private readonly random: Random,
    private readonly fixture: FuzzFixture,
    private readonly matcher: RouteMatcher,
  ) {}

  generate(total: number): { request: FuzzRequest; refusal: string }[] {
    const requests = [...this.curated()];
    while (requests.length < total) {
      const roll = this.random.next();
      requests.push(
        roll < 0.7 ? this.routeRequest() : roll < 0.92 ? this.randomPathRequest() : this.headerRequest(),
      );
    }
    return requests.map((request) => this.gated(request));
  }

  /** The request with the reason it cannot write; broken in one path parameter first when it has none. */
  private gated(request: FuzzRequest): { request: FuzzRequest; refusal: string } {
    const refusal = refusalBeforeAnyWrite(request, this.fixture, this.matcher);
    if (refusal) return { request, refusal };
    const url = new URL(Buffer.from(request.target).toString('latin1'), BASE);
    const matched = this.matcher.match(request.method.toUpperCase(), url.pathname);
    const segments = url.pathname.split('/');
    const routeSegments = matched?.route.path.split('/') ?? [];
    const paramIndexes = routeSegments.flatMap((segment, i) => (segment.startsWith('{') ? [i] : []));
    const at = paramIndexes.length > 0 ? this.random.pick(paramIndexes) : segments.length - 1;
    segments[at] = `${segments[at]}${this.random.pick(BAD_PERCENT)}`;
    const broken: FuzzRequest = {
      ...request,
      target: `${segments.join('/')}${url.search}`,
      description: `${request.description} [broken path: no defect stopped a write]`,
    };
    const after = refusalBeforeAnyWrite(broken, this.fixture, this.matcher);
    if (!after) throw new Error(`generator bug: cannot make ${request.method} ${broken.target} harmless`);
    return { request: broken, refusal: after };
  }

  private authorized(
    extra: readonly (readonly [string, string | Buffer])[] = [],
  ): (readonly [string, string | Buffer])[] {
    return [['Authorization', `Bearer ${this.fixture.superuserToken}`], ...extra];
  }

  private pickSegment(name: string): string {
    const r = this.random;
    const f = this.fixture;
    const junk = () => r.pick(JUNK);
    switch (name) {
      case 'domain':
        return r.chance(0.8) ? 'persistent' : r.chance(0.3) ? 'non-persistent' : junk();
      case 'tenant':
      case 'property':
        return r.chance(0.75) ? f.tenant : r.chance(0.4) ? `${f.tenant}-none` : junk();
      case 'namespace':
        return r.chance(0.85) ? r.pick(f.namespaces) : junk();
      case 'cluster':
        return r.chance(0.7) ? f.cluster : r.chance(0.5) ? 'other-cluster' : junk();
      case 'topic':
        return r.chance(0.7) ? r.pick(f.topics) : r.chance(0.5) ? `fz-none-${r.int(1000)}` : junk();
      case 'subscription':
        return r.chance(0.6)
          ? r.pick(f.subscriptions)
          : r.chance(0.5)
            ? r.pick(['sub-none', 'é', '💥', 'a b'])
            : junk();
      case 'consumerId':
        return r.chance(0.6) ? f.consumerId : r.chance(0.5) ? `c${r.int(1e9)}abcdefghij` : junk();
      case 'role':
        return r.chance(0.5) ? r.pick(f.roles) : junk();
      case 'position':
      case 'count':
      case 'ledgerId':
      case 'entryId':
      case 'timestamp':
      case 'expireTimeInSeconds':
        return r.pick(NUMBERS);
      default:
        return junk();
    }
  }

  private routeRequest(): FuzzRequest {
    const r = this.random;
    const route = r.pick(this.matcher.routes);
    const values: Record<string, string> = {};
    const path = route.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
      values[name] = this.pickSegment(name);
      return encodeSegment(values[name]);
    });
    const method = r.chance(0.9) ? route.method : r.pick(METHODS);
    const query = this.queryFor(route);
    const body = this.bodyFor(route);
    const headers = this.authorized(
      r.chance(0.8) ? [['Content-Type', 'application/json']] : [['Content-Type', r.pick(CONTENT_TYPES)]],
    );
    return {
      method,
      target: `${path}${query}`,
      headers,
      ...(body === undefined ? {} : { body }),
      description: `${method} ${route.path} ${JSON.stringify(values)} query=${query.slice(0, 120)} body=${JSON.stringify(String(body ?? '').slice(0, 160))}`,
    };
  }

  private queryFor(route: ApiRoute): string {
    const r = this.random;
    const parts: string[] = [];
    const tail = route.path.slice(route.path.lastIndexOf('/') + 1);
    const value = () => (r.chance(0.5) ? r.pick(NUMBERS) : r.pick(JUNK));
    if (tail === 'acknowledgeMessage') {
      if (r.chance(0.9)) parts.push(`ledgerId=${encodeQueryPart(r.chance(0.3) ? '1' : r.pick(NUMBERS))}`);
      if (r.chance(0.9)) parts.push(`entryId=${encodeQueryPart(r.pick(NUMBERS))}`);
      if (r.chance(0.6)) {
        parts.push(
          `subscriptionNames=${encodeQueryPart(r.pick([...this.fixture.subscriptions, '', ',', ' , ', 'a,,b', ...JUNK.slice(0, 20)]))}`,
        );
      }
      if (r.chance(0.4))
        parts.push(`dryRun=${encodeQueryPart(r.pick(['true', 'false', 'yes', '1', 'TRUE', '']))}`);
    } else if (tail === '{subscription}' && route.method === 'PUT') {
      if (r.chance(0.8)) {
        parts.push(
          `subscriptionType=${encodeQueryPart(r.pick(['Shared', 'Exclusive', 'shared', 'Key_shared', 'Failover ', '', '1', ...JUNK.slice(0, 10)]))}`,
        );
      }
    } else if (tail === 'receive') {
      if (r.chance(0.8)) parts.push(`maxMessages=${encodeQueryPart(r.pick(NUMBERS))}`);
      if (r.chance(0.6)) parts.push(`waitMs=${encodeQueryPart(r.pick(NUMBERS))}`);
    }
    const extras = r.chance(0.3) ? r.intBetween(1, 4) : 0;
    for (let i = 0; i < extras; i++)
      parts.push(`${encodeQueryPart(r.pick(QUERY_NAMES))}=${encodeQueryPart(value())}`);
    if (r.chance(0.05)) parts.push(r.pick(['', '&', '=', '==', '&&&', 'a', '#frag', '?']));
    return parts.length > 0 ? `?${parts.join('&')}` : '';
  }

  private bodyFor(route: ApiRoute): string | undefined {
    const r = this.random;
    const tail = route.path.slice(route.path.lastIndexOf('/') + 1);
    if (r.chance(0.15)) return r.pick(JUNK_BODIES);
    if (route.method === 'GET' || route.method === 'DELETE')
      return r.chance(0.2) ? r.pick(JUNK_BODIES) : undefined;
    if (route.path === '/topics/{domain}/{tenant}/{namespace}/{topic}')
      return JSON.stringify(this.produceBody());
    if (route.path.startsWith('/consumers/{domain}/')) return JSON.stringify(this.subscribeBody());
    if (tail === 'ack' || tail === 'nack') return JSON.stringify(this.idsBody());
    if (tail === 'ack-cumulative')
      return JSON.stringify({ messageId: r.pick([...NUMBERS, '1:0:-1', '1:0', 'x'.repeat(101)]) });
    if (tail === 'resetcursor') {
      return JSON.stringify(
        r.pick<unknown>([
          { ledgerId: 1, entryId: -1 },
          { ledgerId: '1' },
          { ledgerId: 1, entryId: 0, batchIndex: 3 },
          { ledgerId: 1, entryId: 0, partitionIndex: -2 },
          { ledgerId: 1, entryId: 0, isExcluded: 'yes' },
          { ledgerId: 1, entryId: 0, excluded: 'yes' },
          { ledgerId: 1, entryId: 0, excluded: true, isExcluded: false },
          { ledgerId: 2 ** 64, entryId: 0 },
          [1, 0],
          '1:0',
        ]),
      );
    }
    if (tail === 'redeliver-unacknowledged') {
      return JSON.stringify(
        r.pick<unknown>([
          { deliveryHandles: 'x' },
          { deliveryHandles: [1] },
          { extra: 1 },
          [],
          'x',
          1,
          { deliveryHandles: ['x'.repeat(4097)] },
        ]),
      );
    }
    if (tail === '{role}') {
      return JSON.stringify(
        r.pick<unknown>([
          ['produce', 'delete_everything'],
          [1],
          { actions: ['produce'] },
          'produce',
          [null],
          ['PRODUCE'],
          ['produce '],
        ]),
      );
    }
    if (tail === 'partitions')
      return r.pick([
        '0',
        '-1',
        '1.5',
        '"2"',
        '[2]',
        '{"partitions":2}',
        '1e400',
        '18446744073709551616',
        '9007199254740993',
        'null',
        'true',
        '100000',
        '2',
      ]);
    if (tail === 'skipByMessageIds') return JSON.stringify(this.skipIdsBody());
    if (tail === '{subscription}') {
      return JSON.stringify(
        r.pick<unknown>([
          { initialPosition: 'earliest' },
          { initialPosition: 1 },
          [],
          'Earliest',
          1,
          { initialPosition: null },
          { initialPosition: 'Earliest' },
        ]),
      );
    }
    return r.chance(0.5) ? r.pick(JUNK_BODIES) : undefined;
  }

  /** A produce body with one defect, among messages that are valid on their own (unicode payloads included). */
  private produceBody(): unknown {
    const r = this.random;
    const good = () => ({
      payload: r.pick(['ok', 'é💥', '\u0000\u0001', '\u202e', '日本語', 'x'.repeat(r.int(2000))]),
    });
    const defects: Record<string, unknown>[] = [
      { payload: 123 },
      { payload: null },
      { payload: ['a'] },
      {},
      { payload: 'a', key: 1 },
      { payload: 'a', key: 'k'.repeat(1025) },
      { payload: 'a', properties: 'x' },
      { payload: 'a', properties: { a: 1 } },
      { payload: 'a', properties: { a: null } },
      { payload: 'a', properties: { ['k'.repeat(1025)]: 'v' } },
      { payload: 'a', properties: { a: 'v'.repeat(16_385) } },
      { payload: 'a', eventTime: -1 },
      { payload: 'a', eventTime: 1.5 },
      { payload: 'a', eventTime: '1' },
      { payload: 'a', deliverAt: 10_000_000_000_000 },
      { payload: 'a', deliverAfterMs: -5 },
      { payload: 'a', deliverAt: 1, deliverAfterMs: 1 },
      { payload: 'a', payloadX: 1 },
      { payload: 'a', eventTime: true },
    ];
    const messages = [good(), good()];
    messages.splice(r.int(3), 0, r.pick(defects) as { payload: string });
    return r.pick<unknown>([
      { messages },
      { messages },
      { messages },
      { messages: [] },
      { messages: 'x' },
      { messages: null },
      { messages: {} },
      { message: messages },
      messages,
    ]);
  }

  private subscribeBody(): unknown {
    const r = this.random;
    return r.pick<unknown>([
      { subscriptionType: 'shared' },
      { subscriptionType: 'Exclusiv' },
      { subscriptionType: 1 },
      { subscriptionType: 'Shared', extra: true },
      { subscriptionType: 'Shared', subscriptionInitialPosition: 'earliest' },
      { subscriptionType: 'Shared', ackTimeoutMs: -1 },
      { subscriptionType: 'Shared', ackTimeoutMs: 1.5 },
      { subscriptionType: 'Shared', ackTimeoutMs: '1000' },
      { subscriptionType: 'Shared', ackTimeoutMs: 86_400_001 },
      { subscriptionType: 'Shared', negativeAckRedeliveryBackoff: { minDelayMs: '1' } },
      { subscriptionType: 'Shared', negativeAckRedeliveryBackoff: { className: '' } },
      { subscriptionType: 'Shared', negativeAckRedeliveryBackoff: { className: 'x', extra: 1 } },
      { subscriptionType: 'Shared', deadLetterPolicy: { maxRedeliverCount: 1.5 } },
      { subscriptionType: 'Shared', deadLetterPolicy: {} },
      { subscriptionType: 'Shared', consumerName: '' },
      { subscriptionType: 'Shared', consumerName: 'n'.repeat(257) },
      [],
      'Shared',
      1,
      { subscriptionType: 'Shared' },
    ]);
  }

  private idsBody(): unknown {
    const r = this.random;
    const id = () =>
      r.pick([
        `${r.pick(NUMBERS)}:0:-1`,
        `1:${r.pick(NUMBERS)}:-1`,
        `1:0:${r.pick(NUMBERS)}`,
        '1:0',
        '1:0:-1:5',
        'a:b:c',
        '💥',
        `${r.int(100)}:${r.int(100)}:-1`,
      ]);
    return r.pick<unknown>([
      {},
      { messageIds: [] },
      { messageIds: 'x' },
      { messageIds: [1] },
      { messageIds: [''] },
      { messageIds: ['x'.repeat(4097)] },
      { deliveryHandles: [null] },
      { deliveryHandles: ['garbage', r.pick(JUNK)] },
      { messageIds: Array.from({ length: 1001 }, () => '1:0:-1') },
      { messageIds: [id()], extra: 1 },
      { messageIds: [id(), id()] },
      { messageIds: [id()] },
      null,
      [],
    ]);
  }

  private skipIdsBody(): unknown {
    const r = this.random;
    const part = () => r.pick<unknown>([...NUMBERS, -1, 1.5, 1e300, null, true, [], {}, 7]);
    return r.pick<unknown>([
      { type: 'messageId', messageIds: [{ ledgerId: part(), entryId: part() }] },
      {
        type: 'messageId',
        messageIds: [
          { ledgerId: 1, entryId: 0 },
          { ledgerId: part(), entryId: part() },
        ],
      },
      { type: 'other', messageIds: [{ ledgerId: 1, entryId: 0 }] },
      { messageIds: [] },
      { messageIds: {} },
      { messageIds: [null] },
      { messageIds: Array.from({ length: 10_001 }, () => ({ ledgerId: 1, entryId: 0 })) },
      [],
      'x',
    ]);
  }

  /** A random path under the API (or beside it): route words, fixture names, junk; any method. */
  private randomPathRequest(): FuzzRequest {
    const r = this.random;
    const first = r.pick(['admin', 'admin', 'topics', 'consumers', ...JUNK.slice(0, 12)]);
    const segments = [first];
    const count = r.intBetween(0, 9);
    for (let i = 0; i < count; i++) {
      const roll = r.next();
      segments.push(
        roll < 0.45
          ? r.pick(ROUTE_WORDS)
          : roll < 0.65
            ? r.pick([
                this.fixture.tenant,
                ...this.fixture.namespaces,
                ...this.fixture.topics,
                ...this.fixture.subscriptions,
              ])
            : r.pick(JUNK),
      );
    }
    const method = r.pick([...METHODS, 'GET', 'POST']);
    const trailing = r.chance(0.1) ? '/' : r.chance(0.05) ? '//' : '';
    const query = r.chance(0.3)
      ? `?${encodeQueryPart(r.pick(QUERY_NAMES))}=${encodeQueryPart(r.pick(JUNK))}`
      : '';
    const body = r.chance(0.3) ? r.pick(JUNK_BODIES) : undefined;
    const target = `/${segments.map(encodeSegment).join('/')}${trailing}${query}`;
    return {
      method,
      target,
      headers: this.authorized(),
      ...(body === undefined ? {} : { body }),
      description: `random path ${method} ${target.slice(0, 200)}`,
    };
  }

  /** A route request with odd headers: a refused or repeated Authorization, or strange others. */
  private headerRequest(): FuzzRequest {
    const r = this.random;
    const base = this.routeRequest();
    const refused = r.pick(this.fixture.refusedAuthorizations);
    const variants: { headers: (readonly [string, string | Buffer])[]; refused: boolean; what: string }[] = [
      { headers: [['Authorization', refused]], refused: true, what: 'refused authorization' },
      { headers: [], refused: true, what: 'no authorization' },
      {
        headers: this.authorized([['Authorization', `Bearer ${this.fixture.superuserToken}`]]),
        refused: true,
        what: 'two identical authorizations',
      },
      {
        headers: this.authorized([['authorization', refused]]),
        refused: true,
        what: 'valid then refused authorization',
      },
      {
        headers: [['authorization', refused], ...this.authorized()],
        refused: true,
        what: 'refused then valid authorization',
      },
      {
        headers: this.authorized([['X-Unicode', Buffer.from('héllo 💥 \u202e', 'utf8')]]),
        refused: false,
        what: 'UTF-8 header value',
      },
      {
        headers: this.authorized([
          ['X-Forwarded-For', '1.2.3.4, ::1'],
          ['X-HTTP-Method-Override', 'DELETE'],
          ['Origin', 'http://evil.example'],
          ['Cookie', 'session=1'],
          ['Content-Encoding', 'gzip'],
          ['Accept', 'text/html'],
        ]),
        refused: false,
        what: 'proxy and override headers',
      },
      { headers: this.authorized([['X-Long', 'a'.repeat(8_000)]]), refused: false, what: '8 KB header' },
      {
        headers: this.authorized(Array.from({ length: 120 }, (_, i) => [`X-N-${i}`, String(i)] as const)),
        refused: false,
        what: '120 headers',
      },
      {
        headers: [['Authorization', `bearer ${this.fixture.superuserToken}`]],
        refused: false,
        what: 'lower-case scheme',
      },
    ];
    const variant = r.pick(variants);
    return {
      ...base,
      headers: variant.headers,
      refusedAuthorization: variant.refused,
      description: `${base.description} headers: ${variant.what}`,
    };
  }

  /** The same edge cases every run: big numbers in every numeric slot, oversized bodies, protocol garbage. */
  private curated(): FuzzRequest[] {
    const f = this.fixture;
    const at: CuratedTargets = {
      topic: `/admin/v2/persistent/${f.tenant}/${f.namespaces[0]}/${f.topics[0]}`,
      produce: `/topics/persistent/${f.tenant}/${f.namespaces[0]}/${f.topics[0]}`,
      auth: this.authorized([['Content-Type', 'application/json']]),
    };
    const requests: CuratedRequest[] = [
      ...NUMBERS.flatMap((n) => this.curatedNumber(n, at)),
      ...this.curatedBodies(at),
      ...this.curatedRefusedAuthorizations(at),
      // Names longer than storage keys hold, in every place a name arrives.
      ...[MAX_NAME_BYTES + 1, 1_100, 3_000].flatMap((length) => this.curatedLongName('n'.repeat(length), at)),
      ...this.curatedNameLimits(at),
      ...this.curatedSpecialNamesAndHeaders(at),
      ...this.curatedUnparsable(at),
      ...this.curatedGatewayRefusals(at),
    ];
    return requests.map((request) => ({
      description: `curated ${request.method} ${String(request.target).slice(0, 120)}`,
      ...request,
    }));
  }

  /** One number (of {@link NUMBERS}) in every numeric slot: path ids, query ids, body ids and times. */
  private curatedNumber(n: string, { topic, produce, auth }: CuratedTargets): CuratedRequest[] {
    const f = this.fixture;
    const e = encodeSegment(n);
    return [
      { method: 'GET', target: `${topic}/ledger/${e}/entry/0`, headers: auth },
      { method: 'GET', target: `${topic}/ledger/1/entry/${e}`, headers: auth },
      {
        method: 'GET',
        target: `${topic}/subscription/${f.subscriptions[0]}/position/${e}`,
        headers: auth,
      },
      { method: 'POST', target: `${topic}/subscription/${f.subscriptions[0]}/skip/${e}`, headers: auth },
      {
        method: 'POST',
        target: `${topic}/acknowledgeMessage?ledgerId=${encodeQueryPart(n)}&entryId=0`,
        headers: auth,
      },
      {
        method: 'POST',
        target: `${topic}/acknowledgeMessage?ledgerId=1&entryId=${encodeQueryPart(n)}`,
        headers: auth,
      },
      {
        method: 'POST',
        target: `/consumers/${f.consumerId}/receive?maxMessages=${encodeQueryPart(n)}`,
        headers: auth,
      },
      {
        method: 'POST',
        target: `/consumers/${f.consumerId}/receive?waitMs=${encodeQueryPart(n)}`,
        headers: auth,
      },
      {
        method: 'POST',
        target: `/consumers/${f.consumerId}/ack`,
        headers: auth,
        body: JSON.stringify({ messageIds: [`${n}:0:-1`] }),
      },
      { method: 'PUT', target: `${topic}-new/partitions`, headers: auth, body: n },
      {
        method: 'POST',
        target: `${topic}/subscription/${f.subscriptions[0]}/skipByMessageIds`,
        headers: auth,
        body: `{"messageIds":[{"ledgerId":${/^-?\d+(\.\d+)?(e\d+)?$/.test(n) ? n : JSON.stringify(n)},"entryId":0}]}`,
      },
      {
        method: 'POST',
        target: produce,
        headers: auth,
        body: `{"messages":[{"payload":"a","eventTime":${/^-?\d+(\.\d+)?(e\d+)?$/.test(n) ? n : JSON.stringify(n)}}]}`,
      },
    ];
  }

  /**
   * Bodies over the 256 KiB payload limit, of a few MiB and over the gateway's 10 MiB; too many
   * messages; too big a message.
   */
  private curatedBodies({ topic, produce, auth }: CuratedTargets): CuratedRequest[] {
    const payload = (bytes: number) => JSON.stringify({ messages: [{ payload: 'x'.repeat(bytes) }] });
    return [
      { method: 'POST', target: produce, headers: auth, body: payload(256 * 1024 + 1) },
      { method: 'POST', target: produce, headers: auth, body: payload(3 * 1024 * 1024) },
      { method: 'POST', target: produce, headers: auth, body: payload(11 * 1024 * 1024) },
      { method: 'PUT', target: `${topic}-big`, headers: auth, body: Buffer.alloc(11 * 1024 * 1024, 0x7b) },
      {
        method: 'POST',
        target: `/consumers/${this.fixture.consumerId}/ack`,
        headers: auth,
        body: Buffer.alloc(4 * 1024 * 1024, 0x5b),
      },
      {
        method: 'POST',
        target: produce,
        headers: auth,
        body: JSON.stringify({ messages: Array.from({ length: 1001 }, () => ({ payload: 'p' })) }),
      },
      {
        method: 'POST',
        target: produce,
        headers: auth,
        body: JSON.stringify({
          messages: [
            {
              payload: 'a',
              key: 'k'.repeat(1024),
              properties: {
                p: 'v'.repeat(16_384),
                q: 'v'.repeat(16_384),
                r: 'v'.repeat(16_384),
                s: 'v'.repeat(16_384),
              },
            },
          ],
        }),
      },
      {
        method: 'POST',
        target: produce,
        headers: auth,
        body: '{"messages":[{"payload":"a","properties":{"__proto__":"x"}}]}',
      },
    ];
  }

  /** Valid requests but for the Authorization header: refused (401 or 403), nothing written. */
  private curatedRefusedAuthorizations({ topic, produce }: CuratedTargets): CuratedRequest[] {
    const f = this.fixture;
    return f.refusedAuthorizations.flatMap((authorization): CuratedRequest[] => {
      const headers: [string, string][] = [
        ['Authorization', authorization],
        ['Content-Type', 'application/json'],
      ];
      return [
        { method: 'GET', target: `${topic}/stats`, headers, refusedAuthorization: true },
        {
          method: 'POST',
          target: produce,
          headers,
          body: '{"messages":[{"payload":"a"}]}',
          refusedAuthorization: true,
        },
        {
          method: 'POST',
          target: `/consumers/${f.consumerId}/receive?maxMessages=10`,
          headers,
          refusedAuthorization: true,
        },
        { method: 'DELETE', target: topic, headers, refusedAuthorization: true },
      ];
    });
  }

  /** A name longer than storage keys hold (`long`), in every place a name arrives. */
  private curatedLongName(long: string, { topic, auth }: CuratedTargets): CuratedRequest[] {
    const f = this.fixture;
    const ns = `/admin/v2/persistent/${f.tenant}/${f.namespaces[0]}`;
    return [
      { method: 'GET', target: `${ns}/${long}/stats`, headers: auth },
      {
        method: 'GET',
        target: `/admin/v2/persistent/${long}/${f.namespaces[0]}/${f.topics[0]}/stats`,
        headers: auth,
      },
      { method: 'GET', target: `/admin/v2/persistent/${f.tenant}/${long}`, headers: auth },
      { method: 'GET', target: `${topic}/subscription/${long}/position/1`, headers: auth },
      { method: 'PUT', target: `${ns}/${long}`, headers: auth },
      { method: 'PUT', target: `${topic}/subscription/${long}?subscriptionType=Shared`, headers: auth },
      { method: 'DELETE', target: `${topic}/permissions/${long}`, headers: auth },
      { method: 'POST', target: `${topic}/permissions/${long}`, headers: auth, body: '["produce"]' },
      {
        method: 'POST',
        target: `${topic}/acknowledgeMessage?ledgerId=1&entryId=0&subscriptionNames=${long}`,
        headers: auth,
      },
      {
        method: 'POST',
        target: `/topics/persistent/${f.tenant}/${f.namespaces[0]}/${long}`,
        headers: auth,
        body: '{"messages":[{"payload":"a"}]}',
      },
      {
        method: 'POST',
        target: `/consumers/persistent/${f.tenant}/${f.namespaces[0]}/${f.topics[0]}/subscription/${long}`,
        headers: auth,
        body: '{"subscriptionType":"Shared"}',
      },
      {
        method: 'POST',
        target: `/consumers/persistent/${f.tenant}/${f.namespaces[0]}/${f.topics[0]}/subscription/${f.subscriptions[0]}`,
        headers: auth,
        body: JSON.stringify({
          subscriptionType: 'Shared',
          deadLetterPolicy: { maxRedeliverCount: 2, initialSubscriptionName: long },
        }),
      },
      {
        method: 'POST',
        target: `/consumers/persistent/${f.tenant}/${f.namespaces[0]}/${f.topics[0]}/subscription/${f.subscriptions[0]}`,
        headers: auth,
        body: JSON.stringify({
          subscriptionType: 'Shared',
          deadLetterPolicy: {
            maxRedeliverCount: 2,
            deadLetterTopic: `persistent://${f.tenant}/${f.namespaces[0]}/${long}`,
          },
        }),
      },
    ];
  }

  /** Names at and past the domain's limits, and dead-letter policy variants (criterion 7). */
  private curatedNameLimits({ topic, auth }: CuratedTargets): CuratedRequest[] {
    const f = this.fixture;
    const subscribe = `/consumers/persistent/${f.tenant}/${f.namespaces[0]}/${f.topics[0]}/subscription/${f.subscriptions[0]}`;
    const dlqPrefix = `persistent://${f.tenant}/${f.namespaces[0]}/`;
    const policies: unknown[] = [
      [],
      'dlq',
      null,
      { maxRedeliverCount: 0 },
      { maxRedeliverCount: -1 },
      { maxRedeliverCount: 1.5 },
      { maxRedeliverCount: '3' },
      { maxRedeliverCount: 2, deadLetterTopic: '' },
      { maxRedeliverCount: 2, deadLetterTopic: `non-persistent://${f.tenant}/${f.namespaces[0]}/d` },
      { maxRedeliverCount: 2, deadLetterTopic: `${dlqPrefix}${'x'.repeat(501 - dlqPrefix.length)}` },
      { maxRedeliverCount: 2, deadLetterTopic: `${dlqPrefix}a\uD800` },
      { maxRedeliverCount: 2, initialSubscriptionName: 's'.repeat(257) },
      { maxRedeliverCount: 2, initialSubscriptionName: 'a/b' },
      { maxRedeliverCount: 2, initialSubscriptionName: '' },
      { maxRedeliverCount: 2, unknownField: true },
    ];
    const pastCharLimit = 's'.repeat(257);
    return [
      ...policies.map(
        (deadLetterPolicy): CuratedRequest => ({
          method: 'POST',
          target: subscribe,
          headers: auth,
          // A lone surrogate goes out as JSON's `\ud800` escape.
          body: JSON.stringify({ subscriptionType: 'Shared', deadLetterPolicy }),
        }),
      ),
      { method: 'PUT', target: `${topic}/subscription/${pastCharLimit}`, headers: auth },
      {
        method: 'POST',
        target: `/consumers/persistent/${f.tenant}/${f.namespaces[0]}/${f.topics[0]}/subscription/${pastCharLimit}`,
        headers: auth,
        body: '{"subscriptionType":"Shared"}',
      },
      {
        method: 'GET',
        target: `${topic}/subscription/${'%F0%9F%92%A5'.repeat(256)}/position/1`,
        headers: auth,
      },
    ];
  }

  /**
   * Names JavaScript objects treat specially, as query and header names; headers over Node's 16 KiB
   * limit; a repeated Authorization.
   */
  private curatedSpecialNamesAndHeaders({ topic, auth }: CuratedTargets): CuratedRequest[] {
    return [
      { method: 'GET', target: `${topic}/stats?__proto__=x&constructor=y&toString=z`, headers: auth },
      {
        method: 'POST',
        target: `${topic}/acknowledgeMessage?__proto__=1&ledgerId=-1&entryId=0`,
        headers: auth,
      },
      {
        method: 'GET',
        target: `${topic}/stats`,
        headers: this.authorized([
          ['__proto__', 'x'],
          ['constructor', 'y'],
        ]),
      },
      {
        method: 'GET',
        target: `${topic}/stats`,
        headers: this.authorized([['X-Huge', 'a'.repeat(20_000)]]),
      },
      {
        method: 'PUT',
        target: `${topic}-huge`,
        headers: this.authorized([['X-Huge', 'a'.repeat(20_000)]]),
      },
      {
        method: 'PUT',
        target: `${topic}-twice`,
        headers: this.authorized([['Authorization', `Bearer ${this.fixture.superuserToken}`]]),
        refusedAuthorization: true,
      },
    ];
  }

  /** Bytes Node refuses: the local gateway must answer them with a JSON reason too. */
  private curatedUnparsable(at: CuratedTargets): CuratedRequest[] {
    return [...this.unparsableRequestLines(at), ...this.unparsableFraming(at)].map(([what, request]) => ({
      ...request,
      unparsable: true,
      description: `curated unparsable: ${what}`,
    }));
  }

  /** A bad method, version, header or target. */
  private unparsableRequestLines({ topic, auth }: CuratedTargets): [string, RawRequest][] {
    return [
      ['lower-case method', { method: 'put', target: `${topic}-lower`, headers: auth }],
      ['unknown method token', { method: 'FOO', target: topic, headers: auth }],
      ['bad version', { method: 'PUT', target: `${topic}-version`, headers: auth, version: 'HTTP/9.9' }],
      [
        'NUL in a header',
        { method: 'PUT', target: `${topic}-nul`, headers: this.authorized([['X-A', 'a\u0000b']]) },
      ],
      [
        'space before colon',
        { method: 'PUT', target: `${topic}-space`, headers: this.authorized([['X-A ', 'b']]) },
      ],
    ];
  }

  /** Bad body framing (chunks, Content-Length, Transfer-Encoding), then bad bytes in the target. */
  private unparsableFraming({ topic, produce, auth }: CuratedTargets): [string, RawRequest][] {
    return [
      [
        'bad chunk size',
        {
          method: 'POST',
          target: produce,
          headers: this.authorized([['Transfer-Encoding', 'chunked']]),
          body: 'zz\r\nabc\r\n0\r\n\r\n',
        },
      ],
      [
        'chunked and Content-Length',
        {
          method: 'POST',
          target: produce,
          headers: this.authorized([
            ['Transfer-Encoding', 'chunked'],
            ['Content-Length', '3'],
          ]),
          body: '0\r\n\r\n',
        },
      ],
      [
        'Content-Length not a number',
        { method: 'POST', target: produce, headers: this.authorized([['Content-Length', 'abc']]), body: '' },
      ],
      [
        'two Content-Length values',
        {
          method: 'POST',
          target: produce,
          headers: this.authorized([
            ['Content-Length', '3'],
            ['Content-Length', '4'],
          ]),
          body: 'abcd',
        },
      ],
      [
        'unknown Transfer-Encoding',
        {
          method: 'POST',
          target: produce,
          headers: this.authorized([['Transfer-Encoding', 'gzip']]),
          body: 'abc',
        },
      ],
      ['raw space in the target', { method: 'PUT', target: `${topic}-a b`, headers: auth }],
      [
        'raw bytes 0xff in the target',
        {
          method: 'PUT',
          target: Buffer.concat([Buffer.from(`${topic}-`), Buffer.from([0xff, 0xfe])]),
          headers: auth,
        },
      ],
    ];
  }

  /** Parsed by Node, refused by the gateway. */
  private curatedGatewayRefusals({ topic, produce, auth }: CuratedTargets): CuratedRequest[] {
    return [
      { method: 'PUT', target: 'http://[::1', headers: auth },
      { method: 'PUT', target: 'http://x:99999/admin/v2', headers: auth },
      { method: 'PUT', target: `${topic}-nohost`, headers: auth, omitHost: true },
      { method: 'GET', target: `${topic}/stats`, headers: this.authorized([['Expect', 'something']]) },
      { method: 'GET', target: `http://evil.example${topic}/stats`, headers: auth },
      { method: 'GET', target: '*', headers: auth },
      { method: 'CONNECT', target: '127.0.0.1:80', headers: auth },
      {
        method: 'POST',
        target: produce,
        headers: this.authorized([['Transfer-Encoding', 'chunked']]),
        body: '5\r\n{"mes\r\n0\r\n\r\n',
      },
    ];
  }
}
