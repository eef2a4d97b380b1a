export * from './http-server-span';
export * from './logger';
export * from './metrics';
export * from './tracing';
