export * from './config';
export * from './grpc-service';
export * from './main';
export * from './platform-migrations';
