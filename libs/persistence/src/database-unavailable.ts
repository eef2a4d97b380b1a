/**
 * Whether a failure means the database could not be reached or dropped the connection — a
 * restart, a failover, a network cut — rather than a fault of the request or of the code. Such a
 * failure is the service's "unavailable", which the gateway answers `503` with `Retry-After`
 * (docs/api/conventions.md#errors), never `500`: nothing was committed that a retry with the same
 * Idempotency-Key does not replay, and the database is expected back.
 *
 * Checked by shape, through the chain of causes: pg's errors (a socket errno, or a PostgreSQL
 * SQLSTATE), Prisma's known request errors (which carry the driver's code, or Prisma's own
 * P1001/P1002/P1017/P2024) and the driver adapter's error kinds.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let cause = error, depth = 0; typeof cause === 'object' && cause !== null && depth < 5; depth++) {
    if (isUnavailableCode((cause as { code?: unknown }).code) || isUnavailableKind(cause) || isLostConnectionMessage(cause) || isSocketFileGone(cause)) return true;
    const adapter = (cause as { meta?: { driverAdapterError?: unknown } }).meta?.driverAdapterError;
    if (adapter !== undefined && isDatabaseUnavailable(adapter)) return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}

/** The socket could not be opened or was cut (a Unix socket's file is gone while the server restarts). */
const SOCKET_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * SQLSTATEs of a server going away or not taking connections: class 08 (connection exception),
 * 57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now (starting up, shutting
 * down, in recovery), 53300 too many connections.
 */
const SERVER_STATES = new Set(['57P01', '57P02', '57P03', '53300']);

/** Prisma's: P1001 cannot reach the server, P1002 reached but timed out, P1017 server closed the connection, P2024 no pooled connection in time. */
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1017', 'P2024']);

function isUnavailableCode(code: unknown): boolean {
  if (typeof code !== 'string') return false;
  return SOCKET_ERRNOS.has(code) || SERVER_STATES.has(code) || PRISMA_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code);
}

/** @prisma/driver-adapter-utils' error kinds for the same situations. */
const ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections', 'TransactionAlreadyClosed']);

function isUnavailableKind(cause: object): boolean {
  const kind = (cause as { kind?: unknown }).kind;
  if (typeof kind === 'string' && ADAPTER_KINDS.has(kind)) return true;
  // The adapter wraps a PostgreSQL error as `{ kind: 'postgres', code }`.
  return kind === 'postgres' && isUnavailableCode((cause as { code?: unknown }).code);
}

/** A Unix socket's file is gone while the server restarts: ENOENT, but of a `connect`, not of a file read. */
function isSocketFileGone(cause: object): boolean {
  const { code, message } = cause as { code?: unknown; message?: unknown };
  return code === 'ENOENT' && typeof message === 'string' && message.includes('connect ENOENT');
}

/** pg's own errors without a code: a connection that ended under a query, a pool that waited too long to connect. */
function isLostConnectionMessage(cause: object): boolean {
  const message = (cause as { message?: unknown }).message;
  return typeof message === 'string' && /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/.test(message);
}
