import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inTodaysNotation, nullableObjectsAsAnyOf } from './openapi-notation.mjs';

describe('the nullable-object notation read on both sides of oasdiff', () => {
  it('rewrites a nullable object, nested ones included, as anyOf with null, keeping its description outside', () => {
    const period = { type: ['object', 'null'], description: 'The period.', required: ['start'], properties: { start: { type: 'integer' } } };
    const before = { properties: { period, lines: { type: 'array', items: { type: 'object', properties: { period } } } } };
    const rewritten = { description: 'The period.', anyOf: [{ type: 'object', required: ['start'], properties: { start: { type: 'integer' } } }, { type: 'null' }] };
    assert.deepEqual(nullableObjectsAsAnyOf(before), { properties: { period: rewritten, lines: { type: 'array', items: { type: 'object', properties: { period: rewritten } } } } });
  });

  it('leaves every other schema as it is: nullable scalars, plain objects, other type lists', () => {
    const schemas = [{ type: ['string', 'null'] }, { type: 'object', properties: {} }, { type: ['object', 'array'] }, { type: ['object', 'null', 'string'] }, { enum: ['object', 'null'] }];
    for (const schema of schemas) assert.deepEqual(nullableObjectsAsAnyOf(schema), schema);
  });

  it('drops the enum of the two listed boolean fields only, and of no other boolean', () => {
    const released = {
      components: {
        schemas: {
          TestClock: { properties: { livemode: { type: 'boolean', enum: [false] } } },
          DeletedWebhookEndpoint: { properties: { deleted: { type: 'boolean', enum: [true] } } },
          Customer: { properties: { deleted: { type: 'boolean', enum: [false] } } },
        },
      },
    };
    const today = inTodaysNotation(released);
    assert.deepEqual(today.components.schemas.TestClock.properties.livemode, { type: 'boolean' });
    assert.deepEqual(today.components.schemas.DeletedWebhookEndpoint.properties.deleted, { type: 'boolean' });
    assert.deepEqual(today.components.schemas.Customer.properties.deleted, { type: 'boolean', enum: [false] });
  });
});
