import { applyMigrations, type LibraryMigrations } from '@recur/persistence';
import { JsonLogger, shutdownTelemetry } from '@recur/telemetry';

/**
 * How long a stop may take before the process exits 1 anyway. Kubernetes sends SIGKILL
 * terminationGracePeriodSeconds (30, helm/) after the pod starts terminating, and the preStop
 * sleep (5) comes out of that: 20 s leaves the drain time to finish and to say it did not.
 */
export const STOP_TIMEOUT_MS = 20_000;

export interface Stoppable {
  stop(): Promise<void>;
}

/**
 * The entry point every app's `main.ts` calls. `node main.js migrate` applies the
 * migrations and exits (the Helm migration Job); otherwise the app starts and stops
 * cleanly on SIGTERM or SIGINT. Boot failures (e.g. missing configuration) exit 1.
 */
export function runMain(
  name: string,
  options: {
    migrationsDir: string;
    /** The platform's migrations this app's database gets beside its own (SERVICE_PLATFORM_MIGRATIONS for a service). */
    libraries?: readonly LibraryMigrations[];
    databaseUrl: () => string;
    start: () => Promise<Stoppable>;
  },
): void {
  const logger = new JsonLogger(name);
  const command = process.argv[2] ?? 'serve';

  const fail = (error: unknown) => {
    logger.error(error instanceof Error ? error : String(error), 'main');
    process.exit(1);
  };

  if (command === 'migrate') {
    applyMigrations({ databaseUrl: options.databaseUrl(), migrationsDir: options.migrationsDir, libraries: options.libraries })
      .then(({ applied }) => {
        logger.info('migrations applied', { applied });
        process.exit(0);
      })
      .catch(fail);
    return;
  }
  if (command !== 'serve') fail(new Error(`unknown command '${command}' (expected 'serve' or 'migrate')`));

  options
    .start()
    .then((running) => {
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) return;
        stopping = true;
        logger.info('stopping', { signal });
        const force = setTimeout(() => {
          logger.error(`did not stop within ${STOP_TIMEOUT_MS / 1000} s`, 'main');
          process.exit(1);
        }, STOP_TIMEOUT_MS).unref();
        running
          .stop()
          .then(() => shutdownTelemetry())
          .then(() => {
            clearTimeout(force);
            process.exit(0);
          })
          .catch(fail);
      };
      process.on('SIGTERM', () => stop('SIGTERM'));
      process.on('SIGINT', () => stop('SIGINT'));
    })
    .catch(fail);
}
