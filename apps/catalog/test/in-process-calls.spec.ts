import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { ERROR_CODE_TRAILER } from '@recur/contracts';
import { createTestDatabase, freePort } from '@recur/testing';

/**
 * The catalog hosted in one process as `npm start` hosts it (`inProcessCalls`): a client of its
 * address calls Nest's handlers directly and gets exactly what a wire call gets. The calls run
 * in a process of their own (fixtures/in-process-host.cjs); this judges what it reports.
 */
jest.setTimeout(90_000);

let results: Record<string, any>;

beforeAll(async () => {
  const [databaseUrl, grpcPort] = await Promise.all([createTestDatabase('catalog_in_process'), freePort()]);
  const { stdout } = await promisify(execFile)(process.execPath, [join(__dirname, 'fixtures', 'in-process-host.cjs'), databaseUrl, String(grpcPort)], { env: { ...process.env, LOG_LEVEL: 'error' } });
  results = JSON.parse(stdout.trim().split('\n').at(-1)!);
});

describe('in-process calls (npm start)', () => {
  it('are served by the handlers the gRPC server registered under its own address, until it stops', () => {
    expect(results.registered).toBe('function');
    expect(results.registeredForWireAddress).toBe('undefined');
    expect(results.registeredAfterStop).toBe('undefined');
  });

  it('answer what a wire call answers, and a repeated request id over the wire answers the in-process call', () => {
    expect(results.created.answer.plan).toMatchObject({ name: 'Pro', amountMonthly: '2900n' });
    expect(results.getInProcess).toEqual(results.getOverTheWire);
    expect(results.getInProcess.answer.plan).toEqual(results.created.answer.plan);
    expect(results.repeatOverTheWire).toEqual(results.created);
  });

  it('fail with the status, details, message and error trailers of a wire call', () => {
    expect(results.missingInProcess).toEqual(results.missingOverTheWire);
    expect(results.missingInProcess).toMatchObject({ code: grpc.status.NOT_FOUND, trailers: { [ERROR_CODE_TRAILER]: 'resource_missing' } });
  });

  it('fail with DEADLINE_EXCEEDED once the deadline passes', () => {
    expect(results.pastDeadline.code).toBe(grpc.status.DEADLINE_EXCEEDED);
  });
});
