import path from 'node:path';
import type { LibraryMigrations } from '@recur/persistence';

/**
 * libs/messaging's own migrations (the `outbox_events` and `inbox_events` tables), applied to every
 * service's database beside the app's: docs/operations/upgrades.md#the-platforms-tables.
 */
export const MESSAGING_MIGRATIONS: LibraryMigrations = {
  library: 'messaging',
  migrationsDir: path.join(__dirname, '..', 'migrations'),
  historyTable: '_recur_messaging_migrations',
};
