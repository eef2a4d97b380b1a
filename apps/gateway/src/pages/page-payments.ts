import type { MessageInitShape } from '@bufbuild/protobuf';
import { fromGrpcError, type paymentsV1 } from '@recur/contracts';
import type { JsonLogger } from '@recur/telemetry';
import type { ServiceClients } from '../infrastructure/service-clients';

/**
 * Starts the payment a page's form asks for (the hosted invoice payment page, the checkout). When
 * the payer ticked "save this number", a payments release that does not know that request field
 * refuses it (`unavailable`, docs/operations/upgrades.md#request-fields-an-older-service-does-not-know)
 * or, older still, ignores it: the payer still pays, the number is simply not saved (the answer's
 * `save_method_source` stays empty), and the log says so. Nothing is charged without consent either way.
 */
export async function initiateFromPage(
  services: ServiceClients,
  logger: JsonLogger,
  request: MessageInitShape<typeof paymentsV1.InitiatePaymentRequestSchema> & { saveMethodSource: string },
): Promise<paymentsV1.Payment> {
  if (request.saveMethodSource === '') return (await services.payments.initiatePayment(request)).payment!;
  let payment: paymentsV1.Payment;
  try {
    payment = (await services.payments.initiatePayment(request)).payment!;
  } catch (error) {
    if (fromGrpcError(error).code !== 'service_unavailable') throw error;
    payment = (await services.payments.initiatePayment({ ...request, saveMethodSource: '' })).payment!;
  }
  if (payment.saveMethodSource === '') logger.warn(`payment ${payment.id}: the payer's number will not be saved as a payment method (a payments release before saving from pages, or a pending payment that cannot take it); the payment goes on`);
  return payment;
}
