import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { freePort, freePortRun, freePorts } from '../src/ports';

const ephemeralStart = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);

const listen = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

describe('free ports', () => {
  it('hands out ports below the ephemeral range that outgoing connections take theirs from, each once, even when asked side by side', async () => {
    const ports = [...(await freePorts(40)), ...(await Promise.all(Array.from({ length: 40 }, () => freePort())))];
    expect(new Set(ports).size).toBe(80);
    for (const port of ports) expect(port).toBeLessThan(ephemeralStart);
    for (const port of ports) expect(port).toBeGreaterThanOrEqual(10_000);
    const servers = await Promise.all(ports.map(listen));
    await Promise.all(servers.map(close));
  });

  it('hands out a run of consecutive ports that can all be listened on', async () => {
    const base = await freePortRun(6);
    const servers = await Promise.all([0, 1, 2, 3, 4, 5].map((offset) => listen(base + offset)));
    await Promise.all(servers.map(close));
    const next = await freePortRun(6);
    expect(next + 6 <= base || next >= base + 6).toBe(true);
  });
});
