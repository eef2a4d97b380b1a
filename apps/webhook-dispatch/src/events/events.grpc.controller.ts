import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { requireTenant, webhookDispatchV1 } from '@recur/contracts';
import { checkPage, pageInfo } from '@recur/kernel';
import { PrismaService } from '../infrastructure/prisma.service';

/** gRPC edge of the event log. */
@Controller()
export class EventsGrpcController {
  constructor(private readonly prisma: PrismaService) {}

  @GrpcMethod('WebhookDispatchService', 'ListEvents')
  async listEvents(request: webhookDispatchV1.ListEventsRequest): Promise<MessageInitShape<typeof webhookDispatchV1.ListEventsResponseSchema>> {
    const tenant = requireTenant(request.tenant);
    const page = checkPage(request.page?.limit, request.page?.offset);
    const where = { accountId: tenant.accountId, livemode: tenant.livemode, ...(request.type ? { type: request.type } : {}) };
    const [rows, total] = await Promise.all([
      this.prisma.event.findMany({ where, orderBy: [{ created: 'desc' }, { receivedAt: 'desc' }], skip: page.offset, take: page.limit }),
      this.prisma.event.count({ where }),
    ]);
    return {
      events: rows.map((row) => ({
        id: row.id,
        type: row.type,
        created: row.created,
        livemode: row.livemode,
        dataJson: JSON.stringify(row.data),
      })),
      page: pageInfo(page, rows.length, total),
    };
  }
}
