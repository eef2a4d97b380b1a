/**
 * A wake-up that is remembered until the sleeper resets it: a signal that arrives while the
 * worker is busy (claiming, running) makes its next sleep return at once, so it is never lost.
 */
export class WakeUp {
  private pending = false;
  private wakeSleeper?: () => void;

  signal(): void {
    this.pending = true;
    this.wakeSleeper?.();
  }

  /** Forgets earlier signals; call right before looking for work, so only later ones count. */
  reset(): void {
    this.pending = false;
  }

  /** Resolves after `ms`, or as soon as a signal is pending. */
  sleep(ms: number): Promise<void> {
    if (this.pending) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakeSleeper = undefined;
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.wakeSleeper = wake;
    });
  }
}
