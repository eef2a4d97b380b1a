import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { catalogV1, requireTenant } from '@recur/contracts';
import { ADDON_STATUSES } from '@recur/vocabulary';
import { checkListPage } from '@recur/kernel';
import { fromInt64 } from '@recur/money';
import { checkOneOf } from '../common/fields';
import { toAddonMessage } from './addon.mapper';
import { AddonsService } from './addons.service';
import { Commands } from '../infrastructure/commands';

/** gRPC edge of the add-on use cases: decode, call, encode. No rules live here. */
@Controller()
export class AddonsGrpcController {
  constructor(
    private readonly addons: AddonsService,
    private readonly commands: Commands,
  ) {}

  @GrpcMethod('CatalogService', 'CreateAddon')
  async createAddon(request: catalogV1.CreateAddonRequest): Promise<catalogV1.CreateAddonResponse> {
    const tenant = requireTenant(request.tenant);
    const fields = { name: request.name, description: request.description, priceMonthly: fromInt64(request.priceMonthly, 'price_monthly'), currency: request.currency, metadata: request.metadata, taxRateIds: request.taxRateIds };
    return this.commands.run(tenant, request, catalogV1.CreateAddonResponseSchema, async (tx) => ({ addon: toAddonMessage(await this.addons.create(tx, tenant, fields)) }));
  }

  @GrpcMethod('CatalogService', 'GetAddon')
  async getAddon(request: catalogV1.GetAddonRequest): Promise<MessageInitShape<typeof catalogV1.GetAddonResponseSchema>> {
    return { addon: toAddonMessage(await this.addons.get(requireTenant(request.tenant), request.id)) };
  }

  @GrpcMethod('CatalogService', 'ListAddons')
  async listAddons(request: catalogV1.ListAddonsRequest): Promise<MessageInitShape<typeof catalogV1.ListAddonsResponseSchema>> {
    const tenant = requireTenant(request.tenant);
    const page = checkListPage(request.page);
    const status = request.status === undefined ? undefined : checkOneOf(request.status, ADDON_STATUSES, 'status');
    const { addons, page: info } = await this.addons.list(tenant, page, status);
    return { addons: addons.map(toAddonMessage), page: info };
  }

  @GrpcMethod('CatalogService', 'UpdateAddon')
  async updateAddon(request: catalogV1.UpdateAddonRequest): Promise<catalogV1.UpdateAddonResponse> {
    const tenant = requireTenant(request.tenant);
    const fields = {
      name: request.name,
      description: request.description,
      priceMonthly: fromInt64(request.priceMonthly, 'price_monthly'),
      currency: request.currency,
      metadata: Object.keys(request.metadata).length > 0 ? request.metadata : undefined,
      taxRateIds: request.taxRateIds?.ids,
    };
    return this.commands.run(tenant, request, catalogV1.UpdateAddonResponseSchema, async (tx) => ({ addon: toAddonMessage(await this.addons.update(tx, tenant, request.id, fields)) }));
  }

  @GrpcMethod('CatalogService', 'TakeAddonOffSale')
  async takeAddonOffSale(request: catalogV1.TakeAddonOffSaleRequest): Promise<catalogV1.TakeAddonOffSaleResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, catalogV1.TakeAddonOffSaleResponseSchema, async (tx) => ({ addon: toAddonMessage(await this.addons.takeOffSale(tx, tenant, request.id)) }));
  }

  @GrpcMethod('CatalogService', 'RestoreAddon')
  async restoreAddon(request: catalogV1.RestoreAddonRequest): Promise<catalogV1.RestoreAddonResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, catalogV1.RestoreAddonResponseSchema, async (tx) => ({ addon: toAddonMessage(await this.addons.restore(tx, tenant, request.id)) }));
  }
}
