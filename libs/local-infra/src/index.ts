export * from './kafka';
export * from './postgres';
export * from './mail-catcher';
export * from './ports';
