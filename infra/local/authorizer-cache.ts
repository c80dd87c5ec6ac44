import type { APIGatewayAuthorizerResult, PolicyDocument, Statement } from 'aws-lambda';
import type { Clock } from '../../shared/ports/clock.ts';

/**
 * API Gateway's results cache of a REQUEST authorizer whose identity source is
 * `method.request.header.Authorization`, as the local gateway keeps it:
 * - the key is the Authorization header's value (the last one when the request
 *   repeats the header, the value API Gateway maps for `method.request.header`);
 * - what is kept is the authorizer's whole answer, policy and context, Allow
 *   or Deny alike, for `ttlMs` from the invocation that produced it; the policy
 *   is evaluated against each request's own method ARN ({@link policyAllows});
 * - a thrown refusal (401) is not kept: API Gateway documents caching the
 *   returned policy. ackline's authorizer never throws for a token: it answers
 *   a refused one with the failed check (kept like any answer), and throws
 *   only when it fails (500);
 * - TTL 0 keeps nothing (caching off).
 *
 * Not persisted. Entries are dropped when they expire (swept once the map
 * holds {@link MAX_ENTRIES}); past that, the oldest go first.
 */
export class AuthorizerCache {
  private readonly entries = new Map<string, { result: APIGatewayAuthorizerResult; expiresAtMs: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly clock: Clock,
  ) {}

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  get(identity: string): APIGatewayAuthorizerResult | undefined {
    const entry = this.entries.get(identity);
    if (entry === undefined) return undefined;
    if (entry.expiresAtMs > this.clock.nowMs()) return entry.result;
    this.entries.delete(identity);
    return undefined;
  }

  set(identity: string, result: APIGatewayAuthorizerResult): void {
    if (!this.enabled) return;
    const nowMs = this.clock.nowMs();
    if (this.entries.size >= MAX_ENTRIES) {
      for (const [key, entry] of this.entries) if (entry.expiresAtMs <= nowMs) this.entries.delete(key);
      for (const key of this.entries.keys()) {
        if (this.entries.size < MAX_ENTRIES) break;
        this.entries.delete(key);
      }
    }
    this.entries.delete(identity); // re-inserted last: the map's order is the age order
    this.entries.set(identity, { result, expiresAtMs: nowMs + this.ttlMs });
  }
}

/** Distinct header values kept at most (a local stack sees a handful of tokens). */
const MAX_ENTRIES = 10_000;

/**
 * The identity source's value: the Authorization header (names compared
 * without case, the last line when repeated), or undefined when it is missing
 * or empty, which API Gateway answers with 401 without invoking the authorizer.
 */
export function authorizationIdentity(rawHeaders: readonly string[]): string | undefined {
  let value: string | undefined;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if ((rawHeaders[i] as string).toLowerCase() === 'authorization') value = rawHeaders[i + 1];
  }
  return value === '' ? undefined : value;
}

/**
 * IAM's verdict on `execute-api:Invoke` of `methodArn` under an authorizer's
 * policy: a matching Deny wins, else a matching Allow allows, else denied.
 * Actions and resources take IAM's `*` and `?` wildcards; actions compare
 * without case.
 */
export function policyAllows(policy: PolicyDocument | undefined, methodArn: string): boolean {
  let allowed = false;
  for (const statement of [policy?.Statement ?? []].flat() as Statement[]) {
    const actions = strings('Action' in statement ? statement.Action : undefined);
    const resources = strings('Resource' in statement ? statement.Resource : undefined);
    const matches =
      actions.some((action) => wildcard(action, true).test('execute-api:Invoke')) &&
      resources.some((resource) => wildcard(resource, false).test(methodArn));
    if (!matches) continue;
    if (statement.Effect === 'Deny') return false;
    if (statement.Effect === 'Allow') allowed = true;
  }
  return allowed;
}

function strings(value: unknown): string[] {
  return [value].flat().filter((item): item is string => typeof item === 'string');
}

/** Compiled patterns: a kept policy is evaluated again on every request. */
const patterns = new Map<string, RegExp>();

function wildcard(pattern: string, ignoreCase: boolean): RegExp {
  const key = `${ignoreCase ? 'i' : 's'}${pattern}`;
  let regex = patterns.get(key);
  if (regex === undefined) {
    const source = pattern
      .split('')
      .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
      .join('');
    regex = new RegExp(`^${source}$`, ignoreCase ? 'is' : 's');
    if (patterns.size >= MAX_ENTRIES) patterns.clear();
    patterns.set(key, regex);
  }
  return regex;
}
