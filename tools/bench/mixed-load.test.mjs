// The rolling-upgrade bench's verdict (mixed-load.mjs compareEvents): lost, duplicated and
// twice-created resources are found; a redelivery of one event is not counted as a duplicate.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareEvents } from './mixed-load.mjs';

const customer = (eventId, id, email) => ({ id: eventId, type: 'customer.created', data: { object: { id, email } } });
const invoice = (eventId, id, description) => ({ id: eventId, type: 'invoice.created', data: { object: { id, description } } });
const tally = {
  customers: new Map([['a@example.com', 'cus_a'], ['b@example.com', 'cus_b'], ['c@example.com', 'cus_c']]),
  invoices: new Map([['Load 1', 'in_1']]),
};

test('every created resource announced once: nothing lost, duplicated or created twice', () => {
  const events = [customer('evt_1', 'cus_a', 'a@example.com'), customer('evt_2', 'cus_b', 'b@example.com'), customer('evt_3', 'cus_c', 'c@example.com'), invoice('evt_4', 'in_1', 'Load 1')];
  const result = compareEvents(tally, [...events, events[0]]);
  assert.deepEqual(result.checks.map((check) => [check.type, check.created, check.lost, check.duplicated]), [['customer.created', 3, [], []], ['invoice.created', 1, [], []]]);
  assert.deepEqual(result.createdTwice, []);
  assert.equal(result.redelivered, 1);
});

test('a missing event is lost, a second event about one resource is duplicated, a second resource for one marker is created twice', () => {
  const events = [
    customer('evt_1', 'cus_a', 'a@example.com'),
    customer('evt_2', 'cus_a', 'a@example.com'),
    customer('evt_3', 'cus_c', 'c@example.com'),
    customer('evt_5', 'cus_c2', 'c@example.com'),
    invoice('evt_4', 'in_1', 'Load 1'),
  ];
  const result = compareEvents(tally, events);
  assert.deepEqual(result.checks[0], { type: 'customer.created', created: 3, lost: ['cus_b'], duplicated: ['cus_a'] });
  assert.deepEqual(result.createdTwice, ['c@example.com']);
});
