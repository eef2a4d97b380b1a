export * from './app-process';
export * from './infrastructure';
export * from './ports';
