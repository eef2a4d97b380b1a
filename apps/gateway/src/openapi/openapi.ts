import type { ClassConstructor } from 'class-transformer';
import { getMetadataStorage } from 'class-validator';
import { validationMetadatasToSchemas } from 'class-validator-jsonschema';
import { METADATA_KEY_MAX, METADATA_MAX_KEYS, METADATA_VALUE_MAX } from '@recur/kernel';
import { API_KEY_HEADER } from '../auth/api-key-header';
import { PATH_ID_PATTERN } from '../http/input-rules';
import { IDEMPOTENCY_KEY_PATTERN } from '../idempotency/idempotency-key';
import type { RouteDefinition } from '../routing/define-routes';
import { ROUTES } from '../routing/route-table';
import { OPENAPI_TAGS } from './openapi-tags';
import { webhookEvents } from './webhook-events';

const ERROR_SCHEMA = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['type', 'code', 'message', 'request_id'],
      properties: {
        type: { type: 'string', enum: ['invalid_request_error', 'authentication_error', 'permission_error', 'idempotency_error', 'rate_limit_error', 'api_error'] },
        code: { type: 'string', example: 'parameter_invalid' },
        message: { type: 'string' },
        param: { type: 'string' },
        errors: { type: 'array', items: { type: 'object', properties: { param: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' } } } },
        request_id: { type: 'string' },
      },
    },
  },
};

const integerHeader = (description: string) => ({ description, schema: { type: 'integer', minimum: 0 } });

/**
 * The response headers (docs/api/conventions.md): `Request-Id` on every answer; the key's
 * RateLimit-* counts on every answer to a request with a valid key; `Retry-After` on a 429;
 * `Idempotent-Replayed` on an answer replayed for a repeated `Idempotency-Key`.
 */
const HEADERS = {
  RequestId: { description: 'This request’s id (`req_…`), also the error body’s `request_id`: quote it when asking about a request.', schema: { type: 'string', pattern: '^req_' } },
  IdempotentReplayed: {
    description: '`true` when this is the stored answer of an earlier request with the same Idempotency-Key and body: nothing ran again.',
    schema: { type: 'string', enum: ['true'] },
  },
  RateLimitLimit: integerHeader('Requests of this kind (read or write) the key may make a second.'),
  RateLimitRemaining: integerHeader('Requests left in the current second.'),
  RateLimitReset: integerHeader('Seconds until the count starts again.'),
  RetryAfter: integerHeader('Seconds to wait before calling again.'),
};
const header = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });
const RATE_LIMIT_HEADERS = { 'RateLimit-Limit': header('RateLimitLimit'), 'RateLimit-Remaining': header('RateLimitRemaining'), 'RateLimit-Reset': header('RateLimitReset') };

const errorResponse = (description: string, headers: Record<string, object> = {}) => ({
  description,
  headers: { 'Request-Id': header('RequestId'), ...headers },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

/** The error answers every operation may give, once each in `components.responses`. */
const RESPONSES = {
  BadRequest: errorResponse('Invalid request (validation, unknown parameter, bad JSON).', RATE_LIMIT_HEADERS),
  Unauthorized: errorResponse('Missing or invalid API key.'),
  Forbidden: errorResponse('publishable_key_forbidden (a publishable key) or api_key_read_only (a read_only key attempted a write).', RATE_LIMIT_HEADERS),
  ForbiddenWrite: errorResponse('api_key_read_only: a read_only key attempted a write.', RATE_LIMIT_HEADERS),
  NotFound: errorResponse('No such resource in this app.', RATE_LIMIT_HEADERS),
  Conflict: errorResponse('State conflict, or Idempotency-Key reused (idempotency_key_reused) or in progress (idempotency_key_in_progress: retry shortly with the same key).', {
    ...RATE_LIMIT_HEADERS,
    'Idempotent-Replayed': header('IdempotentReplayed'),
  }),
  PayloadTooLarge: errorResponse('The body is larger than 256 KB.', RATE_LIMIT_HEADERS),
  UnsupportedMediaType: errorResponse('The body is not sent as Content-Type: application/json.', RATE_LIMIT_HEADERS),
  RateLimited: errorResponse('rate_limited: this key made its limit of requests of this kind (read or write) this second; retry after Retry-After seconds.', {
    ...RATE_LIMIT_HEADERS,
    'Retry-After': header('RetryAfter'),
  }),
  InternalError: errorResponse('api_error: an unexpected error; retry with backoff (with the same Idempotency-Key for a POST).', RATE_LIMIT_HEADERS),
  NotImplemented: errorResponse('Not available yet.', RATE_LIMIT_HEADERS),
  ServiceUnavailable: errorResponse(
    'service_unavailable: a service behind the gateway is unavailable, or the gateway is at capacity and did nothing (admission control); retry after Retry-After seconds when given, else with backoff (with the same Idempotency-Key for a POST).',
    { ...RATE_LIMIT_HEADERS, 'Retry-After': header('RetryAfter') },
  ),
};
const response = (name: keyof typeof RESPONSES) => ({ $ref: `#/components/responses/${name}` });

/** The list envelope every list route answers, once; each list narrows `data` to its items. */
const LIST_ENVELOPE_SCHEMA = {
  type: 'object',
  description: 'A page of a list, newest first (docs/api/conventions.md#lists); each list adds `data`, the page’s items.',
  required: ['object', 'url', 'total', 'limit', 'offset', 'has_more'],
  properties: {
    object: { type: 'string', enum: ['list'] },
    url: { type: 'string', description: 'The list’s path.' },
    total: { type: 'integer', description: 'How many items the list holds.' },
    limit: { type: 'integer' },
    offset: { type: 'integer' },
    has_more: { type: 'boolean', description: 'True when a later page has items.' },
  },
};

type DtoSchemas = Record<string, { properties?: Record<string, object>; required?: string[]; additionalProperties?: boolean }>;

/** Any string without U+0000. */
const NO_NUL_PATTERN = '^[^\\u0000]*$';

const METADATA_SCHEMA = {
  type: 'object',
  description: 'Your key-value data: string values; an update merges, and a key set to "" is removed.',
  maxProperties: METADATA_MAX_KEYS,
  propertyNames: { minLength: 1, maxLength: METADATA_KEY_MAX },
  additionalProperties: { type: 'string', maxLength: METADATA_VALUE_MAX },
};

/**
 * What class-validator-jsonschema cannot say on its own: unknown fields are refused (the
 * validation pipe forbids them), and `metadata` (a Record, which it would reference as an
 * undefined `Object` schema) is the metadata shape.
 */
function tightenRequestSchemas(schemas: DtoSchemas): DtoSchemas {
  for (const schema of Object.values(schemas)) {
    schema.additionalProperties = false;
    for (const [name, property] of Object.entries(schema.properties ?? {}) as [string, { $ref?: string; type?: string; pattern?: string; items?: { type?: string; pattern?: string } }][]) {
      if (name === 'metadata') schema.properties![name] = METADATA_SCHEMA;
      // A union-typed field (`number | string`) reflects as Object too; its own @JSONSchema says what it is.
      else if (property.$ref === '#/components/schemas/Object') {
        if (Object.keys(property).length > 1) delete property.$ref;
        else schema.properties![name] = { type: 'object' };
      }
      // The door refuses U+0000 in every string (input-rules.ts); say so where no pattern says more.
      else if (property.type === 'string' && !property.pattern) property.pattern = NO_NUL_PATTERN;
      else if (property.items?.type === 'string' && !property.items.pattern) property.items.pattern = NO_NUL_PATTERN;
    }
  }
  return schemas;
}

function queryParameters(query: ClassConstructor<object> | undefined, schemas: DtoSchemas) {
  if (!query) return [];
  // A DTO that only extends another (ListCouponsQueryDto extends ListQueryDto) has no schema of its own: its parent's is it.
  let schema = schemas[query.name];
  for (let type: unknown = Object.getPrototypeOf(query); schema === undefined && typeof type === 'function' && type.name; type = Object.getPrototypeOf(type)) schema = schemas[type.name];
  return Object.entries(schema?.properties ?? {}).map(([name, property]) => ({ name, in: 'query', required: schema.required?.includes(name) ?? false, schema: property }));
}

/** The headers of a success answer: the request's id and the key's counts; a POST's may be a replay. */
function successHeaders(route: RouteDefinition) {
  return { 'Request-Id': header('RequestId'), ...RATE_LIMIT_HEADERS, ...(route.method === 'POST' ? { 'Idempotent-Replayed': header('IdempotentReplayed') } : {}) };
}

function successResponse(route: RouteDefinition) {
  const headers = successHeaders(route);
  if (route.file) return { description: 'Success', headers, content: { [route.file.contentType]: { schema: { type: 'string', format: 'binary' } } } };
  if (!route.response) return { description: 'Success', headers };
  const item = { $ref: `#/components/schemas/${route.response.name}` };
  const schema = route.list
    ? { allOf: [{ $ref: '#/components/schemas/ListEnvelope' }, { type: 'object', required: ['data'], properties: { data: { type: 'array', items: item } } }] }
    : item;
  return { description: 'Success', headers, content: { 'application/json': { schema } } };
}

/** A route's second success answer: its own status, or under the same status one of the two schemas. */
function alternativeResponse(route: RouteDefinition) {
  if (!route.alternative || !route.response) return {};
  const alternative = { $ref: `#/components/schemas/${route.alternative.response.name}` };
  const headers = successHeaders(route);
  if (route.alternative.status !== route.status) {
    return { [String(route.alternative.status)]: { description: route.alternative.description, headers, content: { 'application/json': { schema: alternative } } } };
  }
  const schema = { oneOf: [{ $ref: `#/components/schemas/${route.response.name}` }, alternative] };
  return { [String(route.status)]: { description: `Success; or ${route.alternative.description}`, headers, content: { 'application/json': { schema } } } };
}

/** `GET /v1/customers/:id/payment-methods` → `getCustomersIdPaymentMethods`. */
const operationId = (route: RouteDefinition) => `${route.method.toLowerCase()}${route.path.replace(/\/v1|:/g, '').replace(/[/-](\w)/g, (_m, c: string) => c.toUpperCase())}`;

/** What every operation's description says besides its summary: who may call it, how to retry it, where it is told. */
function operationDescription(route: RouteDefinition, paged: boolean): string {
  const keys = route.publishable
    ? 'Any key may call it, publishable keys included.'
    : route.read
      ? 'A secret key (test or live) or a read_only key may call it; publishable keys may not.'
      : 'A secret key (test or live) may call it; read_only and publishable keys may not.';
  const lines = [`${route.summary}.`, keys];
  if (route.list && paged) lines.push('Answers a page of the list envelope, newest first: `limit` (1–100, default 10) and either a cursor, `starting_after` or `ending_before` (an object id; stable while objects are created), or `offset` (0–10 000); `has_more` says whether more items follow in the direction read.');
  else if (route.list) lines.push('Answers the whole list in one list envelope.');
  if (route.method === 'POST') {
    lines.push('Send an `Idempotency-Key` to retry it safely: a repeat with the same key and body answers the first answer (`Idempotent-Replayed: true`) instead of running again.');
  }
  if (!route.handler) lines.push('Part of the interface; answers 501 not_implemented until its capability lands. Key rules already apply.');
  const page = OPENAPI_TAGS[route.tag]?.page;
  if (page) lines.push(`Guide: ${page}.`);
  return lines.join(' ');
}

function operation(route: RouteDefinition, schemas: DtoSchemas) {
  const implemented = route.handler !== undefined;
  const pathParameters = [...route.path.matchAll(/:([A-Za-z]+)/g)].map(([, name]) => ({ name, in: 'path', required: true, schema: { type: 'string', pattern: PATH_ID_PATTERN.source } }));
  const query = queryParameters(route.query, schemas);
  return {
    operationId: operationId(route),
    summary: route.summary,
    description: operationDescription(route, query.some((parameter) => parameter.name === 'limit')),
    tags: [route.tag],
    ...(implemented ? {} : { 'x-recur-availability': 'planned' }),
    parameters: [...pathParameters, ...query, ...(route.method === 'POST' ? [{ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: 255, pattern: IDEMPOTENCY_KEY_PATTERN.source } }] : [])],
    // A body is required only when it has a required field: a PATCH, or a clone with no new
    // name, may be sent without one.
    ...(route.body ? { requestBody: { required: (schemas[route.body.name]?.required?.length ?? 0) > 0, content: { 'application/json': { schema: { $ref: `#/components/schemas/${route.body.name}` } } } } } : {}),
    responses: {
      [String(route.status)]: successResponse(route),
      ...alternativeResponse(route),
      '400': response('BadRequest'),
      '401': response('Unauthorized'),
      '403': response(route.publishable ? 'ForbiddenWrite' : 'Forbidden'),
      ...(pathParameters.length > 0 ? { '404': response('NotFound') } : {}),
      ...(route.read ? {} : { '409': response('Conflict') }),
      ...(route.body ? { '413': response('PayloadTooLarge'), '415': response('UnsupportedMediaType') } : {}),
      '429': response('RateLimited'),
      '500': response('InternalError'),
      ...(implemented ? {} : { '501': response('NotImplemented') }),
      '503': response('ServiceUnavailable'),
    },
  };
}

/**
 * OpenAPI 3.1 writes a nullable value as `type: [T, 'null']`. For an object, generators differ
 * (openapi-generator's Python client made such an object a required model and failed on null):
 * every nullable object is rewritten as `anyOf: [<the object>, {type: 'null'}]`, which every
 * generator reads as an optional model. The description stays outside, on the value.
 */
export function nullableObjectsAsAnyOf(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(nullableObjectsAsAnyOf);
  if (!schema || typeof schema !== 'object') return schema;
  const rewritten = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, nullableObjectsAsAnyOf(value)])) as Record<string, unknown>;
  const type = rewritten.type;
  if (!Array.isArray(type) || !type.includes('object') || !type.includes('null') || type.length !== 2) return rewritten;
  const { description, type: _type, ...objectSchema } = rewritten;
  return { ...(description === undefined ? {} : { description }), anyOf: [{ type: 'object', ...objectSchema }, { type: 'null' }] };
}

/**
 * The components the document uses, no others: the request DTOs that are only query parameters
 * (inlined as parameters) are dropped, and so is any schema nothing reaches.
 */
function reachableSchemas(document: object, schemas: Record<string, object>): Record<string, object> {
  const reached = new Set<string>();
  const visit = (value: unknown) => {
    for (const [, name] of JSON.stringify(value).matchAll(/"#\/components\/schemas\/([^"]+)"/g)) {
      if (reached.has(name) || !(name in schemas)) continue;
      reached.add(name);
      visit(schemas[name]);
    }
  };
  visit(document);
  return Object.fromEntries(Object.entries(schemas).filter(([name]) => reached.has(name)));
}

/** The OpenAPI 3.1 document of `/v1`, built from the route table: its DTOs and its answer schemas. */
export function buildOpenApiDocument(serverUrl = '/', routes: readonly RouteDefinition[] = ROUTES): Record<string, unknown> {
  const dtoSchemas = tightenRequestSchemas(validationMetadatasToSchemas({ classValidatorMetadataStorage: getMetadataStorage(), refPointerPrefix: '#/components/schemas/' }) as DtoSchemas);
  const paths: Record<string, Record<string, unknown>> = {};
  const responseSchemas: Record<string, object> = {};
  for (const route of routes) {
    const path = route.path.replace(/:([A-Za-z]+)/g, '{$1}');
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation(route, dtoSchemas) };
    if (route.response) responseSchemas[route.response.name] = route.response.schema;
    if (route.alternative) responseSchemas[route.alternative.response.name] = route.alternative.response.schema;
  }
  const events = webhookEvents();
  const usedTags = new Set([...routes.map((route) => route.tag), 'Webhook events']);
  const tags = Object.entries(OPENAPI_TAGS)
    .filter(([name]) => usedTags.has(name))
    .map(([name, { description, page }]) => ({ name, description: `${description} Guide: ${page}.` }));
  const allSchemas = nullableObjectsAsAnyOf({ ...dtoSchemas, ...responseSchemas, ...events.schemas, ListEnvelope: LIST_ENVELOPE_SCHEMA, Error: ERROR_SCHEMA }) as Record<string, object>;
  // Only the error answers some operation gives (501 once every route is implemented).
  const responses = Object.fromEntries(Object.entries(RESPONSES).filter(([name]) => JSON.stringify(paths).includes(`"#/components/responses/${name}"`)));
  const skeleton = { paths, webhooks: events.webhooks, responses };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Recur API',
      version: 'v1',
      description: 'Recurring billing and invoicing. Every route takes a key in the x-api-key header; the key selects the app (sandbox or live). Guide: docs/api/README.md.',
      contact: { name: 'Recur' },
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: serverUrl }],
    security: [{ apiKey: [] }],
    tags,
    paths,
    webhooks: events.webhooks,
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: API_KEY_HEADER } },
      schemas: reachableSchemas(skeleton, allSchemas),
      responses,
      headers: HEADERS,
    },
  };
}
