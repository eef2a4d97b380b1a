import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
});
