import { ValidationError } from '../domain/errors.ts';
import type { HttpRequest } from './http-types.ts';

/** The JSON body, or undefined when there is none. */
export function jsonBody(request: HttpRequest): unknown {
  if (request.body === undefined || request.body.trim() === '') return undefined;
  try {
    return JSON.parse(request.body);
  } catch {
    throw new ValidationError('Request body is not valid JSON');
  }
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
