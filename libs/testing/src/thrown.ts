/** Runs `fn`, which must throw, and returns what it threw (typed for the assertions that follow). */
export function thrownBy<E = Error>(fn: () => unknown): E {
  try {
    fn();
  } catch (error) {
    return error as E;
  }
  throw new Error('expected the call to throw');
}

/** Awaits `promise`, which must reject, and returns its reason (the async twin of thrownBy). */
export async function rejectionOf<E = Error>(promise: Promise<unknown>): Promise<E> {
  try {
    await promise;
  } catch (error) {
    return error as E;
  }
  throw new Error('expected the promise to reject');
}
