// recur.common.v1 is one proto package in several files; one namespace for all of them.
export * from './gen/recur/common/v1/money_pb';
export * from './gen/recur/common/v1/tenant_pb';
