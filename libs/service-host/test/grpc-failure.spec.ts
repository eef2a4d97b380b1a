import * as grpc from '@grpc/grpc-js';
import { ERROR_CODE_TRAILER, type GrpcErrorPayload } from '@recur/contracts';
import { DomainError } from '@recur/kernel';
import { grpcFailure } from '../src/grpc-failure';

const code = (payload: GrpcErrorPayload) => payload.metadata.get(ERROR_CODE_TRAILER)[0]?.toString();

describe('grpcFailure: what a service answers for what its handler threw', () => {
  it('a transaction that never ran (Prisma P2028): UNAVAILABLE, a warning', () => {
    const failure = grpcFailure(Object.assign(new Error('Transaction API error: unable to start a transaction in the given time'), { code: 'P2028' }));
    expect(failure.payload.code).toBe(grpc.status.UNAVAILABLE);
    expect(code(failure.payload)).toBe('service_unavailable');
    expect(failure.payload.details).toMatch(/busy/);
    expect(failure.warning).toMatch(/^transaction did not run: Transaction API error/);
    expect(failure.unexpected).toBeUndefined();
  });

  it('a database out of reach: UNAVAILABLE, a warning', () => {
    const failure = grpcFailure(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
    expect(failure.payload.code).toBe(grpc.status.UNAVAILABLE);
    expect(failure.payload.details).toMatch(/database/);
    expect(failure.warning).toMatch(/^database unavailable: connect ECONNREFUSED/);
    expect(failure.unexpected).toBeUndefined();
  });

  it('a domain error: its own status and code, nothing logged', () => {
    const failure = grpcFailure(new DomainError('conflict', 'invoice_paid', 'The invoice is paid.'));
    expect(failure.payload.code).toBe(grpc.status.ABORTED);
    expect(code(failure.payload)).toBe('invoice_paid');
    expect(failure.warning).toBeUndefined();
    expect(failure.unexpected).toBeUndefined();
  });

  it('anything else: INTERNAL, logged as unexpected', () => {
    const failure = grpcFailure(new TypeError('cannot read properties of undefined'));
    expect(failure.payload.code).toBe(grpc.status.INTERNAL);
    expect(code(failure.payload)).toBe('internal_error');
    expect(failure.payload.details).not.toMatch(/undefined/);
    expect(failure.unexpected).toBe(true);
    expect(grpcFailure(null).unexpected).toBe(true);
  });
});
