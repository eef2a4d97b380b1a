export * from './migrate';
export * from './create-once';
