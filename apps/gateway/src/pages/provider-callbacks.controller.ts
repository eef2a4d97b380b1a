import { Controller, HttpCode, Param, Post, Req } from '@nestjs/common';
import { fromGrpcError } from '@recur/contracts';
import type { FastifyRequest } from 'fastify';
import { ServiceClients } from '../infrastructure/service-clients';

/**
 * Provider callbacks (`POST /callbacks/<provider>`, e.g. `/callbacks/pawapay` as the callback URL
 * configured in pawaPay's dashboard), outside `/v1` and without a key: the raw body and headers
 * go to the payments service, which authenticates them as the provider documents (pawaPay: RFC
 * 9421 signatures) and settles the payment once. 200 for any authenticated callback (a
 * duplicate too), 401 when the signature does not verify, so the provider retries only what
 * can succeed.
 */
@Controller('callbacks')
export class ProviderCallbacksController {
  constructor(private readonly services: ServiceClients) {}

  @Post(':provider')
  @HttpCode(200)
  async callback(@Param('provider') provider: string, @Req() request: FastifyRequest): Promise<{ received: true; outcome: string }> {
    try {
      const { outcome } = await this.services.payments.handleProviderCallback(received(provider, request));
      return { received: true, outcome };
    } catch (error) {
      throw fromGrpcError(error);
    }
  }

  /**
   * Refund callbacks (`POST /callbacks/<provider>/refunds`: pawaPay's refund callback URL, set
   * apart from the deposit one in its dashboard), authenticated the same way; each settles its
   * refund once.
   */
  @Post(':provider/refunds')
  @HttpCode(200)
  async refundCallback(@Param('provider') provider: string, @Req() request: FastifyRequest): Promise<{ received: true; outcome: string }> {
    try {
      const { outcome } = await this.services.payments.handleProviderRefundCallback(received(provider, request));
      return { received: true, outcome };
    } catch (error) {
      throw fromGrpcError(error);
    }
  }
}

/** The callback as received: method, authority, path, lowercase headers and the raw body (body-parsers.ts keeps the bytes under /callbacks), for the signature check. */
function received(provider: string, request: FastifyRequest) {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') headers[name.toLowerCase()] = value;
  return {
    provider,
    method: request.method,
    authority: request.headers.host ?? '',
    path: request.originalUrl.split('?')[0],
    headers,
    body: Buffer.isBuffer(request.body) ? new Uint8Array(request.body) : new Uint8Array(),
  };
}
