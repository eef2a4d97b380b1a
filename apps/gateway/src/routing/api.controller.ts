import { All, Controller, Req, Res, StreamableFile } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/api-error';
import { callerOf, requestPath, requestState } from '../http/request-context';
import { AlternativeAnswer, type FileAnswer } from './define-routes';
import { RouteRunner } from './route-runner';

/**
 * Runs every `/v1` route from the route table. By the time a request gets here the middleware
 * has authenticated it, matched its route (404/405), applied the key policy (403) and the
 * idempotency key; the RouteRunner validates the declared body and query (400) and calls the
 * handler (501 without one); this answers with the route's success status.
 */
@Controller('v1')
export class ApiController {
  constructor(private readonly routes: RouteRunner) {}

  // `/v1` and everything under it, in Fastify's router syntax.
  @All(['', '*'])
  async dispatch(@Req() request: FastifyRequest, @Res({ passthrough: true }) response: FastifyReply): Promise<unknown> {
    const state = requestState(request.raw);
    const route = state.route;
    if (!route) throw new ApiError(404, 'route_not_found', `Unrecognized request URL (${request.method} ${requestPath(request.raw)}).`);
    const caller = callerOf(request.raw);
    const result = await this.routes.run(route, {
      tenant: caller.tenant,
      accountName: caller.accountName,
      commandId: state.commandId ?? state.requestId,
      params: state.params ?? {},
      body: request.body,
      query: { ...(request.query as Record<string, unknown>) },
    });
    if (route.alternative && result instanceof AlternativeAnswer) {
      response.code(route.alternative.status);
      return result.body;
    }
    response.code(route.status);
    if (route.file) {
      const { content, filename } = result as FileAnswer;
      return new StreamableFile(Buffer.from(content), { type: route.file.contentType, disposition: `attachment; filename="${filename}"`, length: content.byteLength });
    }
    return result;
  }
}
