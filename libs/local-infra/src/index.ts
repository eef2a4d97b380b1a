export * from './kafka';
export * from './postgres';
