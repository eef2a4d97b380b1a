/** Runs `fn`, which must throw, and returns what it threw (typed for the assertions that follow). */
export function thrownBy<E = Error>(fn: () => unknown): E {
  try {
    fn();
  } catch (error) {
    return error as E;
  }
  throw new Error('expected the call to throw');
}
