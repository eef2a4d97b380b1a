import { timingSafeEqual, createHash } from 'node:crypto';
import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../http/api-error';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config';

const digest = (value: string) => createHash('sha256').update(value).digest();

/** The operator surface answers only `Authorization: Bearer <RECUR_OPERATOR_TOKEN>`. */
@Injectable()
export class OperatorTokenGuard implements CanActivate {
  constructor(@Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig) {}

  canActivate(context: ExecutionContext): boolean {
    const header = context.switchToHttp().getRequest<FastifyRequest>().headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
    // Compare digests: equal lengths, constant time, whatever the input.
    if (!token || !timingSafeEqual(digest(token), digest(this.config.operatorToken))) {
      throw new ApiError(401, 'operator_token_invalid', 'A valid operator token is required (Authorization: Bearer …).');
    }
    return true;
  }
}
