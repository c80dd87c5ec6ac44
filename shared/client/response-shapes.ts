import type { PermissionMap } from './admin-types.ts';
import { AcklineAdminError } from './errors.ts';
import type { JsonObject, JsonValue } from './lossless-json.ts';

/**
 * Checks on what the server answered, so a caller gets the type it was promised or an
 * {@link AcklineAdminError} saying what came instead, never a wrongly typed value.
 */

export function expectObject(value: JsonValue, what: string): JsonObject {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw unexpected(value, what, 'an object');
  return value as JsonObject;
}

export function expectNumber(value: JsonValue | undefined, what: string): number {
  if (typeof value !== 'number') throw unexpected(value ?? null, what, 'a number');
  return value;
}

export function expectArray(value: JsonValue, what: string): readonly JsonValue[] {
  if (!Array.isArray(value)) throw unexpected(value, what, 'an array');
  return value;
}

export function expectStringArray(value: JsonValue, what: string): readonly string[] {
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw unexpected(value, what, 'an array of strings');
  }
  return value as readonly string[];
}

/** Checks a `{ role: [actions] }` answer. */
export function expectPermissionMap(value: JsonValue): PermissionMap {
  const body = expectObject(value, 'permissions');
  const permissions: Record<string, readonly string[]> = {};
  for (const [role, actions] of Object.entries(body)) {
    permissions[role] = expectStringArray(actions, `permissions of role '${role}'`);
  }
  return permissions;
}

function unexpected(value: JsonValue, what: string, expected: string): AcklineAdminError {
  const shown = JSON.stringify(value).slice(0, 200);
  return new AcklineAdminError(200, `Unexpected answer for ${what}: expected ${expected}, got ${shown}`, {
    statusText: 'OK',
  });
}
