import type { ClassConstructor } from 'class-transformer';
import { getMetadataStorage } from 'class-validator';
import { validationMetadatasToSchemas } from 'class-validator-jsonschema';
import { METADATA_KEY_MAX, METADATA_MAX_KEYS, METADATA_VALUE_MAX } from '@recur/kernel';
import { API_KEY_HEADER } from '../auth/api-key-header';
import { PATH_ID_PATTERN } from '../http/input-rules';
import { IDEMPOTENCY_KEY_PATTERN } from '../idempotency/idempotency-key';
import type { RouteDefinition } from '../routing/define-routes';
import { ROUTES } from '../routing/route-table';

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
/** What a refusal over the key's rate limit carries besides the error (docs/api/conventions.md, Rate limits). */
const RATE_LIMITED_HEADERS = {
  'Retry-After': integerHeader('Seconds until the key may call again.'),
  'RateLimit-Limit': integerHeader('Requests of this kind (read or write) the key may make a second.'),
  'RateLimit-Remaining': integerHeader('Requests left in the current second.'),
  'RateLimit-Reset': integerHeader('Seconds until the count starts again.'),
};
const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } });

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
      else if (property.$ref === '#/components/schemas/Object') schema.properties![name] = { type: 'object' };
      // The door refuses U+0000 in every string (input-rules.ts); say so where no pattern says more.
      else if (property.type === 'string' && !property.pattern) property.pattern = NO_NUL_PATTERN;
      else if (property.items?.type === 'string' && !property.items.pattern) property.items.pattern = NO_NUL_PATTERN;
    }
  }
  return schemas;
}

function queryParameters(query: ClassConstructor<object> | undefined, schemas: DtoSchemas) {
  if (!query) return [];
  const schema = schemas[query.name];
  return Object.entries(schema?.properties ?? {}).map(([name, property]) => ({ name, in: 'query', required: schema.required?.includes(name) ?? false, schema: property }));
}

function successResponse(route: RouteDefinition) {
  if (route.file) return { description: 'Success', content: { [route.file.contentType]: { schema: { type: 'string', format: 'binary' } } } };
  if (!route.response) return { description: 'Success' };
  const item = { $ref: `#/components/schemas/${route.response.name}` };
  const schema = route.list
    ? {
        type: 'object',
        required: ['object', 'url', 'data', 'total', 'limit', 'offset', 'has_more'],
        properties: { object: { type: 'string', enum: ['list'] }, url: { type: 'string' }, data: { type: 'array', items: item }, total: { type: 'integer' }, limit: { type: 'integer' }, offset: { type: 'integer' }, has_more: { type: 'boolean' } },
      }
    : item;
  return { description: 'Success', content: { 'application/json': { schema } } };
}

/** A route's second success answer: its own status, or under the same status one of the two schemas. */
function alternativeResponse(route: RouteDefinition) {
  if (!route.alternative || !route.response) return {};
  const alternative = { $ref: `#/components/schemas/${route.alternative.response.name}` };
  if (route.alternative.status !== route.status) {
    return { [String(route.alternative.status)]: { description: route.alternative.description, content: { 'application/json': { schema: alternative } } } };
  }
  const schema = { oneOf: [{ $ref: `#/components/schemas/${route.response.name}` }, alternative] };
  return { [String(route.status)]: { description: `Success; or ${route.alternative.description}`, content: { 'application/json': { schema } } } };
}

function operation(route: RouteDefinition, schemas: DtoSchemas) {
  const implemented = route.handler !== undefined;
  const pathParameters = [...route.path.matchAll(/:([A-Za-z]+)/g)].map(([, name]) => ({ name, in: 'path', required: true, schema: { type: 'string', pattern: PATH_ID_PATTERN.source } }));
  return {
    operationId: `${route.method.toLowerCase()}${route.path.replace(/\/v1|:/g, '').replace(/[/-](\w)/g, (_m, c: string) => c.toUpperCase())}`,
    summary: route.summary,
    tags: [route.tag],
    ...(implemented ? {} : { 'x-recur-availability': 'planned', description: 'Part of the interface; answers 501 not_implemented until its capability lands. Key rules already apply.' }),
    parameters: [...pathParameters, ...queryParameters(route.query, schemas), ...(route.method === 'POST' ? [{ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: 255, pattern: IDEMPOTENCY_KEY_PATTERN.source } }] : [])],
    // A body is required only when it has a required field: a PATCH, or a clone with no new
    // name, may be sent without one.
    ...(route.body ? { requestBody: { required: (schemas[route.body.name]?.required?.length ?? 0) > 0, content: { 'application/json': { schema: { $ref: `#/components/schemas/${route.body.name}` } } } } } : {}),
    responses: {
      [String(route.status)]: successResponse(route),
      ...alternativeResponse(route),
      '400': errorResponse('Invalid request (validation, unknown parameter, bad JSON).'),
      '401': errorResponse('Missing or invalid API key.'),
      '403': errorResponse(route.publishable ? 'A read_only key attempted a write.' : 'publishable_key_forbidden or api_key_read_only.'),
      ...(pathParameters.length > 0 ? { '404': errorResponse('No such resource in this app.') } : {}),
      '429': { ...errorResponse('rate_limited: this key made its limit of requests of this kind (read or write) this second; retry after Retry-After seconds.'), headers: RATE_LIMITED_HEADERS },
      ...(route.read ? {} : { '409': errorResponse('State conflict, or Idempotency-Key reused or in progress.') }),
      ...(route.body ? { '413': errorResponse('The body is larger than 256 KB.'), '415': errorResponse('The body is not sent as Content-Type: application/json.') } : {}),
      ...(implemented ? {} : { '501': errorResponse('Not available yet.') }),
      '503': {
        ...errorResponse('service_unavailable: a service behind the gateway is unavailable, or the gateway is at capacity and did nothing (admission control); retry after Retry-After seconds when given, with the same Idempotency-Key for a POST.'),
        headers: { 'Retry-After': integerHeader('Seconds to wait before retrying (sent when the gateway is at capacity).') },
      },
    },
  };
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
  return {
    openapi: '3.1.0',
    info: { title: 'Recur API', version: 'v1', description: 'Recurring billing and invoicing. Every route takes a key in the x-api-key header; the key selects the app (sandbox or live).' },
    servers: [{ url: serverUrl }],
    security: [{ apiKey: [] }],
    paths,
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: API_KEY_HEADER } },
      schemas: { ...dtoSchemas, ...responseSchemas, Error: ERROR_SCHEMA },
    },
  };
}
