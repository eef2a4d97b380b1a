export * from './catalog';
export * from './customer';
export * from './event-types';
export * from './bounds';
export * from './invoice';
export * from './usage';
export * from './payment';
export * from './countries';
