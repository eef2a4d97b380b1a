import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Recur } from '@recur/node';
import { EventCursor } from '../src/event-cursor';

/**
 * The cursor against an HTTP server that answers `GET /v1/events` as the gateway documents it
 * (docs/api/events.md: newest first by `created` in whole seconds, `created_gte`, `type`, `limit`,
 * `offset` and `starting_after`, by which the SDK reads the pages after the first), so the orders the real log can produce — many events in one second across reads, an
 * event recorded after a later one, a read failing between pages — are made exactly, which a
 * running mesh cannot be made to do on cue. The mesh test (tests/mesh/test/cli.mesh.spec.ts)
 * runs the same cursor against the real events API.
 */
interface StoredEvent {
  id: string;
  type: string;
  created: number;
  livemode: boolean;
  data: { object: { id: string } };
}

let server: Server;
let baseUrl: string;
let log: StoredEvent[];
/** Refuse the next read of a page after the first (one with `starting_after`). */
let failNextLaterPage: boolean;
let requests: URLSearchParams[];

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://events');
    requests.push(url.searchParams);
    const limit = Number(url.searchParams.get('limit') ?? 10);
    const startingAfter = url.searchParams.get('starting_after');
    if (failNextLaterPage && startingAfter !== null) {
      failNextLaterPage = false;
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { type: 'invalid_request_error', message: 'refused once by the test' } }));
      return;
    }
    const gte = url.searchParams.get('created_gte');
    const type = url.searchParams.get('type');
    // Newest first; within a second, the last recorded first (the log's receivedAt order).
    const matching = log
      .map((event, recorded) => ({ event, recorded }))
      .filter(({ event }) => (gte === null || event.created >= Number(gte)) && (type === null || event.type === type))
      .sort((a, b) => b.event.created - a.event.created || b.recorded - a.recorded)
      .map(({ event }) => ({ ...event, object: 'event' }));
    const offset = startingAfter === null ? Number(url.searchParams.get('offset') ?? 0) : matching.findIndex((event) => event.id === startingAfter) + 1;
    const data = matching.slice(offset, offset + limit);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', url: '/v1/events', data, total: matching.length, limit, offset, has_more: offset + data.length < matching.length }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

beforeEach(() => {
  log = [];
  requests = [];
  failNextLaterPage = false;
});

let counter = 0;
const record = (created: number, type = 'customer.created'): string => {
  const id = `evt_${String(++counter).padStart(4, '0')}`;
  log.push({ id, type, created, livemode: false, data: { object: { id: `cus_${counter}` } } });
  return id;
};
const ids = (events: { id: string }[]) => events.map((event) => event.id);
const cursorOf = (windowSeconds = 60, pageSize = 100) => new EventCursor(new Recur('recur_test_sk_cursor', { baseUrl, maxRetries: 0 }), { windowSeconds, pageSize });

const T = 1_795_643_234;

describe('EventCursor', () => {
  it('returns each event once, oldest first, while events keep arriving in a second it has already read', async () => {
    record(T - 5);
    record(T);
    const cursor = cursorOf();
    await cursor.start();
    expect(await cursor.poll()).toEqual([]);

    const first = [record(T), record(T)];
    expect(ids(await cursor.poll())).toEqual(first);
    // Still second T: a cursor reading "after T" would miss it, one reading "from T" would repeat the two above.
    const third = record(T);
    expect(ids(await cursor.poll())).toEqual([third]);
    const later = [record(T + 1), record(T + 1)];
    const sameSecond = record(T);
    expect(ids(await cursor.poll())).toEqual([sameSecond, ...later]);
    expect(await cursor.poll()).toEqual([]);
  });

  it('finds an event recorded after newer ones when its created is within the window, and reads from the window’s floor', async () => {
    const cursor = cursorOf(30);
    await cursor.start();
    const newer = record(T + 10);
    expect(ids(await cursor.poll())).toEqual([newer]);
    const late = record(T + 10 - 30);
    expect(ids(await cursor.poll())).toEqual([late]);
    expect(requests.at(-1)!.get('created_gte')).toBe(String(T + 10 - 30));
    // Below the floor: the documented limit of a window (docs/cli.md#how-recur-listen-reads-events).
    record(T + 10 - 31);
    expect(await cursor.poll()).toEqual([]);
  });

  it('loses nothing when a read fails between pages: the next poll returns every event of it', async () => {
    const cursor = cursorOf(60, 2);
    await cursor.start();
    const burst = Array.from({ length: 5 }, (_, index) => record(T + Math.floor(index / 2)));
    failNextLaterPage = true;
    await expect(cursor.poll()).rejects.toMatchObject({ status: 400 });
    expect(ids(await cursor.poll())).toEqual(burst);
    expect(await cursor.poll()).toEqual([]);
  });

  it('remembers only the ids within the window, so a long session stays small', async () => {
    const cursor = cursorOf(10);
    await cursor.start();
    for (let second = 0; second < 100; second++) record(T + second);
    expect(await cursor.poll()).toHaveLength(100);
    expect(cursor.remembered).toBe(11);
    expect(await cursor.poll()).toEqual([]);
  });
});
