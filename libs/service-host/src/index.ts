export * from './config';
export * from './grpc-service';
export * from './main';
