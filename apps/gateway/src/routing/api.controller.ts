import { All, Controller, Req, Res, StreamableFile } from '@nestjs/common';
import { toTenantMessage } from '@recur/contracts';
import type { Request, Response } from 'express';
import { ApiError } from '../http/api-error';
import { callerOf, requestState } from '../http/request-context';
import { createValidationPipe } from '../http/validation';
import { ServiceClients } from '../infrastructure/service-clients';
import type { FileAnswer } from './define-routes';

/**
 * Runs every `/v1` route from the route table. By the time a request gets here the middleware
 * has authenticated it, matched its route (404/405), applied the key policy (403) and the
 * idempotency key; this validates the declared body and query (400), calls the handler and
 * answers with the route's success status. A route without a handler answers 501.
 */
@Controller('v1')
export class ApiController {
  private readonly validation = createValidationPipe();

  constructor(private readonly services: ServiceClients) {}

  @All('{*path}')
  async dispatch(@Req() request: Request, @Res({ passthrough: true }) response: Response): Promise<unknown> {
    const state = requestState(request);
    const route = state.route;
    if (!route) throw new ApiError(404, 'route_not_found', `Unrecognized request URL (${request.method} ${request.path}).`);
    if (!route.handler) throw new ApiError(501, 'not_implemented', `${request.method} ${request.path} is part of the API but not available yet.`);
    const body = route.body ? await this.validation.transform(request.body ?? {}, { type: 'body', metatype: route.body }) : undefined;
    const query = route.query ? await this.validation.transform({ ...request.query }, { type: 'query', metatype: route.query }) : undefined;
    const caller = callerOf(request);
    const result = await route.handler({
      services: this.services,
      tenant: toTenantMessage(caller.tenant),
      accountName: caller.accountName,
      commandId: state.commandId ?? state.requestId,
      params: state.params ?? {},
      body,
      query,
    });
    response.status(route.status);
    if (route.file) {
      const { content, filename } = result as FileAnswer;
      return new StreamableFile(Buffer.from(content), { type: route.file.contentType, disposition: `attachment; filename="${filename}"`, length: content.byteLength });
    }
    return result;
  }
}
