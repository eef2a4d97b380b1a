export * from './engine';
export * from './model';
