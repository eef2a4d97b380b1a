import { Injectable, type NestMiddleware } from '@nestjs/common';
import { httpDuration } from '@recur/telemetry';
import type { NextFunction, Request, Response } from 'express';
import { requestState } from './request-context';

/** Times every request, labelled by its route template (not its path: ids would explode cardinality). */
@Injectable()
export class HttpMetricsMiddleware implements NestMiddleware {
  use(request: Request, response: Response, next: NextFunction): void {
    const stop = httpDuration.startTimer({ method: request.method });
    response.on('finish', () => stop({ route: requestState(request)?.route?.path ?? 'other', status: String(response.statusCode) }));
    next();
  }
}
