import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

export interface ReceivedRequest {
  path: string;
  query: string;
  arrivedAt: number;
  headers: Record<string, string>;
  body: string;
}

export interface WebhookReceiver {
  /** Base URL, e.g. http://127.0.0.1:43210 */
  url: string;
  received(path?: string): Promise<ReceivedRequest[]>;
  /** Answers 500 to every delivery held at `path` (an endpoint URL with `?mode=hold`); resolves to how many. */
  release(path: string): Promise<number>;
  stop(): Promise<void>;
}

/** Starts libs/testing/receiver/webhook-receiver.mjs as its own process. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const child: ChildProcess = spawn(process.execPath, [join(__dirname, '..', 'receiver', 'webhook-receiver.mjs'), '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolve(JSON.parse(chunk.toString()).port));
    child.once('exit', (code) => reject(new Error(`receiver exited (${code})`)));
  });
  // A receiver a test forgets to stop must not keep Jest running forever (it waits for every
  // child and pipe): it does not hold the test process open, and the file's end stops it.
  child.stdout!.destroy();
  child.unref();
  const url = `http://127.0.0.1:${port}`;
  const receiver: WebhookReceiver = {
    url,
    async received(path?: string) {
      const response = await fetch(`${url}/_received${path ? `?path=${encodeURIComponent(path)}` : ''}`);
      return (await response.json()) as ReceivedRequest[];
    },
    async release(path: string) {
      const response = await fetch(`${url}/_release?path=${encodeURIComponent(path)}`, { method: 'POST' });
      return ((await response.json()) as { released: number }).released;
    },
    async stop() {
      running.delete(receiver);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.ref();
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
  running.add(receiver);
  return receiver;
}

const running = new Set<WebhookReceiver>();

/** Stops the receivers a test file left running (jest-setup.ts calls it when the file ends). */
export async function stopForgottenReceivers(): Promise<void> {
  await Promise.all([...running].map((receiver) => receiver.stop()));
}
