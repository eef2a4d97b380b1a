import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Ports for processes a test or a local run starts, on 127.0.0.1.
 *
 * A port found by binding port 0 comes from the kernel's ephemeral range, the same range every
 * outgoing connection (a Kafka client, a PostgreSQL pool) takes its local port from: between the
 * probe and the app's own bind, any connection could take it (a mesh's gateway failed with
 * EADDRINUSE that way). These ports are picked below that range, where only listeners live, and
 * each Jest worker picks from its own slice, so two test files running side by side never pick
 * the same one. A port is checked free before it is handed out, and never handed out twice by
 * one process.
 */
const LOWEST_PORT = 10_000;
const SLICES = 16;

function ephemeralRangeStart(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && low > LOWEST_PORT + SLICES * 100) return low;
  } catch {
    // Not Linux: the IANA dynamic range.
  }
  return 49_152;
}

/** This process's slice of the listener ports: its Jest worker's, else its pid's. */
function slice(): { low: number; size: number } {
  const size = Math.floor((ephemeralRangeStart() - LOWEST_PORT) / SLICES);
  const owner = Number(process.env.JEST_WORKER_ID ?? process.pid);
  return { low: LOWEST_PORT + (owner % SLICES) * size, size };
}

const handedOut = new Set<number>();

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * `count` consecutive ports, free a moment ago and never handed out before by this process
 * (the six services of `npm start` take consecutive gRPC ports from a base).
 */
export async function freePortRun(count: number): Promise<number> {
  const { low, size } = slice();
  for (let attempt = 0; attempt < 1_000; attempt++) {
    const base = low + Math.floor(Math.random() * (size - count));
    const run = Array.from({ length: count }, (_, index) => base + index);
    if (run.some((port) => handedOut.has(port))) continue;
    // Taken before the check awaits, so that calls running side by side never pick the same
    // port; a port found in use stays taken (something listens there).
    for (const port of run) handedOut.add(port);
    let free = true;
    for (const port of run) if (free) free = await canListen(port);
    if (free) return base;
  }
  throw new Error(`no run of ${count} free ports between ${low} and ${low + size}`);
}

/** A port free a moment ago, below the ephemeral range, never handed out before by this process. */
export function freePort(): Promise<number> {
  return freePortRun(1);
}

/** `count` distinct free ports. */
export function freePorts(count: number): Promise<number[]> {
  return Promise.all(Array.from({ length: count }, () => freePort()));
}

/** True when nothing listens on `port` of 127.0.0.1 now. */
export function isPortFree(port: number): Promise<boolean> {
  return canListen(port);
}
