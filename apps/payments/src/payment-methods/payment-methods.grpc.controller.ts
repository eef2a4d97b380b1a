import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { paymentMethodV1, requireTenant } from '@recur/contracts';
import { unixSeconds } from '@recur/kernel';
import { Commands } from '../infrastructure/commands';
import type { PaymentMethod } from './payment-method';
import { PaymentMethodsService } from './payment-methods.service';

export function toPaymentMethodMessage(method: PaymentMethod): paymentMethodV1.PaymentMethod {
  return create(paymentMethodV1.PaymentMethodSchema, {
    id: method.id,
    livemode: method.tenant.livemode,
    customerId: method.customerId,
    type: 'mobile_money',
    phoneNumber: method.phoneNumber,
    provider: method.provider,
    isDefault: method.isDefault,
    consentAt: BigInt(unixSeconds(method.consentAt)),
    consentSource: method.consentSource,
    created: BigInt(unixSeconds(method.createdAt)),
  });
}

/** gRPC edge of the payment method use cases: decode, call, encode. No rules live here. */
@Controller()
export class PaymentMethodsGrpcController {
  constructor(
    private readonly methods: PaymentMethodsService,
    private readonly commands: Commands,
  ) {}

  @GrpcMethod('PaymentsService', 'CreatePaymentMethod')
  createPaymentMethod(request: paymentMethodV1.CreatePaymentMethodRequest): Promise<paymentMethodV1.CreatePaymentMethodResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, paymentMethodV1.CreatePaymentMethodResponseSchema, async (tx) => ({
      paymentMethod: toPaymentMethodMessage(await this.methods.create(tx, tenant, {
        customerId: request.customerId, phoneNumber: request.phoneNumber, provider: request.provider, consent: request.consent, consentSource: request.consentSource || 'api',
      }, request.setDefault)),
    }));
  }

  @GrpcMethod('PaymentsService', 'ListPaymentMethods')
  async listPaymentMethods(request: paymentMethodV1.ListPaymentMethodsRequest): Promise<MessageInitShape<typeof paymentMethodV1.ListPaymentMethodsResponseSchema>> {
    return { paymentMethods: (await this.methods.list(requireTenant(request.tenant), request.customerId)).map(toPaymentMethodMessage) };
  }

  @GrpcMethod('PaymentsService', 'SetDefaultPaymentMethod')
  setDefaultPaymentMethod(request: paymentMethodV1.SetDefaultPaymentMethodRequest): Promise<paymentMethodV1.SetDefaultPaymentMethodResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, paymentMethodV1.SetDefaultPaymentMethodResponseSchema, async (tx) => ({
      paymentMethod: toPaymentMethodMessage(await this.methods.setDefault(tx, tenant, request.customerId, request.id)),
    }));
  }

  @GrpcMethod('PaymentsService', 'DetachPaymentMethod')
  detachPaymentMethod(request: paymentMethodV1.DetachPaymentMethodRequest): Promise<paymentMethodV1.DetachPaymentMethodResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, paymentMethodV1.DetachPaymentMethodResponseSchema, async (tx) => ({
      paymentMethod: toPaymentMethodMessage(await this.methods.detach(tx, tenant, request.customerId, request.id)),
    }));
  }
}
