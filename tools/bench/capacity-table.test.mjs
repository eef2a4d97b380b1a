// The capacity page shows what helm/recur/capacity.json holds: its generated table is the one
// rendered from the file, so neither can be edited without the other (npm run bench:capacity
// writes both).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../bootstrap.mjs';
import { CAPACITY_FILE, readCapacity } from '../helm/capacity-values.mjs';
import { generatedPart, perCore, renderTables } from './capacity-table.mjs';

const page = readFileSync(join(ROOT, 'docs', 'operations', 'capacity.md'), 'utf8');

test(`docs/operations/capacity.md's generated table is the one ${CAPACITY_FILE.slice(ROOT.length + 1)} renders`, () => {
  assert.equal(generatedPart(page), renderTables(readCapacity()).trim());
});

test('requests a second per core: one core after the time at rest, over the CPU per request; none where the CPU is noise', () => {
  const process = { restMsPerSecond: 10, cpuUsPerRequest: { a: 2_000, b: 15, c: 50 } };
  assert.equal(perCore(process, 'a'), 495);
  assert.equal(perCore(process, 'b'), undefined);
  // 50 µs against a mesh spending 10 ms on that work: under 1 % of it.
  assert.equal(perCore(process, 'c', 10_000), undefined);
  assert.equal(perCore(process, 'c', 1_000), 19_800);
});
