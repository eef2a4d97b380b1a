import type { ServerResponse } from 'node:http';
import { Injectable, type NestMiddleware } from '@nestjs/common';
import { httpDuration } from '@recur/telemetry';
import { type MiddlewareRequest, requestState } from './request-context';

/** Times every request, labelled by its route template (not its path: ids would explode cardinality). */
@Injectable()
export class HttpMetricsMiddleware implements NestMiddleware {
  use(request: MiddlewareRequest, response: ServerResponse, next: () => void): void {
    const stop = httpDuration.startTimer({ method: request.method });
    response.on('finish', () => stop({ route: requestState(request)?.route?.path ?? 'other', status: String(response.statusCode) }));
    next();
  }
}
