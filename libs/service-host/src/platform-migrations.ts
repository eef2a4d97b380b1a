import { MESSAGING_MIGRATIONS } from '@recur/messaging';
import { type LibraryMigrations, PERSISTENCE_MIGRATIONS } from '@recur/persistence';

/**
 * The platform's tables every service's database gets from the libraries that own them, after the
 * app's own migrations: the outbox and inbox (@recur/messaging), command results (@recur/persistence).
 * docs/operations/upgrades.md#the-platforms-tables
 */
export const SERVICE_PLATFORM_MIGRATIONS: readonly LibraryMigrations[] = [MESSAGING_MIGRATIONS, PERSISTENCE_MIGRATIONS];
