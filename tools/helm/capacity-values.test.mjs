// The chart's requests and HPA targets are the capacity table's (capacity-values.mjs): the
// repository's values.yaml agrees with helm/recur/capacity.json, and a value edited by hand is
// caught, named with what the table gives.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { CHART_APPS, deriveChartValues, disagreements, readCapacity, RULE, VALUES_FILE, writeChartValues } from './capacity-values.mjs';
import { coreLayout } from '../bench/pinning.mjs';

const values = readFileSync(VALUES_FILE, 'utf8');
const capacity = readCapacity();

test("helm/recur/values.yaml's requests and HPA targets are the ones helm/recur/capacity.json gives", () => {
  assert.deepEqual(disagreements(values, capacity), []);
});

test('a request edited by hand disagrees with the table, and the check names it', () => {
  const derived = deriveChartValues(capacity);
  const edited = values.replace(`resources: {requests: {cpu: ${derived.subscription.cpu},`, 'resources: {requests: {cpu: 999m,');
  assert.notEqual(edited, values);
  const problems = disagreements(edited, capacity);
  assert.equal(problems.length, 1);
  assert.match(problems[0], new RegExp(`^apps\\.([\\w-]+)\\.resources\\.requests\\.cpu: values\\.yaml says 999m, the capacity table gives ${derived.subscription.cpu}$`));
});

test('a derived line removed is a disagreement, not a pass', () => {
  const edited = values.replace(/^ {4}resources: \{requests: .*\n/m, '');
  assert.ok(disagreements(edited, capacity).some((problem) => problem.includes('(no such line)')));
});

test('the rule: CPU at rest plus the design load per replica, over the HPA target; memory peak plus a quarter', () => {
  const processes = Object.fromEntries(CHART_APPS.map((app) => [app, { restMsPerSecond: 10, peakRssMiB: 200, cpuUsPerRequest: { mix: 2_000 } }]));
  const derived = deriveChartValues({ processes }, RULE);
  // 10 ms/s + 100/2 requests/s × 2 ms = 110 millicores busy; / 0.70 = 157.1 → 160m. 200 MiB × 1.25 = 250 → 256Mi.
  assert.deepEqual(derived.gateway, { cpu: '160m', memory: '256Mi', memoryLimit: '512Mi', targetCPUUtilizationPercentage: 70, busyMillicores: 110 });
  // webhook-dispatch's target is lower (its deliveries wait on receivers): 110 / 0.50 = 220m.
  assert.equal(derived['webhook-dispatch'].cpu, '220m');
});

test('writing the derived values and checking them again agrees', () => {
  const processes = Object.fromEntries(CHART_APPS.map((app, k) => [app, { restMsPerSecond: 3 + k, peakRssMiB: 150 + 10 * k, cpuUsPerRequest: { mix: 500 * (k + 1) } }]));
  const written = writeChartValues(values, { processes });
  assert.deepEqual(disagreements(written, { processes }), []);
  assert.notDeepEqual(disagreements(values, { processes }), []);
});

test('replicas pinned to cores of their own where there are enough; dealt round (and said so) where not', () => {
  const names = ['gateway-1', 'gateway-2', 'subscription-1', 'subscription-2'];
  const wide = coreLayout([0, 1, 2, 3, 4, 5], names);
  assert.deepEqual(wide, { sets: { 'gateway-1': [0], 'gateway-2': [1], 'subscription-1': [2], 'subscription-2': [3] }, rest: [4, 5], shared: false, needed: 5 });
  const narrow = coreLayout([0, 1], names);
  assert.equal(narrow.shared, true);
  assert.deepEqual(narrow.sets['gateway-2'], [1]);
  assert.deepEqual(narrow.sets['subscription-1'], [0]);
  assert.deepEqual(narrow.rest, [0, 1]);
});
