import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { invoicingV1, requireTenant } from '@recur/contracts';
import { checkListPage } from '@recur/kernel';
import { fromInt64 } from '@recur/money';
import { Commands } from '../infrastructure/commands';
import { toTaxRateMessage } from './tax-rate.mapper';
import { TaxRatesService } from './tax-rates.service';

/** gRPC edge of the tax-rate use cases: decode, call, encode. No rules live here. */
@Controller()
export class TaxRatesGrpcController {
  constructor(
    private readonly taxRates: TaxRatesService,
    private readonly commands: Commands,
  ) {}

  @GrpcMethod('InvoicingService', 'CreateTaxRate')
  async createTaxRate(request: invoicingV1.CreateTaxRateRequest): Promise<invoicingV1.CreateTaxRateResponse> {
    const tenant = requireTenant(request.tenant);
    const fields = {
      displayName: request.displayName,
      description: request.description,
      ratePpm: fromInt64(request.ratePpm, 'percentage'),
      inclusive: request.inclusive,
      country: request.country,
      region: request.region,
      accountDefault: request.accountDefault,
      metadata: request.metadata,
    };
    return this.commands.run(tenant, request, invoicingV1.CreateTaxRateResponseSchema, async (tx) => ({ taxRate: toTaxRateMessage(await this.taxRates.create(tx, tenant, fields)) }));
  }

  @GrpcMethod('InvoicingService', 'GetTaxRate')
  async getTaxRate(request: invoicingV1.GetTaxRateRequest): Promise<MessageInitShape<typeof invoicingV1.GetTaxRateResponseSchema>> {
    return { taxRate: toTaxRateMessage(await this.taxRates.get(requireTenant(request.tenant), request.id)) };
  }

  @GrpcMethod('InvoicingService', 'ListTaxRates')
  async listTaxRates(request: invoicingV1.ListTaxRatesRequest): Promise<MessageInitShape<typeof invoicingV1.ListTaxRatesResponseSchema>> {
    const page = checkListPage(request.page);
    const { taxRates, page: info } = await this.taxRates.list(requireTenant(request.tenant), page, request.active);
    return { taxRates: taxRates.map(toTaxRateMessage), page: info };
  }

  @GrpcMethod('InvoicingService', 'UpdateTaxRate')
  async updateTaxRate(request: invoicingV1.UpdateTaxRateRequest): Promise<invoicingV1.UpdateTaxRateResponse> {
    const tenant = requireTenant(request.tenant);
    const changes = {
      displayName: request.displayName,
      description: request.description,
      country: request.country,
      region: request.region,
      active: request.active,
      accountDefault: request.accountDefault,
      metadata: Object.keys(request.metadata).length > 0 ? request.metadata : undefined,
    };
    return this.commands.run(tenant, request, invoicingV1.UpdateTaxRateResponseSchema, async (tx) => ({ taxRate: toTaxRateMessage(await this.taxRates.update(tx, tenant, request.id, changes)) }));
  }
}
