export * from './due-rows';
export * from './job-worker';
export * from './retry-schedule';
export * from './wake-up';
