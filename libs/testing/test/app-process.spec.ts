import { createTestDatabase, freePort, sleep, startApp } from '../src';

/** What `start` rejected with; fails when it resolved. */
async function rejection(start: () => Promise<unknown>): Promise<Error> {
  try {
    await start();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the start to fail');
}

jest.setTimeout(60_000);

/**
 * A boot that fails says which app, what it waited for, and what the app printed: under load a
 * mesh's seven boots are slow, and a bare "not ready" left nothing to go on.
 */
it('an app that is not ready in time is killed, and the error names it, its readiness check and its last output', async () => {
  const databaseUrl = await createTestDatabase('ready');
  const grpcPort = await freePort();
  const neverReady = `http://127.0.0.1:${await freePort()}/never`;
  const error = await rejection(() =>
    startApp('catalog', { env: { DATABASE_URL: databaseUrl, GRPC_PORT: String(grpcPort), GRPC_HOST: '127.0.0.1', METRICS_PORT: '0', LOG_LEVEL: 'info' }, ready: { httpUrl: neverReady }, timeoutMs: 8_000 }),
  );
  expect(error.message).toMatch(new RegExp(`^catalog \\(pid \\d+\\) was not ready within 8 s \\(GET ${neverReady}; RECUR_TEST_READY_TIMEOUT_MS raises the bound\\); its output:\\n`));
  // The app did start (its own log says so): only the check above never passed.
  expect(error.message).toContain('service started');
  const pid = Number(/\(pid (\d+)\)/.exec(error.message)![1]);
  await sleep(500);
  expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
});

it('an app that exits while starting fails at once with its exit code and output', async () => {
  const started = Date.now();
  const error = await rejection(async () => startApp('catalog', { env: { DATABASE_URL: '', GRPC_PORT: String(await freePort()) }, ready: { grpcPort: 9 }, timeoutMs: 30_000 }));
  expect(error.message).toMatch(/^catalog \(pid \d+\) exited with code 1 while starting; its output:\n/);
  expect(error.message).toContain('DATABASE_URL');
  expect(Date.now() - started).toBeLessThan(20_000);
});
