export * from './migrate';
export * from './command-results';
export * from './unique-violation';
export * from './command-results-purge';
export * from './transactions';
export * from './notifier';
export * from './sql-rows';
export * from './pools';
