import type { ClassConstructor } from 'class-transformer';
import type { commonV1 } from '@recur/contracts';
import type { ListEnvelope } from '../http/list';
import type { ServiceClients } from '../infrastructure/service-clients';
import type { CustomerPortalLinks } from '../pages/customer-portal/customer-portal-links';

/**
 * One declaration per route: method, path, summary, key policy, request DTOs, answer schema,
 * success status and handler. The policy middleware's table, the dispatch of `/v1` and the
 * OpenAPI document are all derived from these declarations (see `routes.ts`), so they cannot
 * disagree. A route without a handler is part of the interface but not yet available: it is
 * policed like the others, answers `501 not_implemented`, and is documented as planned.
 */
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** A JSON Schema fragment, as OpenAPI 3.1 takes it. */
export type JsonSchema = object;

/** The JSON Schema of the public JSON type `T`: every field of `T` has a property schema, and no other field does. */
export interface ObjectSchema<T> {
  type: 'object';
  description?: string;
  required: (keyof T & string)[];
  properties: { [K in keyof T]-?: JsonSchema };
}

/** An answer's schema, named for `components.schemas`, tied to the type the handlers return. */
export interface ResponseSchema<T> {
  name: string;
  schema: ObjectSchema<T>;
}

export function responseSchema<T>(name: string, schema: ObjectSchema<T>): ResponseSchema<T> {
  return { name, schema };
}

/** `{ id: string; componentId: string }` for `/v1/plans/:id/price-components/:componentId`. */
export type PathParams<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? { [K in Name]: string } & PathParams<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? { [K in Name]: string }
    : Record<never, string>;

/** What a handler receives: the validated body and query, the caller's tenant and the command id. */
export interface HandlerContext<P extends string, B, Q> {
  services: ServiceClients;
  /** Signs customer portal links (`POST /v1/customers/:id/portal-sessions`). */
  customerPortal: CustomerPortalLinks;
  /** Base URL of the hosted checkout pages (a sales link's `url` is `<salesLinkUrl>/<token>`). */
  salesLinkUrl: string;
  tenant: commonV1.Tenant;
  /** The caller's account name (the seller printed on documents). */
  accountName: string;
  /** Forwarded to the service as the command's `request_id`: a retry of it answers the first answer. */
  commandId: string;
  params: PathParams<P>;
  body: B;
  query: Q;
}

export interface RouteDefinition {
  method: HttpMethod;
  /** Express-style path: `/v1/plans/:id/tiers`. */
  path: string;
  summary: string;
  /** The OpenAPI tag: the resource group the route was declared in. */
  tag: string;
  /** True for the four plan reads a publishable key may call. */
  publishable: boolean;
  /** Reads never change state; a read_only key may call only these. */
  read: boolean;
  body?: ClassConstructor<object>;
  /** A hot route's hand-written check of `body`: the body when valid, else undefined and `body`'s class-validator refuses it. */
  validBody?: (body: unknown) => object | undefined;
  query?: ClassConstructor<object>;
  response?: { name: string; schema: JsonSchema };
  /** The answer is a list envelope of `response`. */
  list: boolean;
  /** The answer is a file of this media type (the handler answers a `FileAnswer`), not JSON. */
  file?: { contentType: string };
  status: number;
  /** A second success answer the handler may give instead (an `AlternativeAnswer`), with its own status and schema. */
  alternative?: { status: number; description: string; response: { name: string; schema: JsonSchema } };
  /** Absent while the capability has not landed: the route answers 501 not_implemented. */
  handler?: (context: HandlerContext<string, unknown, unknown>) => Promise<unknown>;
}

interface RouteSpec<P extends string, B, Q> {
  method: HttpMethod;
  path: P;
  summary: string;
  publishable?: boolean;
  body?: ClassConstructor<B>;
  validBody?: (body: unknown) => B | undefined;
  query?: ClassConstructor<Q>;
  /** Default 200; 201 for creation. */
  status?: number;
}

type Declared = Omit<RouteDefinition, 'tag'>;

function declare<P extends string, B, Q>(
  spec: RouteSpec<P, B, Q>,
  response: RouteDefinition['response'],
  list: boolean,
  handler?: (context: HandlerContext<P, B, Q>) => Promise<unknown>,
  file?: RouteDefinition['file'],
): Declared {
  return {
    method: spec.method,
    path: spec.path,
    summary: spec.summary,
    publishable: spec.publishable ?? false,
    read: spec.method === 'GET',
    body: spec.body as ClassConstructor<object> | undefined,
    ...(spec.validBody ? { validBody: spec.validBody as RouteDefinition['validBody'] } : {}),
    query: spec.query as ClassConstructor<object> | undefined,
    response,
    list,
    ...(file ? { file } : {}),
    status: spec.status ?? 200,
    handler: handler as RouteDefinition['handler'],
  };
}

/** A route that answers one resource of type `R`. */
export function route<P extends string, R, B = undefined, Q = undefined>(
  spec: RouteSpec<P, B, Q> & { response: ResponseSchema<R>; handler: (context: HandlerContext<P, B, Q>) => Promise<R> },
): Declared {
  return declare(spec, spec.response, false, spec.handler);
}

/** A route that answers the list envelope of `R`. */
export function listRoute<P extends string, R, B = undefined, Q = undefined>(
  spec: RouteSpec<P, B, Q> & { response: ResponseSchema<R>; handler: (context: HandlerContext<P, B, Q>) => Promise<ListEnvelope<R>> },
): Declared {
  return declare(spec, spec.response, true, spec.handler);
}

/**
 * The route's alternative success answer (`alternative`: its status and schema), e.g. `202` with
 * a refund the provider has accepted but not completed, where the route otherwise answers `201`.
 */
export class AlternativeAnswer<T> {
  constructor(readonly body: T) {}
}

/** A route that answers one resource of type `R`, or — as `AlternativeAnswer` — one of type `A` with another status. */
export function routeWithAlternative<P extends string, R, A, B = undefined, Q = undefined>(
  spec: RouteSpec<P, B, Q> & {
    response: ResponseSchema<R>;
    alternative: { status: number; description: string; response: ResponseSchema<A> };
    handler: (context: HandlerContext<P, B, Q>) => Promise<R | AlternativeAnswer<A>>;
  },
): Declared {
  return { ...declare(spec, spec.response, false, spec.handler), alternative: spec.alternative };
}

/** A file a route answers: its bytes and the name offered for saving it (`Content-Disposition`). */
export interface FileAnswer {
  content: Uint8Array;
  filename: string;
}

/** A route that answers a file of `contentType` (a PDF, say) rather than JSON. */
export function fileRoute<P extends string, B = undefined, Q = undefined>(
  spec: RouteSpec<P, B, Q> & { contentType: string; handler: (context: HandlerContext<P, B, Q>) => Promise<FileAnswer> },
): Declared {
  return declare(spec, undefined, false, spec.handler, { contentType: spec.contentType });
}

/** A resource's routes under one OpenAPI tag. */
export function defineRoutes(tag: string, routes: Declared[]): RouteDefinition[] {
  return routes.map((declared) => ({ ...declared, tag }));
}
