import type { Request } from 'express';
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

/** What the gateway's middleware attaches to each request. */
export interface RecurRequestState {
  requestId: string;
  caller?: Caller;
  route?: RouteEntry;
  /** The matched route's path parameters. */
  params?: Record<string, string>;
  /** The id forwarded to services as `request_id`, so their commands are repeatable. */
  commandId?: string;
}

export type RecurRequest = Request & { recur: RecurRequestState };

export function requestState(request: Request): RecurRequestState {
  return (request as RecurRequest).recur;
}

/** The caller of an authenticated `/v1` request; the middleware guarantees it is there. */
export function callerOf(request: Request): Caller {
  const caller = requestState(request).caller;
  if (!caller) throw new Error('request reached a /v1 handler without authentication');
  return caller;
}
