import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { ADDON_STATUSES, catalogV1, requireTenant } from '@recur/contracts';
import { checkPage, pageInfo } from '@recur/kernel';
import { fromInt64 } from '@recur/money';
import { checkOneOf } from '../common/fields';
import { toAddonMessage } from './addon.mapper';
import { AddonsService } from './addons.service';

/** gRPC edge of the add-on use cases: decode, call, encode. No rules live here. */
@Controller()
export class AddonsGrpcController {
  constructor(private readonly addons: AddonsService) {}

  @GrpcMethod('CatalogService', 'CreateAddon')
  async createAddon(request: catalogV1.CreateAddonRequest): Promise<MessageInitShape<typeof catalogV1.CreateAddonResponseSchema>> {
    const addon = await this.addons.create(
      requireTenant(request.tenant),
      { name: request.name, description: request.description, priceMonthly: fromInt64(request.priceMonthly, 'price_monthly'), currency: request.currency, metadata: request.metadata },
      request.requestId || null,
    );
    return { addon: toAddonMessage(addon) };
  }

  @GrpcMethod('CatalogService', 'GetAddon')
  async getAddon(request: catalogV1.GetAddonRequest): Promise<MessageInitShape<typeof catalogV1.GetAddonResponseSchema>> {
    return { addon: toAddonMessage(await this.addons.get(requireTenant(request.tenant), request.id)) };
  }

  @GrpcMethod('CatalogService', 'ListAddons')
  async listAddons(request: catalogV1.ListAddonsRequest): Promise<MessageInitShape<typeof catalogV1.ListAddonsResponseSchema>> {
    const tenant = requireTenant(request.tenant);
    const page = checkPage(request.page?.limit, request.page?.offset);
    const status = request.status === undefined ? undefined : checkOneOf(request.status, ADDON_STATUSES, 'status');
    const { addons, total } = await this.addons.list(tenant, page, status);
    return { addons: addons.map(toAddonMessage), page: pageInfo(page, addons.length, total) };
  }

  @GrpcMethod('CatalogService', 'UpdateAddon')
  async updateAddon(request: catalogV1.UpdateAddonRequest): Promise<MessageInitShape<typeof catalogV1.UpdateAddonResponseSchema>> {
    const addon = await this.addons.update(requireTenant(request.tenant), request.id, {
      name: request.name,
      description: request.description,
      priceMonthly: fromInt64(request.priceMonthly, 'price_monthly'),
      currency: request.currency,
      metadata: Object.keys(request.metadata).length > 0 ? request.metadata : undefined,
    });
    return { addon: toAddonMessage(addon) };
  }

  @GrpcMethod('CatalogService', 'TakeAddonOffSale')
  async takeAddonOffSale(request: catalogV1.TakeAddonOffSaleRequest): Promise<MessageInitShape<typeof catalogV1.TakeAddonOffSaleResponseSchema>> {
    return { addon: toAddonMessage(await this.addons.takeOffSale(requireTenant(request.tenant), request.id)) };
  }

  @GrpcMethod('CatalogService', 'RestoreAddon')
  async restoreAddon(request: catalogV1.RestoreAddonRequest): Promise<MessageInitShape<typeof catalogV1.RestoreAddonResponseSchema>> {
    return { addon: toAddonMessage(await this.addons.restore(requireTenant(request.tenant), request.id)) };
  }
}
