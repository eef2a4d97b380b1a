import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Mesh, startMesh, MESH_START_TIMEOUT_MS } from './mesh';
import { implementedApiDocument, runSchemathesis } from './schemathesis';

/**
 * The gateway's door, fuzzed from its own OpenAPI document with every check schemathesis
 * has (no 5xx, responses match their schemas, invalid input refused, valid input accepted,
 * stateful sequences through the links). The budget fits CI; RECUR_FUZZ_MAX_TIME (seconds)
 * and RECUR_FUZZ_MAX_EXAMPLES raise it for a nightly run, RECUR_FUZZ_SEED varies the seed.
 */
const MAX_TIME = Number(process.env.RECUR_FUZZ_MAX_TIME ?? 150);
const MAX_EXAMPLES = Number(process.env.RECUR_FUZZ_MAX_EXAMPLES ?? 25);
const SEED = Number(process.env.RECUR_FUZZ_SEED ?? 20261126);

let mesh: Mesh;
let key: string;

beforeAll(async () => {
  mesh = await startMesh();
  ({ keys: { test: key } } = await mesh.createAccount('Fuzz'));
}, MESH_START_TIMEOUT_MS);

afterAll(async () => {
  mesh?.webhookDispatch.close();
  await mesh?.stop();
}, 60_000);

it(`finds no server error, schema violation or accepted invalid input (seed ${SEED})`, async () => {
  const reportDir = mkdtempSync(join(tmpdir(), 'recur-fuzz-'));
  const document = await implementedApiDocument(mesh.baseUrl, reportDir);
  expect(document.operations).toBeGreaterThanOrEqual(40);
  const run = await runSchemathesis({ document: document.path, baseUrl: mesh.baseUrl, key, maxExamples: MAX_EXAMPLES, maxTimeSeconds: MAX_TIME, seed: SEED, reportDir });
  // The whole report on failure: each failing case comes with a curl line to reproduce it.
  if (run.exitCode !== 0) process.stderr.write(`${run.output}\nJUnit report: ${reportDir}\n`);
  // Every implemented operation was exercised, and nothing failed.
  expect(run.output).toMatch(new RegExp(`Tested: ${document.operations}\\b`));
  expect(run.exitCode).toBe(0);
}, (MAX_TIME + 240) * 1000);
