import { createHash } from 'node:crypto';
import type { Clock } from '@recur/kernel';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/api-error';
import { callerOf, requestPath, requestState } from '../http/request-context';
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_KEY_PATTERN } from './idempotency-key';
import type { IdempotencyRepository } from './idempotency.repository';

/** Key order does not change a JSON body's meaning, so it does not change its fingerprint. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * `Idempotency-Key` on POST, for every route, in one place (a `/v1` hook: routing/api-route.ts).
 * The first request with a key runs and its answer is stored; a repeat with the same body gets
 * that answer again (header `Idempotent-Replayed: true`); a repeat with another body is 409
 * idempotency_key_reused; a repeat while the first still runs is 409
 * idempotency_key_in_progress. 5xx answers are not stored, so a retry runs again.
 * The record's id is forwarded to the service as the command's request id, and a retry
 * (after a 5xx or a gateway crash) reuses the record, so it lands on the same resource.
 * The answer is stored by `recordIdempotentAnswer`, the route's `onSend` hook, as it is sent.
 */
export function claimIdempotencyKey(records: IdempotencyRepository, now: Clock) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const state = requestState(request.raw);
    state.commandId = state.requestId;
    if (request.method !== 'POST') return undefined;
    // Node joins repeated headers with ", "; two keys are an ambiguous request, not one key.
    const keys = request.raw.headersDistinct[IDEMPOTENCY_HEADER];
    if (keys && keys.length > 1) {
      throw new ApiError(400, 'idempotency_key_invalid', 'Send one Idempotency-Key header, not several.', 'Idempotency-Key');
    }
    const key = keys?.[0];
    if (key === undefined) return undefined;
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw new ApiError(400, 'idempotency_key_invalid', `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters.`, 'Idempotency-Key');
    }
    const fingerprint = createHash('sha256').update(`${request.method} ${requestPath(request.raw)}\n${canonicalJson(request.body ?? {})}`).digest('hex');
    const claim = await records.claim(callerOf(request.raw).tenant, key, fingerprint, now());
    switch (claim.outcome) {
      case 'mismatch':
        throw new ApiError(409, 'idempotency_key_reused', 'This Idempotency-Key was already used with a different request; use a new key.', 'Idempotency-Key');
      case 'in_progress':
        throw new ApiError(409, 'idempotency_key_in_progress', 'A request with this Idempotency-Key is still being processed; retry shortly.', 'Idempotency-Key');
      case 'replay':
        // The stored answer as it was sent, byte for byte; sent from the hook, it ends the request here.
        return reply.code(claim.status).header('Idempotent-Replayed', 'true').type('application/json; charset=utf-8').send(claim.body);
      case 'claimed':
        state.commandId = claim.recordId;
        state.idempotencyRecordId = claim.recordId;
        return undefined;
    }
  };
}

/**
 * The `/v1` route's `onSend` hook: stores the answer of a request that claimed an idempotency key
 * against that key, before the client gets it, so a replay is always possible. 5xx answers
 * release the key (a retry runs again), 400s forget it (the request was never valid).
 */
export function recordIdempotentAnswer(records: IdempotencyRepository) {
  return async (request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> => {
    const recordId = requestState(request.raw)?.idempotencyRecordId;
    if (!recordId) return payload;
    const status = reply.statusCode;
    const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined;
    const settle =
      status >= 500 || text === undefined ? records.release(recordId)
      : status === 400 ? records.forget(recordId)
      : records.complete(recordId, status, text);
    // Answer the client only once the record is durable; a failed write does not hold the answer back.
    await settle.catch(() => undefined);
    return payload;
  };
}
