import { createHash } from 'node:crypto';
import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import { CLOCK, type Clock } from '@recur/kernel';
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../http/api-error';
import { sendApiError } from '../http/api-exception.filter';
import { callerOf, requestState } from '../http/request-context';
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_KEY_PATTERN } from './idempotency-key';
import { IdempotencyRepository } from './idempotency.repository';


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
 * `Idempotency-Key` on POST, for every route, in one place. The first request with a key
 * runs and its answer is stored; a repeat with the same body gets that answer again
 * (header `Idempotent-Replayed: true`); a repeat with another body is 409
 * idempotency_key_reused; a repeat while the first still runs is 409
 * idempotency_key_in_progress. 5xx answers are not stored, so a retry runs again.
 * The record's id is forwarded to the service as the command's request id, and a retry
 * (after a 5xx or a gateway crash) reuses the record, so it lands on the same resource.
 */
@Injectable()
export class IdempotencyMiddleware implements NestMiddleware {
  constructor(
    private readonly records: IdempotencyRepository,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  async use(request: Request, response: Response, next: NextFunction): Promise<void> {
    const state = requestState(request);
    state.commandId = state.requestId;
    if (request.method !== 'POST') return next();
    // Node joins repeated headers with ", "; two keys are an ambiguous request, not one key.
    const keys = request.headersDistinct[IDEMPOTENCY_HEADER];
    if (keys && keys.length > 1) {
      return sendApiError(response, new ApiError(400, 'idempotency_key_invalid', 'Send one Idempotency-Key header, not several.', 'Idempotency-Key'), state.requestId);
    }
    const key = keys?.[0];
    if (key === undefined) return next();
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
      return sendApiError(response, new ApiError(400, 'idempotency_key_invalid', `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters.`, 'Idempotency-Key'), state.requestId);
    }
    const fingerprint = createHash('sha256').update(`${request.method} ${request.path}\n${canonicalJson(request.body ?? {})}`).digest('hex');
    const caller = callerOf(request);
    let claim;
    try {
      claim = await this.records.claim(caller.tenant, key, fingerprint, this.now());
    } catch (error) {
      return next(error);
    }
    switch (claim.outcome) {
      case 'mismatch':
        return sendApiError(response, new ApiError(409, 'idempotency_key_reused', 'This Idempotency-Key was already used with a different request; use a new key.', 'Idempotency-Key'), state.requestId);
      case 'in_progress':
        return sendApiError(response, new ApiError(409, 'idempotency_key_in_progress', 'A request with this Idempotency-Key is still being processed; retry shortly.', 'Idempotency-Key'), state.requestId);
      case 'replay':
        response.setHeader('Idempotent-Replayed', 'true');
        response.status(claim.status).type('application/json').send(claim.body);
        return;
      case 'claimed':
        state.commandId = claim.recordId;
        this.recordAnswer(response, claim.recordId);
        return next();
    }
  }

  /** Captures the JSON answer as it is sent and stores it against the key. */
  private recordAnswer(response: Response, recordId: string): void {
    const send = response.send.bind(response);
    let stored = false;
    response.send = (body?: unknown) => {
      if (!stored) {
        stored = true;
        const text = typeof body === 'string' ? body : Buffer.isBuffer(body) ? body.toString('utf8') : JSON.stringify(body);
        const settle =
          response.statusCode >= 500 ? this.records.release(recordId)
          : response.statusCode === 400 ? this.records.forget(recordId)
          : this.records.complete(recordId, response.statusCode, text);
        // Answer the client only once the record is durable, so a replay is always possible.
        settle.then(() => send(body), () => send(body));
        return response;
      }
      return send(body);
    };
  }
}
