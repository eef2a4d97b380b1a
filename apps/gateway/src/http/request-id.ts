import { newId } from '@recur/kernel';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { startRequestState } from './request-context';

/**
 * Gives every request an id (`req_…`), returned in `Request-Id` and in every error body. A
 * Fastify `onRequest` hook, the first step of every request: even a body that fails to parse
 * gets one. Set on the Node.js response, so every answer carries it, however it is written.
 */
export function assignRequestId(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const requestId = newId('req');
  startRequestState(request.raw, requestId);
  reply.raw.setHeader('Request-Id', requestId);
  done();
}
