/** The current time, injected so rules and tests do not read the wall clock themselves. */
export type Clock = () => Date;
export const CLOCK = Symbol('CLOCK');
export const systemClock: Clock = () => new Date();
