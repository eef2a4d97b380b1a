import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, type Clock, type TenantRef } from '@recur/kernel';
import type { Prisma } from '../generated/prisma/client';
import { ProviderDirectory } from '../providers/provider-directory.service';
import { type NewPaymentMethodFields, newPaymentMethod, type PaymentMethod, paymentMethodNotFound } from './payment-method';
import { PaymentMethodsRepository } from './payment-methods.repository';

type Tx = Prisma.TransactionClient;

/**
 * Payment method use cases, each in the command's transaction (`tx`) with the customer's methods
 * locked, so "which one is default" changes one request at a time. The first method a customer
 * saves becomes the default unless the request says otherwise (`set_default: false`), as most
 * customers have one number; a detached default leaves the customer with none (automatic
 * collection then falls back to sending the invoice), never silently another number.
 */
@Injectable()
export class PaymentMethodsService {
  constructor(
    private readonly methods: PaymentMethodsRepository,
    private readonly directory: ProviderDirectory,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  async create(tx: Tx, tenant: TenantRef, fields: NewPaymentMethodFields, setDefault: boolean | undefined): Promise<PaymentMethod> {
    const now = this.now();
    // No provider named: the one the number belongs to, as pawaPay predicts it (400 provider_not_predictable when none).
    const provider = fields.provider === '' && fields.consent === true ? await this.directory.resolve(tenant, '', fields.phoneNumber) : fields.provider;
    const method = newPaymentMethod(tenant, { ...fields, provider }, now);
    await this.methods.lockCustomer(tx, tenant, fields.customerId);
    const attached = await this.methods.listAttached(tenant, fields.customerId, tx);
    const saved = attached.find((other) => other.phoneNumber === method.phoneNumber && other.provider === method.provider);
    const target = saved ?? method;
    if (!saved) await this.methods.insert(tx, method);
    const makeDefault = setDefault ?? !attached.some((other) => other.isDefault);
    if (makeDefault && !target.isDefault) await this.methods.makeDefault(tx, tenant, fields.customerId, target.id, now);
    return this.methods.get(tx, tenant, fields.customerId, target.id);
  }

  list(tenant: TenantRef, customerId: string): Promise<PaymentMethod[]> {
    return this.methods.listAttached(tenant, customerId);
  }

  async setDefault(tx: Tx, tenant: TenantRef, customerId: string, id: string): Promise<PaymentMethod> {
    await this.methods.lockCustomer(tx, tenant, customerId);
    const method = await this.methods.get(tx, tenant, customerId, id);
    if (method.detachedAt) throw paymentMethodNotFound(id);
    if (!method.isDefault) await this.methods.makeDefault(tx, tenant, customerId, id, this.now());
    return this.methods.get(tx, tenant, customerId, id);
  }

  async detach(tx: Tx, tenant: TenantRef, customerId: string, id: string): Promise<PaymentMethod> {
    await this.methods.lockCustomer(tx, tenant, customerId);
    const method = await this.methods.get(tx, tenant, customerId, id);
    if (!method.detachedAt) await this.methods.detach(tx, id, this.now());
    return this.methods.get(tx, tenant, customerId, id);
  }
}
