import type { Event, Recur } from '@recur/node';

export interface EventCursorOptions {
  /**
   * How far behind the newest event seen (in seconds of `created`) each poll reads again. An
   * event is stamped `created` when its service makes the change and recorded in the event log
   * when webhook-dispatch consumes it, so one service's event can be recorded after a later one
   * of another's; the cursor finds it as long as it is recorded within this window.
   */
  windowSeconds: number;
  /** Only this type, filtered by the API (`type`); other filters are the caller's. */
  type?: string;
  /** Events per request. */
  pageSize?: number;
}

export const DEFAULT_WINDOW_SECONDS = 60;

/**
 * Reads the account's new events from `GET /v1/events`, each exactly once, oldest first.
 *
 * The API orders events by `created`, whole seconds, newest first, and events of one second come
 * in no set order, so "after the last one seen" cannot be said with a timestamp: `created_gt`
 * would miss an event recorded later in a second already read, and `created_gte` alone would
 * repeat the events of that second. The cursor therefore reads from a floor `windowSeconds`
 * below the newest `created` it has seen (`created_gte`), and remembers the ids it has returned
 * whose `created` is at or above that floor: an event is new when its id is not remembered. An id
 * is forgotten only once the floor has passed its `created`, after which no read can list it
 * again, so nothing is returned twice; and any event recorded with a `created` at or above the
 * floor is listed by the next read, so nothing recorded within the window is missed.
 * (docs/cli.md#how-recur-listen-reads-events)
 */
export class EventCursor {
  /** The newest `created` seen; undefined until an event has been seen. */
  private newest: number | undefined;
  /** id → created of the events returned (or present at start) whose `created` is within the window. */
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly recur: Recur,
    private readonly options: EventCursorOptions,
  ) {}

  /**
   * Takes the events recorded so far as already seen: a session returns what is recorded after it
   * starts. Reads the newest event, then the window below it.
   */
  async start(): Promise<void> {
    const [newest] = (await this.recur.events.list({ limit: 1, ...(this.options.type ? { type: this.options.type as Event['type'] } : {}) })).data;
    if (!newest) return;
    this.newest = newest.created;
    await this.poll();
  }

  /** The events recorded since the last poll (or start) that it has not returned, oldest first. */
  async poll(): Promise<Event[]> {
    const floor = this.floor();
    const fresh: Event[] = [];
    const query = {
      limit: this.options.pageSize ?? 100,
      ...(floor !== undefined && floor > 0 ? { created_gte: floor } : {}),
      ...(this.options.type ? { type: this.options.type as Event['type'] } : {}),
    };
    // The SDK's iterator yields an id once even when an insert shifts it onto the next page. The
    // ids are remembered only once every page is read: a read that fails half-way returns nothing,
    // and the next poll lists the same events again.
    for await (const event of this.recur.events.list(query)) if (!this.seen.has(event.id)) fresh.push(event);
    for (const event of fresh) this.seen.set(event.id, event.created);
    // Listed newest first (within a second, last recorded first): reversed, the oldest comes first;
    // the sort by `created` is stable, keeping that order within a second.
    fresh.reverse().sort((a, b) => a.created - b.created);
    for (const event of fresh) this.newest = Math.max(this.newest ?? event.created, event.created);
    this.forgetBelowFloor();
    return fresh;
  }

  /** How many ids the cursor remembers (those within the window). */
  get remembered(): number {
    return this.seen.size;
  }

  private floor(): number | undefined {
    return this.newest === undefined ? undefined : this.newest - this.options.windowSeconds;
  }

  private forgetBelowFloor(): void {
    const floor = this.floor();
    if (floor === undefined) return;
    for (const [id, created] of this.seen) if (created < floor) this.seen.delete(id);
  }
}
