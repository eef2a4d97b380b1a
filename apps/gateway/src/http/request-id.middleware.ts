import { Injectable, type NestMiddleware } from '@nestjs/common';
import { newId } from '@recur/kernel';
import type { NextFunction, Request, Response } from 'express';
import type { RecurRequest } from './request-context';

/** Gives every request an id (`req_…`), returned in `Request-Id` and in every error body. */
@Injectable()
export class RequestIdMiddleware implements NestMiddleware {
  use(request: Request, response: Response, next: NextFunction): void {
    const requestId = newId('req');
    (request as RecurRequest).recur = { requestId };
    response.setHeader('Request-Id', requestId);
    next();
  }
}
