import { ValidationError } from '../domain/errors.ts';
import type { HttpRequest } from './http-types.ts';

/**
 * Longest name a request may carry (tenant, namespace, topic, subscription, role, consumer id), in
 * UTF-8 bytes. Storage keys join up to four names (`ML#persistent://tenant/namespace/topic`, a
 * subscription's `topic|name`), and a DynamoDB sort key holds 1,024 bytes, a partition key 2,048:
 * 400 bytes a name keeps every key in bounds, so a long name is a 400 here, not a storage error.
 */
export const MAX_NAME_BYTES = 400;

/** Refuses (400) a name longer than {@link MAX_NAME_BYTES}; returns it otherwise. */
export function boundedName(value: string, what: string): string {
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_NAME_BYTES) {
    throw new ValidationError(`${what} is ${bytes} bytes long; the limit is ${MAX_NAME_BYTES} bytes`);
  }
  return value;
}

/** The JSON body, or undefined when there is none. */
export function jsonBody(request: HttpRequest): unknown {
  if (request.body === undefined || request.body.trim() === '') return undefined;
  try {
    return JSON.parse(request.body);
  } catch {
    throw new ValidationError('Request body is not valid JSON');
  }
}

/**
 * A short description of a value a request gave, for a refusal's reason: a string, number or
 * boolean as JSON (at most 40 characters), else its kind. Never the whole of an object or array: a
 * body nested thousands deep would make JSON.stringify throw, and a large one a large reason.
 */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/** The last value of a query parameter, as API Gateway's single-value map has it. */
export function queryValue(request: HttpRequest, name: string): string | undefined {
  const values = request.query[name];
  return values?.[values.length - 1];
}

/** Every value of a repeated parameter, each also split on commas; empty parts dropped. */
export function queryList(request: HttpRequest, name: string): string[] {
  return (request.query[name] ?? [])
    .flatMap((value) => value.split(','))
    .map((value) => value.trim())
    .filter((value) => value.length > 0);
}

export function queryBoolean(request: HttpRequest, name: string): boolean {
  const value = queryValue(request, name);
  if (value === undefined || value === '' || value === 'false') return false;
  if (value === 'true') return true;
  throw new ValidationError(`Query parameter ${name} must be true or false, got '${value}'`);
}

/** A non-negative integer path or query value (bounded to JavaScript's safe range). */
export function safeInteger(value: string | undefined, name: string, min = 0): number {
  if (value === undefined || !/^\d{1,15}$/.test(value) || Number(value) < min) {
    throw new ValidationError(`${name} must be an integer >= ${min}, got '${value ?? ''}'`);
  }
  return Number(value);
}

/** A typo in a query parameter (`limt`) would be silently ignored: refused instead (400). */
export function refuseUnknownQuery(request: HttpRequest, known: readonly string[]): void {
  const unknown = Object.keys(request.query).filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    throw new ValidationError(
      `Unknown query parameter${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; this path takes ${known.join(', ')}`,
    );
  }
}
