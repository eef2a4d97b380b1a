import { create } from '@bufbuild/protobuf';
import { Inject, Injectable } from '@nestjs/common';
import { endpointV1 } from '@recur/contracts';
import { type Clock, CLOCK, failedPrecondition, newId, notFound, type Page, type PageInfo, type TenantRef, unixSeconds } from '@recur/kernel';
import { NEWEST_FIRST, readListPage } from '@recur/persistence';
import { injectTraceHeaders } from '@recur/telemetry';
import type { Delivery as DeliveryRow, DeliveryAttempt as AttemptRow, Prisma } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import { EndpointsService } from '../endpoints/endpoints.service';

/** Wakes the dispatcher when the transaction that queued a delivery commits. */
export const DELIVERIES_CHANNEL = 'recur_deliveries';
type Tx = Prisma.TransactionClient;

function toDeliveryMessage(row: DeliveryRow, attempts: AttemptRow[]): endpointV1.Delivery {
  return create(endpointV1.DeliverySchema, {
    id: row.id,
    endpointId: row.endpointId,
    eventId: row.eventId,
    eventType: row.eventType,
    status: row.status,
    livemode: row.livemode,
    nextAttemptAt: row.status === 'pending' && row.nextAttemptAt ? BigInt(row.nextAttemptAt.getTime()) : 0n,
    created: BigInt(unixSeconds(row.createdAt)),
    attempts: attempts
      .sort((a, b) => a.number - b.number)
      .map((attempt) => ({
        number: attempt.number,
        attemptedAt: BigInt(attempt.attemptedAt.getTime()),
        statusCode: attempt.statusCode ?? 0,
        error: attempt.error ?? '',
        durationMs: attempt.durationMs,
        responseExcerpt: attempt.responseExcerpt,
        manual: attempt.manual,
      })),
  });
}

/**
 * Deliveries: queued for every enabled endpoint subscribed to an event, in the statement
 * that records the event (EventLogConsumer); sent by the DeliveryDispatcher; listed and replayed from here.
 */
@Injectable()
export class DeliveriesService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly endpoints: EndpointsService,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  /**
   * A delivery due now by the clock, which the dispatcher also claims by. It keeps the active
   * trace (the event's consumer span, or the test-event request) for its attempts to continue.
   */
  private newDelivery(accountId: string, livemode: boolean, endpointId: string, eventId: string, eventType: string) {
    const now = this.now();
    const traceHeaders = injectTraceHeaders();
    return {
      id: newId('whd'), accountId, livemode, endpointId, eventId, eventType, status: 'pending', nextAttemptAt: now, createdAt: now, updatedAt: now,
      traceHeaders: Object.keys(traceHeaders).length > 0 ? traceHeaders : undefined,
    };
  }

  async list(tenant: TenantRef, endpointId: string, page: Page): Promise<{ deliveries: endpointV1.Delivery[]; page: PageInfo }> {
    await this.endpoints.get(tenant, endpointId);
    const where = { accountId: tenant.accountId, livemode: tenant.livemode, endpointId };
    const { rows, page: info } = await readListPage(page, {
      resource: 'delivery', order: NEWEST_FIRST, where, cursorScope: { accountId: tenant.accountId, livemode: tenant.livemode },
      findMany: (read) => this.prisma.delivery.findMany(read),
      count: (query) => this.prisma.delivery.count(query),
    });
    const attempts = await this.prisma.deliveryAttempt.findMany({ where: { deliveryId: { in: rows.map((row) => row.id) } } });
    return { deliveries: rows.map((row) => toDeliveryMessage(row, attempts.filter((attempt) => attempt.deliveryId === row.id))), page: info };
  }

  async get(tenant: TenantRef, endpointId: string, deliveryId: string, tx: Tx = this.prisma): Promise<endpointV1.Delivery> {
    const row = await tx.delivery.findFirst({ where: { id: deliveryId, endpointId, accountId: tenant.accountId, livemode: tenant.livemode } });
    if (!row) throw notFound('delivery', deliveryId);
    return toDeliveryMessage(row, await tx.deliveryAttempt.findMany({ where: { deliveryId } }));
  }

  /** One more attempt, now, with the same event id; allowed once the delivery's own schedule ended. */
  async retry(tx: Tx, tenant: TenantRef, endpointId: string, deliveryId: string): Promise<endpointV1.Delivery> {
    const endpoint = await this.endpoints.get(tenant, endpointId, tx);
    if (endpoint.status !== 'enabled') throw failedPrecondition('endpoint_disabled', `Webhook endpoint '${endpointId}' is disabled; enable it to retry deliveries.`);
    await tx.$executeRaw`SELECT 1 FROM deliveries WHERE id = ${deliveryId} FOR UPDATE`;
    const row = await tx.delivery.findFirst({ where: { id: deliveryId, endpointId, accountId: tenant.accountId, livemode: tenant.livemode } });
    if (!row) throw notFound('delivery', deliveryId);
    if (row.status === 'pending') throw failedPrecondition('delivery_in_progress', `Delivery '${deliveryId}' still has an attempt pending.`);
    const now = this.now();
    await tx.delivery.update({ where: { id: deliveryId }, data: { status: 'pending', manual: true, nextAttemptAt: now, leaseUntil: null, updatedAt: now } });
    await tx.$executeRawUnsafe(`SELECT pg_notify('${DELIVERIES_CHANNEL}', '')`);
    return this.get(tenant, endpointId, deliveryId, tx);
  }

  /** Records a `webhook.test` event and queues it for this endpoint only. */
  async sendTest(tx: Tx, tenant: TenantRef, endpointId: string): Promise<endpointV1.Delivery> {
    const endpoint = await this.endpoints.get(tenant, endpointId, tx);
    if (endpoint.status !== 'enabled') throw failedPrecondition('endpoint_disabled', `Webhook endpoint '${endpointId}' is disabled.`);
    const eventId = newId('evt');
    const delivery = this.newDelivery(tenant.accountId, tenant.livemode, endpointId, eventId, 'webhook.test');
    await tx.event.create({
      data: {
        id: eventId,
        accountId: tenant.accountId,
        livemode: tenant.livemode,
        type: 'webhook.test',
        created: BigInt(unixSeconds(delivery.createdAt)),
        data: { object: { id: endpoint.id, object: 'webhook_endpoint', url: endpoint.url }, message: 'A test event sent from Recur to this endpoint.' },
      },
    });
    await tx.delivery.create({ data: delivery });
    await tx.$executeRawUnsafe(`SELECT pg_notify('${DELIVERIES_CHANNEL}', '')`);
    return this.get(tenant, endpointId, delivery.id, tx);
  }
}
