import type { IncomingMessage } from 'node:http';
import type { TenantRef } from '@recur/kernel';
import type { RouteEntry } from '../routing/route-table';

export type KeyKind = 'secret' | 'publishable';
export type KeyScope = 'full' | 'read_only';

/** Who is calling: resolved from `x-api-key` by the authentication middleware. */
export interface Caller {
  keyId: string;
  tenant: TenantRef;
  /** The account's name: the seller on the documents it issues (invoice PDFs). */
  accountName: string;
  kind: KeyKind;
  scope: KeyScope;
}

/** What the gateway's hooks and middleware attach to each request. */
export interface RecurRequestState {
  requestId: string;
  caller?: Caller;
  route?: RouteEntry;
  /** The matched route's path parameters. */
  params?: Record<string, string>;
  /** The id forwarded to services as `request_id`, so their commands are repeatable. */
  commandId?: string;
  /** The idempotency record this request claimed: its answer is stored there as it is sent. */
  idempotencyRecordId?: string;
}

/**
 * The Node.js request as Nest middleware gets it on Fastify (@fastify/middie, run once the body
 * is parsed: see app.ts): Fastify's parsed body and query copied onto it, and `originalUrl`, the
 * URL before middie strips a middleware's mount path from `url`. The state lives here, on the
 * Node.js request, the one object hooks, middleware and handlers (`request.raw`) all reach.
 */
export type MiddlewareRequest = IncomingMessage & {
  originalUrl: string;
  body?: unknown;
  query: Record<string, unknown>;
  recur: RecurRequestState;
};

export function requestState(request: IncomingMessage): RecurRequestState {
  return (request as MiddlewareRequest).recur;
}

/** The caller of an authenticated `/v1` request; the middleware guarantees it is there. */
export function callerOf(request: IncomingMessage): Caller {
  const caller = requestState(request).caller;
  if (!caller) throw new Error('request reached a /v1 handler without authentication');
  return caller;
}

/** The request's path, without its query: the one routes and fingerprints are matched on. */
export function requestPath(request: IncomingMessage): string {
  const url = (request as Partial<MiddlewareRequest>).originalUrl ?? request.url ?? '/';
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}
