import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SUBSCRIBABLE_EVENT_TYPES, WEBHOOK_TEST_EVENT_TYPE } from '@recur/vocabulary';
import { buildOpenApiDocument } from '../src/openapi/openapi';

interface Schema {
  $ref?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
}

describe('the OpenAPI document', () => {
  const document = buildOpenApiDocument() as { components: { schemas: Record<string, Schema> }; paths: Record<string, Record<string, { requestBody?: { content: { 'application/json': { schema: Schema } } } }>> };

  it('is a valid OpenAPI 3.1 document (checked against the specification’s own JSON Schema)', () => {
    // The validator is an ES module, which Jest's CommonJS mode cannot load: it runs in Node.
    const file = join(mkdtempSync(join(tmpdir(), 'recur-openapi-')), 'openapi.json');
    writeFileSync(file, JSON.stringify(document));
    const script = `import { Validator } from '@seriousme/openapi-schema-validator';
      const validator = new Validator();
      const result = await validator.validate(${JSON.stringify(file)});
      process.stdout.write(JSON.stringify({ version: validator.version, ...result }));`;
    const result = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: __dirname, encoding: 'utf8' }));
    expect(result).toEqual({ version: '3.1', valid: true });
  });

  it('defines every schema it references', () => {
    const references = [...JSON.stringify(document).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map(([, name]) => name);
    expect(references.length).toBeGreaterThan(0);
    expect([...new Set(references)].filter((name) => !(name in document.components.schemas))).toEqual([]);
  });

  it('says that request bodies refuse unknown fields, as the gateway does', () => {
    const bodies = Object.values(document.paths).flatMap((methods) => Object.values(methods)).flatMap((operation) => (operation.requestBody ? [operation.requestBody.content['application/json'].schema] : []));
    expect(bodies.length).toBeGreaterThan(10);
    for (const body of bodies) {
      const name = body.$ref!.replace('#/components/schemas/', '');
      expect([name, document.components.schemas[name].additionalProperties]).toEqual([name, false]);
    }
  });

  it('writes every nullable object as anyOf with null, which every generator reads as optional', () => {
    const typeLists = [...JSON.stringify(document).matchAll(/"type":\[([^\]]*)\]/g)].map(([, types]) => types);
    expect(typeLists.length).toBeGreaterThan(0);
    expect(typeLists.filter((types) => types.includes('"object"'))).toEqual([]);
    const invoice = document.components.schemas.Invoice as { properties: Record<string, { anyOf?: object[] }> };
    expect(invoice.properties.period.anyOf).toEqual([expect.objectContaining({ type: 'object' }), { type: 'null' }]);
  });

  it('has no boolean enum or const, which openapi-generator’s Python client compares with a string', () => {
    expect(JSON.stringify(document).match(/"type":"boolean","(enum|const)"|"(enum|const)":\[?(true|false)/g)).toBeNull();
  });

  it('has one list envelope, and no component nothing uses', () => {
    const text = JSON.stringify({ paths: document.paths, webhooks: (document as unknown as { webhooks: object }).webhooks });
    expect(text.match(/"has_more"/g)).toBeNull();
    expect(text.match(/#\/components\/schemas\/ListEnvelope/g)!.length).toBeGreaterThan(20);
    const everything = JSON.stringify(document);
    const components = (document as unknown as { components: Record<string, Record<string, unknown>> }).components;
    for (const kind of ['schemas', 'responses', 'headers']) {
      const unused = Object.keys(components[kind]).filter((name) => !everything.includes(`"#/components/${kind}/${name}"`));
      expect({ kind, unused }).toEqual({ kind, unused: [] });
    }
  });

  it('declares the answers every operation may give: Request-Id, 429 with Retry-After, 500 and 503', () => {
    const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods)) as unknown as { operationId: string; description?: string; tags?: string[]; responses: Record<string, { headers?: Record<string, unknown>; $ref?: string }> }[];
    expect(operations).toHaveLength(116);
    for (const operation of operations) {
      const { responses } = operation;
      expect({ id: operation.operationId, statuses: ['429', '500', '503'].filter((status) => !responses[status]) }).toEqual({ id: operation.operationId, statuses: [] });
      const success = Object.entries(responses).find(([status]) => status.startsWith('2'))![1];
      expect(Object.keys(success.headers ?? {})).toEqual(expect.arrayContaining(['Request-Id', 'RateLimit-Remaining']));
      expect(operation.description).toEqual(expect.stringContaining(' '));
      expect(operation.tags).toHaveLength(1);
    }
    const responses = (document as unknown as { components: { responses: Record<string, { headers: Record<string, unknown> }> } }).components.responses;
    expect(Object.keys(responses.RateLimited.headers)).toEqual(expect.arrayContaining(['Request-Id', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']));
  });

  it('describes what each event type POSTs to a webhook endpoint', () => {
    const webhooks = (document as unknown as { webhooks: Record<string, { post: { requestBody: { content: { 'application/json': { schema: Schema } } } } }> }).webhooks;
    expect(Object.keys(webhooks).sort()).toEqual([...Object.keys(SUBSCRIBABLE_EVENT_TYPES), WEBHOOK_TEST_EVENT_TYPE].sort());
    const paid = document.components.schemas[webhooks['invoice.paid'].post.requestBody.content['application/json'].schema.$ref!.replace('#/components/schemas/', '')];
    expect(paid.properties!.data.properties!.object).toEqual({ $ref: '#/components/schemas/Invoice' });
    expect(Object.keys(paid.properties!.data.properties!)).toEqual(['object', 'payment']);
  });
});
