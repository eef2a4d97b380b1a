import { status as GrpcStatus } from '@grpc/grpc-js';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { createServiceClient, fromGrpcError, paymentsV1, type ServiceClient, toTenantMessage } from '@recur/contracts';
import type { TenantRef } from '@recur/kernel';
import { SUBSCRIPTION_CONFIG, type SubscriptionConfig } from '../subscription-config';

/** A push is a provider call inside payments: its answer may take a few seconds. */
const PAYMENTS_TIMEOUT_MS = 20_000;

/** What an automatic retry did (PaymentsService.RetryInvoicePayment). */
export type CollectionRetryOutcome = 'pushed' | 'not_owed' | 'no_payment_method';

/** The reason given when the payments service runs a release without RetryInvoicePayment. */
export const RETRIES_UNSUPPORTED = 'retries_unsupported';

/** What the billing clock asks of the payments service: the smart retries' pushes. */
export interface BillingCollection {
  /** Pushes attempt `attempt` of the invoice (idempotent by `requestId`, the step's key); throws when payments cannot be asked. */
  retry(tenant: TenantRef, invoiceId: string, attempt: number, requestId: string): Promise<{ outcome: CollectionRetryOutcome; reason: string }>;
}

/** `PaymentsService.RetryInvoicePayment`. */
@Injectable()
export class PaymentsClient implements BillingCollection, OnModuleDestroy {
  private readonly client: ServiceClient<typeof paymentsV1.PaymentsService>;

  constructor(@Inject(SUBSCRIPTION_CONFIG) config: SubscriptionConfig) {
    this.client = createServiceClient(paymentsV1.PaymentsService, config.paymentsAddress);
  }

  onModuleDestroy(): void {
    this.client.close();
  }

  async retry(tenant: TenantRef, invoiceId: string, attempt: number, requestId: string): Promise<{ outcome: CollectionRetryOutcome; reason: string }> {
    try {
      const answer = await this.client.retryInvoicePayment({ tenant: toTenantMessage(tenant), invoiceId, attempt, requestId }, { timeoutMs: PAYMENTS_TIMEOUT_MS });
      return { outcome: answer.outcome as CollectionRetryOutcome, reason: answer.reason };
    } catch (error) {
      // A payments release before smart retries (a rolling upgrade): nothing can be pushed, so the
      // invoice is dunned as before retries existed, rather than waiting for the upgrade.
      if ((error as { code?: number }).code === GrpcStatus.UNIMPLEMENTED) return { outcome: 'no_payment_method', reason: RETRIES_UNSUPPORTED };
      throw fromGrpcError(error);
    }
  }
}
