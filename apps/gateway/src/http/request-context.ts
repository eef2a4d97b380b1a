import type { IncomingMessage } from 'node:http';
import type { TenantRef } from '@recur/kernel';
import type { RouteEntry } from '../routing/route-table';

export type KeyKind = 'secret' | 'publishable';
export type KeyScope = 'full' | 'read_only';

/** Who is calling: resolved from `x-api-key` by the authentication hook. */
export interface Caller {
  keyId: string;
  tenant: TenantRef;
  /** The account's name: the seller on the documents it issues (invoice PDFs). */
  accountName: string;
  kind: KeyKind;
  scope: KeyScope;
  /** The key's app's own rate limits (requests a second); null: the gateway's default for the mode. */
  rateLimits: { readPerSecond: number | null; writePerSecond: number | null };
}

/** What the gateway's hooks attach to each request. */
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
 * The state lives on the Node.js request (`request.raw`): the one object every hook, the `/v1`
 * route, the pages and the error rendering reach, whether they hold Fastify's request or Nest's.
 */
type StatefulRequest = IncomingMessage & { recur: RecurRequestState };

/** Starts a request's state: the request id hook, first of every request (request-id.ts). */
export function startRequestState(request: IncomingMessage, requestId: string): void {
  (request as StatefulRequest).recur = { requestId };
}

export function requestState(request: IncomingMessage): RecurRequestState {
  return (request as StatefulRequest).recur;
}

/** The caller of an authenticated `/v1` request; the authentication hook guarantees it is there. */
export function callerOf(request: IncomingMessage): Caller {
  const caller = requestState(request).caller;
  if (!caller) throw new Error('request reached a /v1 handler without authentication');
  return caller;
}

/** The request's path, without its query: the one routes and fingerprints are matched on. */
export function requestPath(request: IncomingMessage): string {
  const url = request.url ?? '/';
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}
