import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { requireTenant, webhookDispatchV1 } from '@recur/contracts';
import { checkListPage, notFound } from '@recur/kernel';
import { type ListOrder, readListPage } from '@recur/persistence';
import { WEBHOOK_TEST_EVENT_TYPE } from '@recur/vocabulary';
import type { Event as EventRow, Prisma } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';

const toEventMessage = (row: EventRow) => ({ id: row.id, type: row.type, created: row.created, livemode: row.livemode, dataJson: JSON.stringify(row.data) });

/** gRPC edge of the event log: what GET /v1/events reads, the same envelopes the webhooks carry. */
/** Newest first by the envelope's `created` (seconds), then arrival, then id: a total order. */
const EVENTS_ORDER: ListOrder = [{ created: 'desc' }, { receivedAt: 'desc' }, { id: 'desc' }];

@Controller()
export class EventsGrpcController {
  constructor(private readonly prisma: PrismaService) {}

  @GrpcMethod('WebhookDispatchService', 'ListEvents')
  async listEvents(request: webhookDispatchV1.ListEventsRequest): Promise<MessageInitShape<typeof webhookDispatchV1.ListEventsResponseSchema>> {
    const tenant = requireTenant(request.tenant);
    const where: Prisma.EventWhereInput = {
      accountId: tenant.accountId,
      livemode: tenant.livemode,
      ...(request.type ? { type: request.type } : request.accountEventsOnly ? { type: { not: WEBHOOK_TEST_EVENT_TYPE } } : {}),
      // Events recorded by a release before object_id (or by its replicas during the rollout) have
      // none: their resource is read from the envelope until a later release backfills the column.
      ...(request.objectId ? { OR: [{ objectId: request.objectId }, { objectId: null, data: { path: ['object', 'id'], equals: request.objectId } }] } : {}),
      ...(request.createdGte !== undefined || request.createdLte !== undefined
        ? { created: { ...(request.createdGte !== undefined ? { gte: request.createdGte } : {}), ...(request.createdLte !== undefined ? { lte: request.createdLte } : {}) } }
        : {}),
    };
    const { rows, page: info } = await readListPage(checkListPage(request.page), {
      resource: 'event', order: EVENTS_ORDER, where, cursorScope: { accountId: tenant.accountId, livemode: tenant.livemode },
      findMany: (read) => this.prisma.event.findMany(read),
      count: (query) => this.prisma.event.count(query),
    });
    return { events: rows.map(toEventMessage), page: info, filtersApplied: true };
  }

  @GrpcMethod('WebhookDispatchService', 'GetEvent')
  async getEvent(request: webhookDispatchV1.GetEventRequest): Promise<MessageInitShape<typeof webhookDispatchV1.GetEventResponseSchema>> {
    const tenant = requireTenant(request.tenant);
    const row = await this.prisma.event.findFirst({ where: { id: request.id, accountId: tenant.accountId, livemode: tenant.livemode } });
    if (!row) throw notFound('event', request.id);
    return { event: toEventMessage(row) };
  }
}
