import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { paymentsV1, requireTenant, toTenantMessage } from '@recur/contracts';
import { checkListPage, DomainError, invalidArgument, isDomainError } from '@recur/kernel';
import { Commands } from '../infrastructure/commands';
import { InvoicingClient } from '../invoices/invoicing.client';
import { toPaymentMessage } from './payment.mapper';
import { PaymentsService } from './payments.service';

/**
 * An outage met inside a command (the provider or invoicing unreachable) must not be recorded
 * as the command's answer, or a retry with the same request id would meet it forever: it
 * leaves the command as a plain error and becomes UNAVAILABLE again outside it.
 */
class NotRecorded extends Error {
  constructor(readonly domainError: DomainError) {
    super(domainError.message);
  }
}

export async function unrecordedOutages<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof NotRecorded) throw error.domainError;
    throw error;
  }
}

export function keepOutagesUnrecorded(error: unknown): never {
  if (isDomainError(error) && error.kind === 'unavailable') throw new NotRecorded(error);
  throw error;
}

/** gRPC edge of the payment use cases: decode, read the invoice, call, encode. No rules live here. */
@Controller()
export class PaymentsGrpcController {
  constructor(
    private readonly payments: PaymentsService,
    private readonly invoicing: InvoicingClient,
    private readonly commands: Commands,
  ) {}

  @GrpcMethod('PaymentsService', 'InitiatePayment')
  async initiatePayment(request: paymentsV1.InitiatePaymentRequest): Promise<paymentsV1.InitiatePaymentResponse> {
    const tenant = requireTenant(request.tenant);
    const invoice = await this.invoicing.payableInvoice(tenant, request.invoiceId);
    return unrecordedOutages(() =>
      this.commands.run(tenant, request, paymentsV1.InitiatePaymentResponseSchema, async (tx) => ({
        payment: toPaymentMessage(
          await this.payments.initiate(tx, tenant, invoice, { phoneNumber: request.phoneNumber, provider: request.provider, saveMethodSource: request.saveMethodSource }).catch(keepOutagesUnrecorded),
        ),
      })),
    );
  }

  /**
   * Smart retries' attempt `attempt` (the billing clock asks, docs/api/dunning.md#smart-retries);
   * idempotent by request id (the step's), and by the push's key at the provider besides.
   */
  @GrpcMethod('PaymentsService', 'RetryInvoicePayment')
  async retryInvoicePayment(request: paymentsV1.RetryInvoicePaymentRequest): Promise<paymentsV1.RetryInvoicePaymentResponse> {
    const tenant = requireTenant(request.tenant);
    if (!Number.isInteger(request.attempt) || request.attempt < 2) throw invalidArgument('attempt', 'attempt must be 2 or more (the push at finalization is attempt 1)');
    const invoice = await this.invoicing.payableInvoice(tenant, request.invoiceId);
    return unrecordedOutages(() =>
      this.commands.run(tenant, request, paymentsV1.RetryInvoicePaymentResponseSchema, async (tx) => {
        const retry = await this.payments.retryCollection(tx, tenant, invoice, request.attempt).catch(keepOutagesUnrecorded);
        if (retry.outcome === 'pushed') return { outcome: retry.outcome, payment: toPaymentMessage(retry.payment) };
        return { outcome: retry.outcome, reason: retry.outcome === 'not_owed' ? retry.reason : '' };
      }),
    );
  }

  @GrpcMethod('PaymentsService', 'GetPayment')
  async getPayment(request: paymentsV1.GetPaymentRequest): Promise<MessageInitShape<typeof paymentsV1.GetPaymentResponseSchema>> {
    return { payment: toPaymentMessage(await this.payments.get(requireTenant(request.tenant), request.id)) };
  }

  @GrpcMethod('PaymentsService', 'ListPayments')
  async listPayments(request: paymentsV1.ListPaymentsRequest): Promise<MessageInitShape<typeof paymentsV1.ListPaymentsResponseSchema>> {
    const page = checkListPage(request.page);
    const { payments, page: info } = await this.payments.list(requireTenant(request.tenant), page, request.invoiceId);
    return { payments: payments.map(toPaymentMessage), page: info };
  }

  @GrpcMethod('PaymentsService', 'GetPayerPage')
  async getPayerPage(request: paymentsV1.GetPayerPageRequest): Promise<MessageInitShape<typeof paymentsV1.GetPayerPageResponseSchema>> {
    const page = await this.payments.payerPage(request.token);
    return { payment: toPaymentMessage(page.payment), sandbox: page.sandbox, expectedOutcome: page.expectedOutcome, tenant: toTenantMessage(page.payment.tenant) };
  }

  @GrpcMethod('PaymentsService', 'DecideSandboxPayment')
  async decideSandboxPayment(request: paymentsV1.DecideSandboxPaymentRequest): Promise<MessageInitShape<typeof paymentsV1.DecideSandboxPaymentResponseSchema>> {
    return { payment: toPaymentMessage(await this.payments.decideSandbox(request.token, request.decision)) };
  }

  @GrpcMethod('PaymentsService', 'HandleProviderCallback')
  async handleProviderCallback(request: paymentsV1.HandleProviderCallbackRequest): Promise<MessageInitShape<typeof paymentsV1.HandleProviderCallbackResponseSchema>> {
    const { outcome, paymentId } = await this.payments.handleCallback(request.provider, {
      method: request.method,
      authority: request.authority,
      path: request.path,
      headers: request.headers,
      body: request.body,
    });
    return { outcome, paymentId };
  }
}
