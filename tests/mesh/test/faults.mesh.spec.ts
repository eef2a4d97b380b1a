import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '@recur/testing';

/**
 * Nothing acknowledged is lost and nothing is done twice when parts of the mesh fail: the short
 * form of `npm run bench:faults` (tools/bench/faults.mjs --short) — every app its own process with
 * a Kafka broker of its own, a steady mixed load whose client retries every POST with its
 * Idempotency-Key, then one at a time kill -9 of the gateway, kill -9 of a service (invoicing),
 * the broker stopped and restarted, PostgreSQL killed -9 and restarted. Each fault's row must show
 * 0 requests answered 2xx and then lost, 0 events lost, 0 side effects done twice
 * (docs/performance.md#faults).
 */
const SHORT_FORM_TIMEOUT_MS = 420_000;

interface FaultRow {
  fault: string;
  requests: number;
  lost: number;
  eventsLost: number;
  duplicated: number;
  duplicatedDetail: Record<string, number>;
  fiveHundreds: number;
  internalErrors: number;
  unanswered: number;
}

it(
  'loses no acknowledged request and no event, and doubles no side effect, through kill -9 of an app of each kind, a broker restart and a PostgreSQL kill',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'recur-faults-'));
    const json = join(dir, 'rows.json');
    try {
      const child = spawn(process.execPath, [join(REPO_ROOT, 'tools', 'bench', 'faults.mjs'), '--short', '--json', json], {
        cwd: REPO_ROOT,
        env: { ...process.env, RECUR_SKIP_BUILD: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      child.stderr.on('data', (chunk) => (output += chunk));
      // Past its time the suite is stopped, so its processes stop with it rather than outlive the test.
      const stopper = setTimeout(() => child.kill('SIGTERM'), SHORT_FORM_TIMEOUT_MS - 20_000);
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      clearTimeout(stopper);
      let rows: FaultRow[];
      try {
        rows = JSON.parse(readFileSync(json, 'utf8')) as FaultRow[];
      } catch {
        throw new Error(`the fault suite wrote no rows (exit ${code}); its output:\n${output.slice(-6000)}`);
      }
      // A run stopped midway (its time was up) wrote the rows of the faults it finished: they show what went wrong.
      // Each fault ran under load, and its must-be-0 columns are 0.
      expect(rows.map((row) => ({ fault: row.fault, loadRan: row.requests > 0, lost: row.lost, eventsLost: row.eventsLost, duplicated: row.duplicated, internalErrors: row.internalErrors, detail: row.duplicatedDetail }))).toEqual(
        ['kill-gateway', 'kill-invoicing', 'kafka-restart', 'postgres-kill'].map((fault) => ({
          fault,
          loadRan: true,
          lost: 0,
          eventsLost: 0,
          duplicated: 0,
          // A fault of the infrastructure is answered 503 (retry), never 500.
          internalErrors: 0,
          detail: expect.any(Object),
        })),
      );
      // The gateway's death was seen by the clients (it is the one fault no retry inside the mesh hides).
      const gateway = rows.find((row) => row.fault === 'kill-gateway')!;
      expect(gateway.unanswered + gateway.fiveHundreds).toBeGreaterThan(0);
      expect({ code, tail: code === 0 ? '' : output.slice(-3000) }).toEqual({ code: 0, tail: '' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
  SHORT_FORM_TIMEOUT_MS,
);
