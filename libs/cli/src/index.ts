// @recur/cli: the `recur` command (docs/cli.md); its parts, for programs and tests.
export { DEFAULT_WINDOW_SECONDS, EventCursor, type EventCursorOptions } from './event-cursor';
export { followEvents, forward, newSessionSecret } from './listen';
export { type Io, main, run, UsageError } from './main';
export { FIXTURES, trigger } from './trigger';
