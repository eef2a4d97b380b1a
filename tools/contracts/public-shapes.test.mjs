import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { breakingShapeChanges, readShapes } from './public-shapes.mjs';

const shapes = (invoice, eventTypes = "'invoice.paid': 'Paid.',\n  'invoice.voided': 'Voided.',") =>
  readShapes([
    { path: 'libs/contracts/src/public/invoice.ts', text: `import type { X } from '../gen/x';\nexport interface InvoiceJson {\n${invoice}\n}\ninterface Internal { a: string }\nexport function present(x: X): InvoiceJson { return x as never; }\n` },
    { path: 'libs/vocabulary/src/event-types.ts', text: `export const SUBSCRIBABLE_EVENT_TYPES = {\n  ${eventTypes}\n} as const;\nexport const WEBHOOK_TEST_EVENT_TYPE = 'webhook.test';\n` },
  ]);
const BEFORE = shapes(`  id: string;\n  object: 'invoice';\n  amount_due: number;\n  number: string | null;\n  /** Note. */\n  paid_at: number;\n  reason: 'duplicate' | 'fraudulent';`);

describe('the public JSON shapes', () => {
  it('reads exported interfaces and the event types, nothing else', () => {
    assert.deepEqual(Object.keys(BEFORE.interfaces), ['InvoiceJson']);
    assert.deepEqual(BEFORE.interfaces.InvoiceJson.properties.number, { type: 'string | null', optional: false });
    assert.deepEqual(BEFORE.eventTypes, ['invoice.paid', 'invoice.voided', 'webhook.test']);
  });

  it('lets additions through: a new field, optional or not, a new event type, a new value of a string-literal union', () => {
    const after = shapes(
      `  id: string;\n  object: 'invoice';\n  amount_due: number;\n  number: string | null;\n  paid_at: number;\n  reason: 'duplicate' | 'fraudulent' | 'unapplied';\n  memo?: string;\n  total: number;`,
      "'invoice.paid': 'Paid.',\n  'invoice.voided': 'Voided.',\n  'invoice.sent': 'Sent.',",
    );
    assert.deepEqual(breakingShapeChanges(BEFORE, after), []);
  });

  it('says why each breaking change breaks: a removed field or event type, a changed type, a field made optional', () => {
    const after = shapes(`  id: string;\n  object: 'invoice';\n  number: string;\n  paid_at?: number;\n  reason: 'duplicate' | null;`, "'invoice.paid': 'Paid.',");
    assert.deepEqual(breakingShapeChanges(BEFORE, after), [
      'event type invoice.voided was removed: endpoints subscribed to it would stop receiving it',
      'InvoiceJson.amount_due was removed: consumers reading it would get undefined',
      'InvoiceJson.number changed type from `string | null` to `string`: consumers parse the old type',
      'InvoiceJson.paid_at became optional: consumers rely on it being present',
      "InvoiceJson.reason changed type from `'duplicate' | 'fraudulent'` to `'duplicate' | null`: consumers parse the old type",
    ]);
  });

  it('says so when a whole shape is gone', () => {
    const after = readShapes([{ path: 'libs/contracts/src/public/invoice.ts', text: 'export interface InvoiceJsonV2 { id: string }' }]);
    assert.match(breakingShapeChanges({ ...BEFORE, eventTypes: [] }, after)[0], /^InvoiceJson was removed/);
  });
});
