export * from './app-process';
export * from './infrastructure';
export * from './ports';
export * from './webhook-receiver';
export * from './grpc-service';
export * from './thrown';
export * from './eventually';
