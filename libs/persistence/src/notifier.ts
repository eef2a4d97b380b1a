import type { Pool } from 'pg';

/**
 * Wakes a channel's listeners after commits, with at most one NOTIFY per channel in flight. A
 * wake-up asked for while one is in flight is answered by one more NOTIFY sent when that one
 * returns, so every committed change is followed by a NOTIFY sent after its commit (the listener
 * then sees it); a burst of commits shares a few. Nobody waits for it: a commit's caller
 * answers without the extra round trip. Each NOTIFY runs in a statement of its own, outside any
 * change's transaction: inside one, it would take PostgreSQL's global notify lock through the
 * commit's WAL flush and serialise every notifying commit (docs/performance.md). A NOTIFY lost
 * (the process died, the statement failed) is covered by the listener's polling fallback.
 */
export class CoalescingNotifier {
  private readonly channels = new Map<string, { inFlight: boolean; askedAgain: boolean }>();

  constructor(
    private readonly pool: Pool,
    private readonly onNotifyFailed: (error: Error) => void = () => undefined,
  ) {}

  /** NOTIFY `channel` soon: call it once the change to announce has committed. */
  notify(channel: string): void {
    let state = this.channels.get(channel);
    if (!state) this.channels.set(channel, (state = { inFlight: false, askedAgain: false }));
    if (state.inFlight) {
      state.askedAgain = true;
      return;
    }
    state.inFlight = true;
    const send = (): void => {
      state.askedAgain = false;
      this.pool.query('SELECT pg_notify($1, $2)', [channel, '']).then(
        () => undefined,
        (error: Error) => this.onNotifyFailed(error),
      ).finally(() => {
        if (state.askedAgain) send();
        else state.inFlight = false;
      });
    };
    send();
  }
}
