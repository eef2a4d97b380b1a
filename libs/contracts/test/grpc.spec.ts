import * as grpc from '@grpc/grpc-js';
import { create } from '@bufbuild/protobuf';
import { DomainError } from '@recur/kernel';
import { ERROR_CODE_TRAILER, fromGrpcError, grpcPackageDefinition, grpcServiceDefinition, presentCustomer, subscriptionV1, customerV1, toGrpcError } from '../src';

describe('grpcServiceDefinition', () => {
  it('binds every RPC at its canonical path and round-trips messages through protobuf binary', () => {
    const definition = grpcServiceDefinition(subscriptionV1.SubscriptionService);
    // Every RPC the service declares, each bound once.
    expect(Object.keys(definition).sort()).toEqual(subscriptionV1.SubscriptionService.methods.map((rpc) => rpc.name).sort());
    expect(Object.keys(definition)).toEqual(expect.arrayContaining(['CreateCustomer', 'DeleteCustomer', 'GetCustomer', 'ListCustomers', 'UpdateCustomer', 'CreateSubscription']));
    const method = definition.CreateCustomer;
    expect(method.path).toBe('/recur.subscription.v1.SubscriptionService/CreateCustomer');
    const bytes = method.requestSerialize({ tenant: { accountId: 'acct_1', livemode: true }, name: 'Ada', email: 'ada@example.com', metadata: { a: 'b' }, requestId: 'req_1' });
    expect(bytes).toBeInstanceOf(Buffer);
    const decoded = method.requestDeserialize(bytes) as subscriptionV1.CreateCustomerRequest;
    expect(decoded.tenant).toMatchObject({ accountId: 'acct_1', livemode: true });
    expect(decoded).toMatchObject({ name: 'Ada', email: 'ada@example.com', metadata: { a: 'b' }, requestId: 'req_1' });
  });

  it('keys a package definition by fully qualified service name', () => {
    expect(Object.keys(grpcPackageDefinition(subscriptionV1.SubscriptionService))).toEqual(['recur.subscription.v1.SubscriptionService']);
  });
});

describe('error trailers', () => {
  it('carry a domain error across a call and back', () => {
    const payload = toGrpcError(new DomainError('not_found', 'resource_missing', "No such customer: 'cus_x'", 'id'));
    expect(payload.code).toBe(grpc.status.NOT_FOUND);
    const back = fromGrpcError({ ...new Error(payload.details), code: payload.code, details: payload.details, metadata: payload.metadata });
    expect(back).toMatchObject({ kind: 'not_found', code: 'resource_missing', param: 'id', message: "No such customer: 'cus_x'" });
  });

  it('hide the details of unexpected errors', () => {
    const payload = toGrpcError(new Error('connection string postgres://secret'));
    expect(payload.code).toBe(grpc.status.INTERNAL);
    expect(payload.details).not.toContain('secret');
    expect(payload.metadata.get(ERROR_CODE_TRAILER)).toEqual(['internal_error']);
  });

  it('turn an unreachable service into unavailable', () => {
    const error = fromGrpcError({ code: grpc.status.UNAVAILABLE, details: 'No connection established', metadata: new grpc.Metadata() });
    expect(error).toMatchObject({ kind: 'unavailable', code: 'service_unavailable' });
  });

  it('turn a method the peer does not have yet (an older release) into unavailable, not an internal error', () => {
    const error = fromGrpcError({ code: grpc.status.UNIMPLEMENTED, details: 'The server does not implement the method', metadata: new grpc.Metadata() });
    expect(error).toMatchObject({ kind: 'unavailable', code: 'service_unavailable' });
  });
});

describe('presentCustomer', () => {
  it('renders the public JSON with unix-second times and deleted flags', () => {
    const customer = create(customerV1.CustomerSchema, { id: 'cus_1', livemode: false, name: 'Ada', email: 'a@b.co', created: 1700000000n, updated: 1700000001n });
    expect(presentCustomer(customer)).toEqual({
      id: 'cus_1', object: 'customer', livemode: false, name: 'Ada', email: 'a@b.co', metadata: {},
      created: 1700000000, updated: 1700000001, deleted: false, deleted_at: null, test_clock: null, address: null, tax_exempt: 'none', preferred_locale: null, phone: null, tax_ids: [],
    });
    expect(presentCustomer({ ...customer, deletedAt: 1700000002n })).toMatchObject({ deleted: true, deleted_at: 1700000002 });
  });
});
