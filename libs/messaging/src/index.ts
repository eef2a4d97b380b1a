export * from './bus';
export * from './create-bus';
export * from './event';
export * from './in-process-bus';
export * from './inbox';
export * from './kafka-bus';
export * from './outbox';
export * from './relay';
