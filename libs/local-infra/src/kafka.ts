/**
 * A real single-node Apache Kafka broker on this machine, with no manual steps.
 *
 * No Kafka is packaged for npm or Debian and there is no Docker engine here, so the broker's jars
 * come from Maven Central through `tools/kafka/pom.xml` (Maven and Java 17 are on the machine) and
 * the broker runs as a child JVM in KRaft mode (combined broker + controller, no ZooKeeper).
 *
 * The Kafka line is 3.9.x on purpose: Kafka 4.0 removed the old protocol versions (KIP-896) that
 * kafkajs 2.2.4 still uses.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kafka, logLevel } from 'kafkajs';
import { freePorts, isPortFree } from './ports';

export interface KafkaDistributionOptions {
  /** Progress messages (a first run on a machine downloads ~70 MB through Maven, 46 MB of it jars). */
  log?: (line: string) => void;
}

export interface KafkaBrokerOptions {
  /** Client (PLAINTEXT) port on 127.0.0.1. A free port is picked when omitted. */
  port?: number;
  /**
   * Where config and data live. Kept after stop() (and reused by the next start) when given;
   * a fresh temporary directory, removed on stop(), when omitted.
   */
  dataDir?: string;
  /** Receives every line the broker prints. */
  log?: (line: string) => void;
}

export interface KafkaBroker {
  /** Bootstrap servers for clients, e.g. `127.0.0.1:43117`. */
  brokers: string;
  /** SIGTERM, wait for the JVM to exit (SIGKILL after 15 s). Safe to call more than once. */
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';
const READY_TIMEOUT_MS = 90_000;
const STOP_GRACE_MS = 15_000;
/** Broker log lines kept for error messages. */
const LOG_TAIL_LINES = 60;
/** Staging folders of downloads in progress, beside the cached libs/. */
const PARTIAL_PREFIX = 'libs.partial-';

// ---------------------------------------------------------------------------------------------
// Distribution: a folder of jars resolved by Maven and cached per Kafka version.
// ---------------------------------------------------------------------------------------------

let distribution: Promise<string> | undefined;

/**
 * Returns a directory holding the broker and all its runtime jars, resolving them with Maven on
 * first use into `${XDG_CACHE_HOME:-~/.cache}/recur/kafka-<version>/libs`. Maven's own ~/.m2
 * repository caches the downloads too, so a rebuild of this folder needs no network.
 */
export function ensureKafkaDistribution(options: KafkaDistributionOptions = {}): Promise<string> {
  // One resolution per process at a time; a failure is not cached, so the next call retries.
  distribution ??= resolveDistribution(options.log ?? noop).catch((error: unknown) => {
    distribution = undefined;
    throw error;
  });
  return distribution;
}

async function resolveDistribution(log: (line: string) => void): Promise<string> {
  const pomPath = findPom();
  const pom = await readFile(pomPath, 'utf8');
  const version = /<kafka\.version>\s*([^<\s]+)\s*<\/kafka\.version>/.exec(pom)?.[1];
  if (!version) throw new Error(`${pomPath} has no <kafka.version> property`);

  const home = join(cacheRoot(), `kafka-${version}`);
  const libs = join(home, 'libs');
  // The marker holds a hash of the pom: it is written only after a complete download, and a
  // changed pom (say, another logging binding) invalidates the cache even at the same version.
  const marker = join(home, '.complete');
  const fingerprint = createHash('sha256').update(pom).digest('hex');
  if ((await readText(marker)) === fingerprint && existsSync(libs)) return libs;

  await mkdir(home, { recursive: true });
  await removeStalePartials(home);
  // Resolve into a private folder, then rename: an interrupted run leaves no half-filled libs/.
  const staging = await mkdtemp(join(home, PARTIAL_PREFIX));
  try {
    log(`Resolving Kafka ${version} jars with Maven into ${libs}`);
    await runMaven(pomPath, staging);
    const jars = (await readdir(staging)).filter((name) => name.endsWith('.jar'));
    if (!jars.some((name) => name.startsWith(`kafka_2.13-${version}`))) {
      throw new Error(`Maven finished but ${staging} has no kafka_2.13-${version}.jar`);
    }
    // Another process may have finished the same download meanwhile: keep its folder.
    if ((await readText(marker)) === fingerprint && existsSync(libs)) return libs;
    await rm(marker, { force: true });
    await rm(libs, { recursive: true, force: true });
    await rename(staging, libs);
    await chmod(libs, 0o755); // mkdtemp made it 0700
    await writeFile(marker, fingerprint);
    log(`Kafka ${version}: ${jars.length} jars ready`);
    return libs;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * Drops staging folders left by runs that were killed mid-download. Only old ones: a young one
 * may belong to another process resolving right now.
 */
async function removeStalePartials(home: string): Promise<void> {
  const staleBefore = Date.now() - 30 * 60_000;
  for (const name of await readdir(home)) {
    if (!name.startsWith(PARTIAL_PREFIX)) continue;
    const path = join(home, name);
    const info = await stat(path).catch(() => undefined);
    if (info && info.mtimeMs < staleBefore) await rm(path, { recursive: true, force: true });
  }
}

/** tools/kafka/pom.xml, found from this file in src/ (tests) as well as in dist/ (built). */
function findPom(): string {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const candidate = join(dir, 'tools', 'kafka', 'pom.xml');
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) throw new Error(`tools/kafka/pom.xml not found above ${__dirname}`);
  }
}

function cacheRoot(): string {
  const xdg = process.env.XDG_CACHE_HOME;
  // The XDG spec says to ignore a relative value.
  return join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.cache'), 'recur');
}

async function runMaven(pomPath: string, outputDirectory: string): Promise<void> {
  const args = [
    '-q',
    '-B',
    '-f',
    pomPath,
    'dependency:copy-dependencies',
    `-DoutputDirectory=${outputDirectory}`,
    '-DincludeScope=runtime',
  ];
  const output: string[] = [];
  const child = spawn('mvn', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  collectLines(child, (line) => output.push(line));
  const result = await exitOf(child);
  if (result.error) {
    throw new Error(`Could not run Maven (mvn) to fetch Kafka: ${result.error.message}`);
  }
  if (result.code !== 0) {
    throw new Error(
      `mvn dependency:copy-dependencies failed (exit ${String(result.code ?? result.signal)}):\n` +
        output.slice(-40).join('\n'),
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Broker
// ---------------------------------------------------------------------------------------------

/** Starts a KRaft broker+controller JVM and resolves once a kafkajs admin client can use it. */
export async function startKafkaBroker(options: KafkaBrokerOptions = {}): Promise<KafkaBroker> {
  const log = options.log ?? noop;
  const libs = await ensureKafkaDistribution({ log });

  if (options.port !== undefined && !(await isPortFree(options.port))) {
    throw new Error(`Cannot start Kafka: port ${options.port} on ${HOST} is already in use`);
  }
  const [port, controllerPort] =
    options.port === undefined ? await freePorts(2) : [options.port, (await freePorts(1))[0]];

  const ownsDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'recur-kafka-')));
  const configDir = join(dataDir, 'config');
  await mkdir(configDir, { recursive: true });
  const serverProperties = join(configDir, 'server.properties');
  const log4jProperties = join(configDir, 'log4j.properties');
  const logDir = join(dataDir, 'data');
  await writeFile(serverProperties, renderServerProperties(port, controllerPort, logDir));
  await writeFile(log4jProperties, LOG4J_PROPERTIES);

  const java = process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
  const jvmArgs = [
    '-Xms128m',
    '-Xmx512m',
    '-XX:+UseG1GC',
    '-XX:MaxGCPauseMillis=20',
    '-XX:+ExitOnOutOfMemoryError',
    '-Djava.awt.headless=true',
    `-Dlog4j.configuration=file:${log4jProperties}`,
    // java expands a trailing `*` itself; no shell is involved.
    '-cp',
    join(libs, '*'),
  ];
  const tail: string[] = [];
  const onLine = (line: string): void => {
    tail.push(line);
    if (tail.length > LOG_TAIL_LINES) tail.shift();
    log(line);
  };
  const cleanupDataDir = async (): Promise<void> => {
    if (ownsDataDir) await rm(dataDir, { recursive: true, force: true });
  };

  // Format the storage (writes meta.properties and the bootstrap metadata). The quorum is static
  // (controller.quorum.voters), so 3.9's `--standalone` (dynamic quorum, KIP-853) is not used: it
  // would record the controller endpoint in the log, and a reused dataDir could then never move
  // to another controller port. For a reused dataDir, `--ignore-formatted` skips the work, but
  // 3.9 still checks the cluster id first: hence the one already on disk.
  const formatArgs = ['format', '-t', (await storedClusterId(logDir)) ?? clusterId(), '-c', serverProperties];
  // C1-only JIT: this short-lived tool then starts in ~0.8 s instead of ~1.5 s.
  const format = spawn(
    java,
    ['-XX:TieredStopAtLevel=1', ...jvmArgs, 'kafka.tools.StorageTool', ...formatArgs, '--ignore-formatted'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  collectLines(format, onLine);
  const formatted = await exitOf(format);
  if (formatted.error || formatted.code !== 0) {
    await cleanupDataDir();
    throw new Error(`Kafka storage format failed (${describeExit(formatted)}):\n${tail.join('\n')}`);
  }

  tail.length = 0; // error messages from here on are about the broker, not the formatter
  const child = spawn(java, [...BROKER_JVM_ARGS, ...jvmArgs, 'kafka.Kafka', serverProperties], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  collectLines(child, onLine);
  const exited = exitOf(child);
  // Never leave a JVM behind: 'exit' handlers must be synchronous, so SIGKILL (a clean SIGTERM
  // shutdown would outlive us anyway). Signals that kill Node without a handler skip 'exit';
  // a terminal's Ctrl-C still reaches the JVM, which shares our process group.
  const killOnExit = (): void => {
    if (isRunning(child)) child.kill('SIGKILL');
    if (ownsDataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  process.on('exit', killOnExit);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (isRunning(child)) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }
      process.off('exit', killOnExit);
      await cleanupDataDir();
    })();
    return stopping;
  };

  const brokers = `${HOST}:${port}`;
  try {
    await waitUntilReady(brokers, exited);
  } catch (error) {
    await stop();
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      `Kafka broker on ${brokers} did not start: ${reason}\nLast broker log lines:\n${tail.join('\n')}`,
    );
  }
  return { brokers, stop };
}

/**
 * The broker's JIT: C1 only. With C2, the JIT's compiler threads spent more CPU than the broker's
 * request handlers through a benchmark's first minutes (720 against 590 ms in 15 s of creates,
 * /proc/<pid>/task, docs/performance.md#every-app-its-own-process-with-kafka): a broker started
 * for tests, `npm start` or a benchmark never runs long enough to earn that back.
 */
const BROKER_JVM_ARGS = ['-XX:TieredStopAtLevel=1'];

function renderServerProperties(port: number, controllerPort: number, logDir: string): string {
  const settings: Record<string, string | number | boolean> = {
    // KRaft, one node that is both broker and controller.
    'process.roles': 'broker,controller',
    'node.id': 1,
    'controller.quorum.voters': `1@${HOST}:${controllerPort}`,
    listeners: `PLAINTEXT://${HOST}:${port},CONTROLLER://${HOST}:${controllerPort}`,
    'advertised.listeners': `PLAINTEXT://${HOST}:${port}`,
    'inter.broker.listener.name': 'PLAINTEXT',
    'controller.listener.names': 'CONTROLLER',
    'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    'log.dirs': logDir,
    // One replica of everything; one partition unless a topic asks for more.
    'num.partitions': 1,
    'default.replication.factor': 1,
    'min.insync.replicas': 1,
    'offsets.topic.replication.factor': 1,
    'transaction.state.log.replication.factor': 1,
    'transaction.state.log.min.isr': 1,
    // The defaults (50 partitions each) make the first consumer group or transaction wait while
    // dozens of internal partitions are created.
    'offsets.topic.num.partitions': 1,
    'transaction.state.log.num.partitions': 1,
    // Consumer groups form at once instead of after 3 s.
    'group.initial.rebalance.delay.ms': 0,
    'auto.create.topics.enable': true,
    'delete.topic.enable': true,
    // A small footprint: fewer threads, and a 16 MB (not 128 MB) compaction buffer in a 512 MB heap.
    'num.network.threads': 2,
    'num.io.threads': 2,
    'background.threads': 2,
    'log.cleaner.dedupe.buffer.size': 16 * 1024 * 1024,
  };
  return Object.entries(settings)
    .map(([key, value]) => `${key}=${String(value)}`)
    .join('\n')
    .concat('\n');
}

/** Console logging for reload4j; without a configuration the broker prints nothing useful. */
const LOG4J_PROPERTIES = [
  'log4j.rootLogger=INFO, stdout',
  'log4j.appender.stdout=org.apache.log4j.ConsoleAppender',
  'log4j.appender.stdout.layout=org.apache.log4j.PatternLayout',
  'log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n',
  'log4j.logger.state.change.logger=WARN',
  'log4j.logger.kafka.request.logger=WARN',
  'log4j.logger.kafka.authorizer.logger=WARN',
  '',
].join('\n');

/**
 * Polls with a kafkajs admin until the broker answers metadata requests, lists itself and has a
 * group coordinator; fails early if the JVM exits.
 */
async function waitUntilReady(brokers: string, exited: Promise<ExitResult>): Promise<void> {
  let exit: ExitResult | undefined;
  void exited.then((result) => (exit = result));
  const kafka = new Kafka({
    clientId: 'recur-local-infra-probe',
    brokers: [brokers],
    // Refused connections are expected while the JVM boots; we retry here, not in kafkajs.
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
    connectionTimeout: 1_000,
    requestTimeout: 5_000,
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let lastError = 'no attempt made';
  while (Date.now() < deadline) {
    if (exit) throw new Error(`the JVM exited early (${describeExit(exit)})`);
    const admin = kafka.admin();
    try {
      await admin.connect();
      const cluster = await admin.describeCluster();
      await admin.listTopics();
      if (cluster.brokers.length === 0) {
        lastError = 'metadata lists no broker yet';
      } else {
        // Looking up a group coordinator makes the broker create __consumer_offsets; until that
        // is loaded, every client's first consumer group logs "group coordinator is not
        // available" errors. Taking that wait here keeps the clients' first join clean.
        await admin.describeGroups(['recur-local-infra-probe']);
        return;
      }
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    } finally {
      await admin.disconnect().catch(noop);
    }
    await sleep(250);
  }
  throw new Error(`not ready after ${READY_TIMEOUT_MS / 1000} s (last error: ${lastError})`);
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

interface ExitResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all (e.g. ENOENT). */
  error?: Error;
}

/** Resolves on 'close' rather than 'exit': by then every line the process printed was read. */
function exitOf(child: ChildProcess): Promise<ExitResult> {
  return new Promise((resolve) => {
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
}

function describeExit(exit: ExitResult): string {
  if (exit.error) {
    const missing = (exit.error as NodeJS.ErrnoException).code === 'ENOENT';
    return missing ? `${exit.error.message}: install Java 17+ or set JAVA_HOME` : exit.error.message;
  }
  return exit.signal ? `signal ${exit.signal}` : `exit code ${String(exit.code)}`;
}

function isRunning(child: ChildProcess): boolean {
  return child.pid !== undefined && child.exitCode === null && child.signalCode === null;
}

function collectLines(child: ChildProcess, onLine: (line: string) => void): void {
  for (const stream of [child.stdout, child.stderr]) {
    if (stream) createInterface({ input: stream, crlfDelay: Infinity }).on('line', onLine);
  }
}

/**
 * A Kafka cluster id: 16 random bytes, base64url without padding (22 characters). Kafka's own
 * generator avoids ids starting with '-', which a command line would take for an option.
 */
function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

/** The cluster.id of an already formatted log directory. */
async function storedClusterId(logDir: string): Promise<string | undefined> {
  const meta = await readText(join(logDir, 'meta.properties'));
  return meta === undefined ? undefined : /^cluster\.id=(\S+)$/m.exec(meta)?.[1];
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch {
    return undefined;
  }
}

function noop(): void {}
