import { createTestDatabase, eventually, sleep } from '@recur/testing';
import { Pool } from 'pg';
import { claimDueRowsSql, claimParams, type DueRowsTable, JobWorker, type JobWorkerOptions, nextDueAtSql, RetrySchedule } from '../src';

jest.setTimeout(30_000);

/** A service's job table: due at run_at, leased until lease_until, done when status changes. */
const JOBS: DueRowsTable = { table: 'test_jobs', dueAt: 'run_at', leaseUntil: 'lease_until', pending: "status = 'pending'" };
const CHANNEL = 'test_jobs';
const T0 = new Date('2031-03-01T00:00:00.000Z');
/** Longer than any test: only a wake-up (NOTIFY, wake(), a finished job) makes a worker look again. */
const NO_POLL_MS = 60_000;

let databaseUrl: string;
let pool: Pool;

beforeAll(async () => {
  databaseUrl = await createTestDatabase('jobs');
  pool = new Pool({ connectionString: databaseUrl, max: 8 });
  await pool.query(`CREATE TABLE test_jobs (
    id text PRIMARY KEY, run_at timestamptz(3), lease_until timestamptz(3),
    status text NOT NULL DEFAULT 'pending', attempts int NOT NULL DEFAULT 0, ran_by text[] NOT NULL DEFAULT '{}')`);
});
afterAll(() => pool.end());
beforeEach(() => pool.query('TRUNCATE test_jobs'));

/** A clock the test moves by hand. */
function fakeClock(start = T0) {
  let time = start.getTime();
  return { now: () => new Date(time), advance: (ms: number) => void (time += ms) };
}

const addJob = (id: string, runAt: Date) => pool.query('INSERT INTO test_jobs (id, run_at) VALUES ($1, $2)', [id, runAt]);
const job = async (id: string) => (await pool.query('SELECT * FROM test_jobs WHERE id = $1', [id])).rows[0];
const claimIds = async (now: Date, leaseMs = 30_000, limit = 10): Promise<string[]> =>
  (await pool.query<{ id: string }>(`WITH ${claimDueRowsSql(JOBS)} SELECT id FROM claimed ORDER BY id`, claimParams(now, leaseMs, limit))).rows.map((row) => row.id);
const finish = (id: string, worker = 'w') => pool.query(`UPDATE test_jobs SET status = 'done', lease_until = NULL, ran_by = array_append(ran_by, $2) WHERE id = $1`, [id, worker]);

/** A worker on the test table; `claims` counts its claim queries, so a test can wait for one. */
function testWorker(overrides: Partial<JobWorkerOptions<{ id: string }>> & Pick<JobWorkerOptions<{ id: string }>, 'clock' | 'run'>) {
  const counter = { claims: 0 };
  const worker = new JobWorker<{ id: string }>({
    name: 'test jobs',
    wakeUp: { databaseUrl, channel: CHANNEL },
    pollMs: NO_POLL_MS,
    claim: async (limit, now) => {
      const { rows } = await pool.query<{ id: string }>(`WITH ${claimDueRowsSql(JOBS)} SELECT id FROM claimed`, claimParams(now, 30_000, limit));
      counter.claims += 1;
      return rows;
    },
    nextDueAt: async () => (await pool.query(nextDueAtSql(JOBS))).rows[0].next_due_at,
    ...overrides,
  });
  return Object.assign(worker, { counter });
}

/** Wakes the worker and waits until it has looked for jobs at least once more. */
async function wakeAndWaitForClaim(worker: ReturnType<typeof testWorker>): Promise<void> {
  const before = worker.counter.claims;
  worker.wake();
  await eventually(async () => worker.counter.claims > before, 5_000, 'a claim');
}

describe('due-time rows', () => {
  it('are due when the injected clock reaches run_at, whatever the database clock says', async () => {
    await addJob('future', new Date(T0.getTime() + 60_000));
    // run_at is years ahead of the database's now(): only the clock parameter can make it due.
    expect(await claimIds(T0)).toEqual([]);
    expect(await claimIds(new Date(T0.getTime() + 59_999))).toEqual([]);
    expect(await claimIds(new Date(T0.getTime() + 60_000))).toEqual(['future']);

    // And the other way round: due by the database's now() (the past) but not by the clock.
    await addJob('past', new Date('2001-01-02T00:00:00Z'));
    expect(await claimIds(new Date('2001-01-01T00:00:00Z'))).toEqual([]);
  });

  it('run in a worker once its clock is advanced, not before', async () => {
    const clock = fakeClock();
    const ran: string[] = [];
    const worker = testWorker({ clock: clock.now, run: async ({ id }) => void (ran.push(id), await finish(id)) });
    await addJob('renewal', new Date(T0.getTime() + 3_600_000));
    await worker.start();
    try {
      await wakeAndWaitForClaim(worker);
      clock.advance(3_599_999);
      await wakeAndWaitForClaim(worker);
      expect(ran).toEqual([]);
      clock.advance(1);
      worker.wake();
      await eventually(async () => ran.length === 1, 5_000, 'the due job');
      expect(ran).toEqual(['renewal']);
    } finally {
      await worker.stop();
    }
  });

  it('claim a leased job again only once its lease lapsed (its worker died)', async () => {
    await addJob('a', T0);
    expect(await claimIds(T0, 30_000)).toEqual(['a']);
    // The worker that holds it never finishes (kill -9); nobody else may take it meanwhile.
    expect(await claimIds(new Date(T0.getTime() + 30_000))).toEqual([]);
    expect(await claimIds(new Date(T0.getTime() + 30_001))).toEqual(['a']);
  });

  it('report when the next one becomes claimable, counting leases', async () => {
    expect((await pool.query(nextDueAtSql(JOBS))).rows[0].next_due_at).toBeNull();
    await addJob('later', new Date(T0.getTime() + 10_000));
    await addJob('leased', T0);
    await claimIds(T0, 5_000);
    expect((await pool.query(nextDueAtSql(JOBS))).rows[0].next_due_at).toEqual(new Date(T0.getTime() + 5_000));
  });
});

describe('JobWorker', () => {
  it('never runs one job in two workers at once, and runs each once', async () => {
    const clock = fakeClock();
    const running = new Set<string>();
    const overlaps: string[] = [];
    const worker = (name: string) =>
      testWorker({
        clock: clock.now,
        concurrency: 4,
        pollMs: 50,
        run: async ({ id }) => {
          if (running.has(id)) overlaps.push(id);
          running.add(id);
          await sleep(5 + Math.random() * 15);
          running.delete(id);
          await finish(id, name);
        },
      });
    const [a, b] = [worker('a'), worker('b')];
    for (let i = 0; i < 60; i++) await addJob(`job_${String(i).padStart(2, '0')}`, T0);
    await Promise.all([a.start(), b.start()]);
    try {
      await eventually(async () => (await pool.query(`SELECT count(*)::int AS n FROM test_jobs WHERE status = 'done'`)).rows[0].n === 60, 20_000, 'all jobs');
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
    const { rows } = await pool.query<{ ran_by: string[] }>('SELECT ran_by FROM test_jobs');
    expect(overlaps).toEqual([]);
    expect(rows.every((row) => row.ran_by.length === 1)).toBe(true);
    // Both workers took part, so the test did exercise two claimers.
    expect(new Set(rows.map((row) => row.ran_by[0]))).toEqual(new Set(['a', 'b']));
  });

  it('retries a failing job on its backoff schedule by the clock, then gives up', async () => {
    const clock = fakeClock();
    const schedule = new RetrySchedule([1_000, 2_000, 4_000]);
    const worker = testWorker({
      clock: clock.now,
      run: async ({ id }) => {
        const { attempts } = await job(id);
        const next = schedule.nextAttemptAt(attempts + 1, clock.now());
        await pool.query(`UPDATE test_jobs SET attempts = attempts + 1, run_at = $2, status = $3, lease_until = NULL WHERE id = $1`, [id, next, next ? 'pending' : 'failed']);
      },
    });
    await addJob('flaky', T0);
    await worker.start();
    try {
      await eventually(async () => (await job('flaky')).attempts === 1, 5_000, 'first attempt');
      for (const [attempt, delay] of [[1, 1_000], [2, 2_000], [3, 4_000]]) {
        expect((await job('flaky')).run_at).toEqual(new Date(clock.now().getTime() + delay));
        clock.advance(delay - 1);
        await wakeAndWaitForClaim(worker);
        expect((await job('flaky')).attempts).toBe(attempt);
        clock.advance(1);
        worker.wake();
        await eventually(async () => (await job('flaky')).attempts === attempt + 1, 5_000, `attempt ${attempt + 1}`);
      }
      expect(await job('flaky')).toMatchObject({ attempts: 4, status: 'failed', run_at: null });
    } finally {
      await worker.stop();
    }
  });

  it('keeps a wake-up that arrives while it is claiming', async () => {
    const clock = fakeClock();
    const ran: string[] = [];
    const worker: ReturnType<typeof testWorker> = testWorker({
      clock: clock.now,
      run: async ({ id }) => void (ran.push(id), await finish(id)),
      claim: async (limit, now) => {
        const { rows } = await pool.query<{ id: string }>(`WITH ${claimDueRowsSql(JOBS)} SELECT id FROM claimed`, claimParams(now, 30_000, limit));
        if (worker.counter.claims++ === 0) {
          // A job is queued (and its NOTIFY would fire) after this claim read the table.
          await addJob('queued-meanwhile', T0);
          worker.wake();
        }
        return rows;
      },
    });
    await worker.start();
    try {
      // No poll will come for a minute: only the kept wake-up can make it look again.
      await eventually(async () => ran.length === 1, 5_000, 'the job queued mid-claim');
    } finally {
      await worker.stop();
    }
  });

  it('wakes on a NOTIFY on its channel', async () => {
    const ran: string[] = [];
    const worker = testWorker({ clock: fakeClock().now, run: async ({ id }) => void (ran.push(id), await finish(id)) });
    await worker.start();
    try {
      await eventually(async () => worker.counter.claims > 0, 5_000, 'the first claim');
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query('INSERT INTO test_jobs (id, run_at) VALUES ($1, $2)', ['notified', T0]);
        await client.query(`SELECT pg_notify('${CHANNEL}', '')`);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
      await eventually(async () => ran.length === 1, 5_000, 'the notified job');
    } finally {
      await worker.stop();
    }
  });

  it('stops only after the job in flight finished, and claims nothing more', async () => {
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const started: string[] = [];
    const worker = testWorker({
      clock: fakeClock().now,
      run: async ({ id }) => {
        started.push(id);
        await blocked;
        await finish(id);
      },
    });
    await addJob('slow', T0);
    await worker.start();
    let stopped = false;
    let stopping: Promise<unknown> | undefined;
    try {
      await eventually(async () => started.length === 1, 5_000, 'the job to start');
      await addJob('after-stop', T0);
      stopping = worker.stop().then(() => (stopped = true));
      await sleep(300);
      expect(stopped).toBe(false);
    } finally {
      release();
      await (stopping ?? worker.stop());
    }
    expect((await job('slow')).status).toBe('done');
    expect(started).toEqual(['slow']);
    expect((await job('after-stop')).status).toBe('pending');
  });

  it('backs off after failures instead of hammering', async () => {
    const pauses: number[] = [];
    let claims = 0;
    const worker = new JobWorker<never>({
      name: 'failing',
      clock: fakeClock().now,
      pollMs: NO_POLL_MS,
      claim: async () => {
        claims += 1;
        throw new Error('database down');
      },
      run: async () => undefined,
      failureBackoff: (failures) => {
        pauses.push(failures);
        return 50;
      },
    });
    await worker.start();
    await sleep(500);
    await worker.stop();
    // Each failure pauses 50 ms: about 10 claims in 500 ms, not thousands.
    expect(pauses.slice(0, 3)).toEqual([1, 2, 3]);
    expect(claims).toBeGreaterThan(3);
    expect(claims).toBeLessThan(15);
  });
});

describe('JobWorker claiming ahead (prefetch)', () => {
  /** A worker on the real clock whose claims lease for `leaseMs` and return each job's lease end. */
  function prefetchingWorker(name: string, options: { leaseMs: number; runMs: number; running: Set<string>; overlaps: string[]; guard: boolean }) {
    return new JobWorker<{ id: string; lease_until: Date }>({
      name: `prefetching ${name}`,
      clock: () => new Date(),
      concurrency: 1,
      prefetch: 3,
      pollMs: 50,
      claim: async (limit, now) =>
        (await pool.query<{ id: string; lease_until: Date }>(`WITH ${claimDueRowsSql(JOBS)} SELECT id, lease_until FROM claimed ORDER BY id`, claimParams(now, options.leaseMs, limit))).rows,
      stillLeased: options.guard ? (job, now) => job.lease_until.getTime() - now.getTime() >= options.runMs : undefined,
      run: async ({ id }) => {
        if (options.running.has(id)) options.overlaps.push(id);
        options.running.add(id);
        await sleep(options.runMs);
        options.running.delete(id);
        await finish(id, name);
      },
    });
  }

  it('runs every job once across two workers, each holding claimed jobs waiting for its slots', async () => {
    const running = new Set<string>();
    const overlaps: string[] = [];
    const workers = ['a', 'b'].map((name) => prefetchingWorker(name, { leaseMs: 30_000, runMs: 10, running, overlaps, guard: true }));
    for (let i = 0; i < 40; i++) await addJob(`job_${String(i).padStart(2, '0')}`, new Date(Date.now() - 1_000));
    await Promise.all(workers.map((worker) => worker.start()));
    try {
      await eventually(async () => (await pool.query(`SELECT count(*)::int AS n FROM test_jobs WHERE status = 'done'`)).rows[0].n === 40, 20_000, 'all jobs');
    } finally {
      await Promise.all(workers.map((worker) => worker.stop()));
    }
    const { rows } = await pool.query<{ ran_by: string[] }>('SELECT ran_by FROM test_jobs');
    expect(overlaps).toEqual([]);
    expect(rows.every((row) => row.ran_by.length === 1)).toBe(true);
    expect(new Set(rows.map((row) => row.ran_by[0]))).toEqual(new Set(['a', 'b']));
  });

  it('drops a claimed job whose lease would lapse while it runs: another worker claims it, and it runs once', async () => {
    // Leases of 600 ms, jobs of 250 ms, one slot and three claimed ahead: the third job of a
    // claim would start 500 ms into a 600 ms lease and outlive it.
    const running = new Set<string>();
    const overlaps: string[] = [];
    const workers = ['a', 'b'].map((name) => prefetchingWorker(name, { leaseMs: 600, runMs: 250, running, overlaps, guard: true }));
    for (let i = 0; i < 12; i++) await addJob(`job_${String(i).padStart(2, '0')}`, new Date(Date.now() - 1_000));
    await Promise.all(workers.map((worker) => worker.start()));
    try {
      await eventually(async () => (await pool.query(`SELECT count(*)::int AS n FROM test_jobs WHERE status = 'done'`)).rows[0].n === 12, 25_000, 'all jobs');
      // A job run past its lease would finish after another worker's run: wait for stragglers.
      await sleep(600);
    } finally {
      await Promise.all(workers.map((worker) => worker.stop()));
    }
    const { rows } = await pool.query<{ id: string; ran_by: string[] }>('SELECT id, ran_by FROM test_jobs ORDER BY id');
    expect(overlaps).toEqual([]);
    expect(rows.filter((row) => row.ran_by.length !== 1)).toEqual([]);
  });

  it('runs the jobs it claimed ahead before stop() returns', async () => {
    const ran: string[] = [];
    const worker = new JobWorker<{ id: string }>({
      name: 'prefetching stop',
      clock: fakeClock().now,
      concurrency: 1,
      prefetch: 4,
      pollMs: NO_POLL_MS,
      claim: async (limit, now) => (await pool.query<{ id: string }>(`WITH ${claimDueRowsSql(JOBS)} SELECT id FROM claimed ORDER BY id`, claimParams(now, 30_000, limit))).rows,
      run: async ({ id }) => {
        await sleep(50);
        ran.push(id);
        await finish(id);
      },
    });
    for (let i = 0; i < 5; i++) await addJob(`job_${i}`, T0);
    await worker.start();
    await eventually(async () => ran.length >= 1, 5_000, 'the first job');
    await worker.stop();
    expect(ran).toEqual(['job_0', 'job_1', 'job_2', 'job_3', 'job_4']);
    expect((await pool.query(`SELECT count(*)::int AS n FROM test_jobs WHERE status = 'pending'`)).rows[0].n).toBe(0);
  });
});
