import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { ApiError } from './api-error';
import { requestState } from './request-context';

/**
 * The gateway's door: rules every request meets before any handler, whatever the route, so
 * no route can forget them. What a service stores must never break a later read, and what
 * PostgreSQL refuses (U+0000 in text) must never reach it.
 */

/** Deepest JSON nesting a body may have: well above any resource's shape (tiers, metadata: 3). */
export const JSON_DEPTH_MAX = 32;
/** Ids are a type prefix and base62 (`cus_4f9X…`); a path id of any other shape names nothing. */
export const PATH_ID_PATTERN = /^[A-Za-z0-9_-]{1,255}$/;

const NUL = '\u0000';

/** A body's keys and strings free of U+0000, and nested no deeper than JSON_DEPTH_MAX; walked without recursion. */
export function checkJsonBody(body: unknown): ApiError | undefined {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: body, path: '', depth: 0 }];
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes(NUL)) return nulError(path || 'body');
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= JSON_DEPTH_MAX) return new ApiError(400, 'parameter_invalid', `The request body is nested deeper than ${JSON_DEPTH_MAX} levels.`, path || undefined);
    const entries = Array.isArray(value) ? value.map((item, index) => [String(index), item] as const) : Object.entries(value);
    for (const [key, item] of entries) {
      if (key.includes(NUL)) return nulError(path || 'body');
      stack.push({ value: item, path: Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key, depth: depth + 1 });
    }
  }
  return undefined;
}

/** Query names and values free of U+0000 (strings, or arrays of them for repeated names). */
export function checkQuery(query: Record<string, unknown>): ApiError | undefined {
  return checkJsonBody(query);
}

/** A path id that cannot be an id is a resource that does not exist: 404, as for any unknown id. */
export function checkPathParams(params: Record<string, string>): ApiError | undefined {
  for (const [name, value] of Object.entries(params)) {
    if (!PATH_ID_PATTERN.test(value)) return new ApiError(404, 'resource_missing', `No such resource: '${value.replace(/[^\x20-\x7e]/g, '?')}'.`, name);
  }
  return undefined;
}

/**
 * The door rules as a `/v1` hook (routing/api-route.ts): once the route is matched and before the
 * idempotency key is claimed, so a refused request is never stored under its key.
 */
export function applyInputRules(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  done(checkPathParams(requestState(request.raw).params ?? {}) ?? checkQuery(request.query as Record<string, unknown>) ?? checkJsonBody(request.body));
}

function nulError(param: string): ApiError {
  return new ApiError(400, 'parameter_invalid', `${param} contains the NUL character (U+0000), which no field accepts.`, param);
}
