export * from './migrate';
export * from './command-results';
export * from './unique-violation';
export * from './transactions';
