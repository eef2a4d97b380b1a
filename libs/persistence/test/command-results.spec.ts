import { StringValueSchema } from '@bufbuild/protobuf/wkt';
import { DomainError, invalidArgument, isDomainError } from '@recur/kernel';
import { createTestDatabase, eventually, recordingPool } from '@recur/testing';
import { Client, Pool } from 'pg';
import { applyMigrations, CoalescingNotifier, CommandResults, COMMAND_RESULTS_TABLE, type PgTransaction, PgTransactions, PERSISTENCE_MIGRATIONS } from '../src';

/**
 * CommandResults on a plain `pg` transaction (PgTransactions), against a real PostgreSQL. The same
 * bookkeeping on Prisma's transactions is exercised by every service's own tests.
 */
jest.setTimeout(30_000);

const tenant = { accountId: 'acct_1', livemode: false };
const CHANNEL = 'command_results_test';
let databaseUrl: string;
let pool: Pool;
let commands: CommandResults<PgTransaction>;

beforeAll(async () => {
  databaseUrl = await createTestDatabase('persistence');
  pool = new Pool({ connectionString: databaseUrl, max: 8 });
  // The table from the library's own migrations, as every service's database gets it.
  await applyMigrations({ databaseUrl, migrationsDir: PERSISTENCE_MIGRATIONS.migrationsDir });
  await pool.query('CREATE TABLE widgets (id text PRIMARY KEY)');
  commands = new CommandResults(new PgTransactions(pool));
});
afterEach(() => pool.query(`TRUNCATE ${COMMAND_RESULTS_TABLE}, widgets`));
afterAll(() => pool.end());

const widgets = async () => (await pool.query<{ id: string }>('SELECT id FROM widgets ORDER BY id')).rows.map((row) => row.id);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A command that writes a widget and answers its id, counting its runs. */
function createWidget(id: string, runs: { count: number }, delayMs = 0) {
  return async (tx: PgTransaction) => {
    runs.count += 1;
    await tx.execute('INSERT INTO widgets (id) VALUES ($1)', [id]);
    if (delayMs) await sleep(delayMs);
    return { value: id };
  };
}

describe('CommandResults on PgTransactions', () => {
  it('answers repeats of a request id with the first answer, also while the first still runs, and writes once', async () => {
    // Open connections first, so the five really overlap (a new connection's handshake takes longer than a command).
    (await Promise.all(Array.from({ length: 5 }, () => pool.connect()))).forEach((client) => client.release());
    const runs = { count: 0 };
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) => commands.run(tenant, { requestId: 'req_1' }, StringValueSchema, createWidget(`w_${i}`, runs, 200))),
    );
    expect(runs.count).toBe(1);
    expect(new Set(answers.map((answer) => answer.value)).size).toBe(1);
    expect(await widgets()).toEqual([answers[0].value]);
  });

  it('keeps request ids apart per tenant', async () => {
    const runs = { count: 0 };
    await commands.run(tenant, { requestId: 'req_1' }, StringValueSchema, createWidget('w_mine', runs));
    await commands.run({ ...tenant, livemode: true }, { requestId: 'req_1' }, StringValueSchema, createWidget('w_theirs', runs));
    expect(await widgets()).toEqual(['w_mine', 'w_theirs']);
  });

  it('records a refusal without the refused command\'s writes, and answers a repeat with the same refusal', async () => {
    const refuse = async (tx: PgTransaction) => {
      await tx.execute('INSERT INTO widgets (id) VALUES ($1)', ['w_partial']);
      throw invalidArgument('name', 'name must not be empty');
    };
    const first = await commands.run(tenant, { requestId: 'req_refused' }, StringValueSchema, refuse).catch((error: unknown) => error);
    const runs = { count: 0 };
    const repeat = await commands.run(tenant, { requestId: 'req_refused' }, StringValueSchema, createWidget('w_later', runs)).catch((error: unknown) => error);
    expect(isDomainError(first) && isDomainError(repeat)).toBe(true);
    expect(repeat).toMatchObject({ kind: 'invalid_argument', param: 'name', message: 'name must not be empty' });
    expect(runs.count).toBe(0);
    expect(await widgets()).toEqual([]);
  });

  it('records nothing when the command fails on infrastructure, so a repeat runs again', async () => {
    const broken = async (tx: PgTransaction) => {
      await tx.execute('INSERT INTO widgets (id) VALUES ($1)', ['w_broken']);
      await tx.execute('SELECT * FROM no_such_table', []);
      return { value: 'never' };
    };
    await expect(commands.run(tenant, { requestId: 'req_retry' }, StringValueSchema, broken)).rejects.toThrow(/no_such_table/);
    expect(await widgets()).toEqual([]);
    const runs = { count: 0 };
    expect(await commands.run(tenant, { requestId: 'req_retry' }, StringValueSchema, createWidget('w_retried', runs))).toMatchObject({ value: 'w_retried' });
    expect(runs.count).toBe(1);
  });

  it('records nothing when a peer the command called was unavailable or failed (a 5xx, as a DomainError), so a repeat of the request id runs again', async () => {
    // CatalogPlans turns a catalog that cannot be reached into DomainError('unavailable'): kill -9 of
    // the catalog under load (npm run bench:faults) had every retry of a subscription create with
    // its Idempotency-Key answer the recorded 503 until the client gave up.
    for (const [kind, requestId] of [['unavailable', 'req_peer_down'], ['internal', 'req_peer_failed']] as const) {
      const peerDown = async (tx: PgTransaction) => {
        await tx.execute('INSERT INTO widgets (id) VALUES ($1)', [`w_${kind}`]);
        throw new DomainError(kind, kind === 'unavailable' ? 'service_unavailable' : 'internal_error', 'A service is temporarily unavailable; retry later.');
      };
      await expect(commands.run(tenant, { requestId }, StringValueSchema, peerDown)).rejects.toMatchObject({ kind });
      const runs = { count: 0 };
      expect(await commands.run(tenant, { requestId }, StringValueSchema, createWidget(`w_${kind}_retried`, runs))).toMatchObject({ value: `w_${kind}_retried` });
      expect(runs.count).toBe(1);
    }
    expect(await widgets()).toEqual(['w_internal_retried', 'w_unavailable_retried']);
  });

  it('spends three round trips on a command of one statement: BEGIN, lock, lookup and savepoint in one; the answer with the COMMIT', async () => {
    const { pool: ownPool, statements } = recordingPool(databaseUrl);
    try {
      const recorded = new CommandResults(new PgTransactions(ownPool));
      await recorded.run(tenant, { requestId: 'req_trips' }, StringValueSchema, createWidget('w_trips', { count: 0 }));
      expect(statements).toHaveLength(3);
      expect(statements[0]).toMatch(/^BEGIN;\nSELECT 1 AS locked FROM pg_advisory_xact_lock\(.*;\nSELECT response.*;\nSAVEPOINT command$/s);
      expect(statements[1]).toBe('INSERT INTO widgets (id) VALUES ($1)');
      expect(statements[2]).toMatch(/^INSERT INTO command_results .*;\nCOMMIT$/s);
      // The repeat: its lookup finds the answer, and the transaction commits nothing else.
      statements.length = 0;
      expect(await recorded.run(tenant, { requestId: 'req_trips' }, StringValueSchema, createWidget('w_again', { count: 0 }))).toMatchObject({ value: 'w_trips' });
      expect(statements).toHaveLength(2);
      expect(statements[1]).toBe('COMMIT');
    } finally {
      await ownPool.end();
    }
  });

  it('keeps a request id and a refusal message with quotes, backslashes and other scripts exact (they travel as SQL literals)', async () => {
    const requestId = `it's a \\ "key" \\' ; DROP TABLE widgets; -- ✓ 日本`;
    const message = `can't be \\x00 or '); --`;
    const refuse = async () => {
      throw invalidArgument('name', message);
    };
    const first = await commands.run(tenant, { requestId }, StringValueSchema, refuse).catch((error: unknown) => error);
    expect(first).toMatchObject({ kind: 'invalid_argument', message });
    const repeat = await commands.run(tenant, { requestId }, StringValueSchema, createWidget('w_never', { count: 0 })).catch((error: unknown) => error);
    expect(repeat).toMatchObject({ kind: 'invalid_argument', param: 'name', message });
    const { rows } = await pool.query(`SELECT request_id, error_message FROM ${COMMAND_RESULTS_TABLE}`);
    expect(rows).toEqual([{ request_id: requestId, error_message: message }]);
    expect(await widgets()).toEqual([]);
  });

  it('runs a command without a request id as a plain transaction, rolled back when it throws', async () => {
    const runs = { count: 0 };
    await commands.run(tenant, { requestId: '' }, StringValueSchema, createWidget('w_a', runs));
    await commands.run(tenant, { requestId: '' }, StringValueSchema, createWidget('w_a2', runs));
    await expect(commands.run(tenant, { requestId: '' }, StringValueSchema, createWidget('w_a', runs))).rejects.toThrow(/duplicate key/);
    expect(await widgets()).toEqual(['w_a', 'w_a2']);
    expect((await pool.query(`SELECT count(*)::int AS n FROM ${COMMAND_RESULTS_TABLE}`)).rows[0].n).toBe(0);
  });
});

describe('PgTransactions', () => {
  it('sends a wake-up asked for in a transaction after its COMMIT, in a statement of its own, and none for a rollback', async () => {
    const listener = new Client({ connectionString: databaseUrl });
    await listener.connect();
    const { pool: ownPool, statements } = recordingPool(databaseUrl);
    try {
      let notifications = 0;
      listener.on('notification', () => (notifications += 1));
      await listener.query(`LISTEN ${CHANNEL}`);
      const transactions = new PgTransactions(ownPool);
      await expect(transactions.transaction(async (tx) => {
        tx.notifyAfterCommit(CHANNEL);
        throw new Error('rolled back');
      })).rejects.toThrow('rolled back');
      await transactions.transaction(async (tx) => {
        await tx.execute('INSERT INTO widgets (id) VALUES ($1)', ['w_committed']);
        tx.notifyAfterCommit(CHANNEL);
        tx.notifyAfterCommit(CHANNEL);
      });
      await eventually(async () => notifications > 0, 5_000, 'the wake-up');
      await sleep(200);
      expect(notifications).toBe(1);
      const committed = statements.lastIndexOf('COMMIT');
      expect(statements.slice(committed + 1)).toEqual(['SELECT pg_notify($1, $2)']);
      expect(statements.slice(0, committed).filter((sql) => /notify/i.test(sql))).toEqual([]);
    } finally {
      await ownPool.end();
      await listener.end();
    }
  });

  it('coalesces the wake-ups of a burst of commits, and still sends one after the last commit', async () => {
    const listener = new Client({ connectionString: databaseUrl });
    await listener.connect();
    const { pool: ownPool, statements } = recordingPool(databaseUrl, 8);
    try {
      let notifications = 0;
      listener.on('notification', () => (notifications += 1));
      await listener.query(`LISTEN ${CHANNEL}`);
      const transactions = new PgTransactions(ownPool);
      await Promise.all(Array.from({ length: 40 }, (_, i) => transactions.transaction(async (tx) => {
        await tx.execute('INSERT INTO widgets (id) VALUES ($1)', [`w_burst_${i}`]);
        tx.notifyAfterCommit(CHANNEL);
      })));
      await eventually(async () => (statements.at(-1) === 'SELECT pg_notify($1, $2)' ? true : undefined), 5_000, 'a wake-up after the last commit');
      await sleep(200);
      const notifies = statements.filter((sql) => sql === 'SELECT pg_notify($1, $2)').length;
      expect(notifies).toBeGreaterThanOrEqual(1);
      expect(notifies).toBeLessThan(40);
      // The last statement of all is a NOTIFY: none of the 40 commits came after every wake-up.
      expect(statements.lastIndexOf('SELECT pg_notify($1, $2)')).toBeGreaterThan(statements.lastIndexOf('COMMIT'));
      expect(notifications).toBeGreaterThanOrEqual(1);
    } finally {
      await ownPool.end();
      await listener.end();
    }
  });

  it('answers wake-ups asked for while one is in flight with exactly one more, sent after it', async () => {
    const { pool: ownPool, statements } = recordingPool(databaseUrl, 4);
    try {
      const notifier = new CoalescingNotifier(ownPool);
      // Three commits land while the first NOTIFY is still in flight.
      notifier.notify(CHANNEL);
      notifier.notify(CHANNEL);
      notifier.notify(CHANNEL);
      await eventually(async () => (statements.length === 2 ? true : undefined), 5_000, 'the second NOTIFY');
      await sleep(200);
      expect(statements).toEqual(['SELECT pg_notify($1, $2)', 'SELECT pg_notify($1, $2)']);
    } finally {
      await ownPool.end();
    }
  });
});
