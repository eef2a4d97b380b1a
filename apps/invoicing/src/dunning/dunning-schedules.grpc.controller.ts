import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller, Inject } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { invoicingV1, requireTenant } from '@recur/contracts';
import { CLOCK, type Clock, unixSeconds } from '@recur/kernel';
import { Commands } from '../infrastructure/commands';
import { PrismaService } from '../infrastructure/prisma.service';
import { INVOICING_CONFIG, type InvoicingConfig } from '../invoicing-config';
import { checkDunningSchedule } from './dunning-schedule';
import { checkPaymentRetrySchedule, DEFAULT_PAYMENT_RETRY_SCHEDULE } from './payment-retry-schedule';
import { DunningSchedulesRepository, type StoredDunningSchedule } from './dunning-schedules.repository';

/** gRPC edge of a tenant's dunning schedule: its own (set through `/v1/dunning-schedule`), else the default. */
@Controller()
export class DunningSchedulesGrpcController {
  constructor(
    private readonly schedules: DunningSchedulesRepository,
    private readonly prisma: PrismaService,
    private readonly commands: Commands,
    @Inject(CLOCK) private readonly now: Clock,
    @Inject(INVOICING_CONFIG) private readonly config: InvoicingConfig,
  ) {}

  @GrpcMethod('InvoicingService', 'GetDunningSchedule')
  async getDunningSchedule(request: invoicingV1.GetDunningScheduleRequest): Promise<MessageInitShape<typeof invoicingV1.GetDunningScheduleResponseSchema>> {
    const stored = await this.schedules.find(this.prisma, requireTenant(request.tenant));
    return { schedule: this.toMessage(stored) };
  }

  @GrpcMethod('InvoicingService', 'SetDunningSchedule')
  async setDunningSchedule(request: invoicingV1.SetDunningScheduleRequest): Promise<invoicingV1.SetDunningScheduleResponse> {
    const tenant = requireTenant(request.tenant);
    const retries = request.paymentRetries;
    // Reminders may be left out when only the retries change.
    const keepDays = request.daysAfterFailure.length === 0 && retries !== undefined;
    const days = keepDays ? undefined : checkDunningSchedule(request.daysAfterFailure, 'days_after_failure');
    const paymentRetries = retries && checkPaymentRetrySchedule({ days: retries.daysAfterFailure, hour: retries.hour, timeZone: retries.timeZone || 'UTC' });
    return this.commands.run(tenant, request, invoicingV1.SetDunningScheduleResponseSchema, async (tx) => {
      const reminderDays = days ?? (await this.schedules.find(tx, tenant))?.days ?? this.config.dunningScheduleDays;
      return { schedule: this.toMessage(await this.schedules.save(tx, tenant, reminderDays, paymentRetries, this.now())) };
    });
  }

  private toMessage(stored: StoredDunningSchedule | undefined): MessageInitShape<typeof invoicingV1.DunningScheduleSchema> {
    const retries = stored?.paymentRetries ?? DEFAULT_PAYMENT_RETRY_SCHEDULE;
    const paymentRetries = { daysAfterFailure: retries.days, hour: retries.hour, timeZone: retries.timeZone, default: !stored?.paymentRetries };
    return stored
      ? { daysAfterFailure: stored.days, default: false, updated: BigInt(unixSeconds(stored.updatedAt)), paymentRetries }
      : { daysAfterFailure: this.config.dunningScheduleDays, default: true, updated: 0n, paymentRetries };
  }
}
