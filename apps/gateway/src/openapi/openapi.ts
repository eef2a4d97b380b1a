import type { ClassConstructor } from 'class-transformer';
import { getMetadataStorage } from 'class-validator';
import { validationMetadatasToSchemas } from 'class-validator-jsonschema';
import { ROUTES, type RouteEntry } from '../routing/route-table';
import { API_KEY_HEADER } from '../auth/api-key-header';
import { RESOURCE_SCHEMAS, ROUTE_DOCS } from './route-docs';

/** Routes whose handlers have landed; the rest are documented and answer 501 not_implemented. */
export const IMPLEMENTED_ROUTES = new Set(Object.keys(ROUTE_DOCS));

const RESPONSE_SCHEMAS: Record<string, object> = {
  ...RESOURCE_SCHEMAS,
  Error: {
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
  },
};

const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } });

function queryParameters(query: ClassConstructor<object> | undefined, schemas: Record<string, { properties?: Record<string, object>; required?: string[] }>) {
  if (!query) return [];
  const schema = schemas[query.name];
  return Object.entries(schema?.properties ?? {}).map(([name, property]) => ({ name, in: 'query', required: schema.required?.includes(name) ?? false, schema: property }));
}

function operation(route: RouteEntry, schemas: Record<string, object>) {
  const key = `${route.method} ${route.path}`;
  const doc = ROUTE_DOCS[key];
  const pathParameters = [...route.path.matchAll(/:([A-Za-z]+)/g)].map(([, name]) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
  const success = doc?.response
    ? {
        description: 'Success',
        content: {
          'application/json': {
            schema: doc.list
              ? { type: 'object', required: ['object', 'url', 'data', 'total', 'limit', 'offset', 'has_more'], properties: { object: { type: 'string', enum: ['list'] }, url: { type: 'string' }, data: { type: 'array', items: { $ref: `#/components/schemas/${doc.response}` } }, total: { type: 'integer' }, limit: { type: 'integer' }, offset: { type: 'integer' }, has_more: { type: 'boolean' } } }
              : { $ref: `#/components/schemas/${doc.response}` },
          },
        },
      }
    : { description: 'Success' };
  return {
    operationId: `${route.method.toLowerCase()}${route.path.replace(/\/v1|:/g, '').replace(/[/-](\w)/g, (_m, c: string) => c.toUpperCase())}`,
    summary: route.summary,
    tags: [route.tag],
    ...(IMPLEMENTED_ROUTES.has(key) ? {} : { 'x-recur-availability': 'planned', description: 'Part of the interface; answers 501 not_implemented until its capability lands. Key rules already apply.' }),
    parameters: [...pathParameters, ...queryParameters(doc?.query, schemas as never), ...(route.method === 'POST' ? [{ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 } }] : [])],
    ...(doc?.body ? { requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${doc.body.name}` } } } } } : {}),
    responses: {
      [String(doc?.status ?? 200)]: success,
      '400': errorResponse('Invalid request (validation, unknown parameter, bad JSON).'),
      '401': errorResponse('Missing or invalid API key.'),
      '403': errorResponse(route.publishable ? 'A read_only key attempted a write.' : 'publishable_key_forbidden or api_key_read_only.'),
      ...(pathParameters.length > 0 ? { '404': errorResponse('No such resource in this app.') } : {}),
      ...(route.read ? {} : { '409': errorResponse('State conflict, or Idempotency-Key reused or in progress.') }),
      ...(IMPLEMENTED_ROUTES.has(key) ? {} : { '501': errorResponse('Not available yet.') }),
    },
  };
}

/** The OpenAPI 3.1 document of `/v1`, built from the route table and the request DTOs. */
export function buildOpenApiDocument(serverUrl = '/'): Record<string, unknown> {
  const schemas = validationMetadatasToSchemas({ classValidatorMetadataStorage: getMetadataStorage(), refPointerPrefix: '#/components/schemas/' });
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) {
    const path = route.path.replace(/:([A-Za-z]+)/g, '{$1}');
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation(route, schemas) };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Recur API', version: 'v1', description: 'Recurring billing and invoicing. Every route takes a key in the x-api-key header; the key selects the app (sandbox or live).' },
    servers: [{ url: serverUrl }],
    security: [{ apiKey: [] }],
    paths,
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: API_KEY_HEADER } },
      schemas: { ...schemas, ...RESPONSE_SCHEMAS },
    },
  };
}
