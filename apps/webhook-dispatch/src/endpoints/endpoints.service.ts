import { create } from '@bufbuild/protobuf';
import { Inject, Injectable } from '@nestjs/common';
import { endpointV1 } from '@recur/contracts';
import { type Clock, CLOCK, notFound, type Page, type PageInfo, type TenantRef, unixSeconds } from '@recur/kernel';
import { NEWEST_FIRST, readListPage } from '@recur/persistence';
import type { Prisma, WebhookEndpoint as EndpointRow } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import { WEBHOOK_CONFIG } from '../tokens';
import type { WebhookConfig } from '../webhook-config';
import { createEndpoint, type Endpoint, type EndpointChanges, type EndpointStatus, updateEndpoint } from './endpoint';

type Tx = Prisma.TransactionClient;

function fromRow(row: EndpointRow): Endpoint {
  return {
    id: row.id,
    tenant: { accountId: row.accountId, livemode: row.livemode },
    url: row.url,
    events: row.events,
    status: row.status as EndpointStatus,
    description: row.description,
    secret: row.secret,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** The secret is part of the message only in the answer to creation. */
export function toEndpointMessage(endpoint: Endpoint, withSecret = false): endpointV1.WebhookEndpoint {
  return create(endpointV1.WebhookEndpointSchema, {
    id: endpoint.id,
    livemode: endpoint.tenant.livemode,
    url: endpoint.url,
    events: endpoint.events,
    status: endpoint.status,
    description: endpoint.description,
    secret: withSecret ? endpoint.secret : '',
    created: BigInt(unixSeconds(endpoint.createdAt)),
    updated: BigInt(unixSeconds(endpoint.updatedAt)),
  });
}

@Injectable()
export class EndpointsService {
  constructor(
    private readonly prisma: PrismaService,
    @Inject(WEBHOOK_CONFIG) private readonly config: WebhookConfig,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  private scope(tenant: TenantRef) {
    return { accountId: tenant.accountId, livemode: tenant.livemode, deletedAt: null };
  }

  async get(tenant: TenantRef, id: string, tx: Tx = this.prisma): Promise<Endpoint> {
    const row = await tx.webhookEndpoint.findFirst({ where: { id, ...this.scope(tenant) } });
    if (!row) throw notFound('webhook endpoint', id);
    return fromRow(row);
  }

  async create(tx: Tx, tenant: TenantRef, fields: { url: string; events: string[]; description?: string }): Promise<Endpoint> {
    // Creates in one app take turns until commit, so concurrent ones cannot all count 15 and insert.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`webhook_endpoints:${tenant.accountId}:${tenant.livemode}`}, 0))`;
    const existing = await tx.webhookEndpoint.count({ where: this.scope(tenant) });
    const endpoint = createEndpoint(tenant, fields, this.config.allowPrivateUrls, this.now(), existing);
    await tx.webhookEndpoint.create({
      data: {
        id: endpoint.id, accountId: tenant.accountId, livemode: tenant.livemode, url: endpoint.url, events: endpoint.events,
        status: endpoint.status, description: endpoint.description, secret: endpoint.secret,
        createdAt: endpoint.createdAt, updatedAt: endpoint.updatedAt,
      },
    });
    return endpoint;
  }

  async list(tenant: TenantRef, page: Page): Promise<{ endpoints: Endpoint[]; page: PageInfo }> {
    const where = this.scope(tenant);
    const { rows, page: info } = await readListPage(page, {
      resource: 'webhook endpoint', order: NEWEST_FIRST, where, cursorScope: { accountId: tenant.accountId, livemode: tenant.livemode },
      findMany: (read) => this.prisma.webhookEndpoint.findMany(read),
      count: (query) => this.prisma.webhookEndpoint.count(query),
    });
    return { endpoints: rows.map(fromRow), page: info };
  }

  async update(tx: Tx, tenant: TenantRef, id: string, changes: EndpointChanges): Promise<Endpoint> {
    const updated = updateEndpoint(await this.get(tenant, id, tx), changes, this.config.allowPrivateUrls, this.now());
    await tx.webhookEndpoint.update({
      where: { id },
      data: { url: updated.url, events: updated.events, status: updated.status, description: updated.description, updatedAt: updated.updatedAt },
    });
    // A disabled endpoint receives nothing: its queued deliveries stop.
    if (updated.status === 'disabled') await this.stopPending(tx, id);
    return updated;
  }

  async delete(tx: Tx, tenant: TenantRef, id: string): Promise<Endpoint> {
    const endpoint = await this.get(tenant, id, tx);
    await tx.webhookEndpoint.update({ where: { id }, data: { deletedAt: this.now() } });
    await this.stopPending(tx, id);
    return endpoint;
  }

  private async stopPending(tx: Tx, endpointId: string): Promise<void> {
    await tx.delivery.updateMany({ where: { endpointId, status: 'pending' }, data: { status: 'failed', nextAttemptAt: null, updatedAt: this.now() } });
  }
}
