export * from './clock';
export * from './config';
export * from './errors';
export * from './ids';
export * from './metadata';
export * from './paging';
export * from './tenancy';
export * from './time';
