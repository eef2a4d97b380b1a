import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { requireTenant, usageMeteringV1 } from '@recur/contracts';
import { unixSeconds } from '@recur/kernel';
import { PeriodUsageService } from './period-usage.service';

const fromSeconds = (seconds: bigint) => new Date(Number(seconds) * 1000);

/** gRPC edge of the billing reads: decode, call, encode. */
@Controller()
export class PeriodUsageGrpcController {
  constructor(private readonly periodUsage: PeriodUsageService) {}

  @GrpcMethod('UsageMeteringService', 'GetPeriodUsage')
  async getPeriodUsage(request: usageMeteringV1.GetPeriodUsageRequest): Promise<MessageInitShape<typeof usageMeteringV1.GetPeriodUsageResponseSchema>> {
    const queries = request.queries.map((query) => ({
      tenant: requireTenant(query.tenant),
      subscriptionId: query.subscriptionId,
      period: { start: fromSeconds(query.periodStart), end: fromSeconds(query.periodEnd) },
      metricNames: query.metricNames,
      billingKey: query.billingKey === '' ? null : query.billingKey,
      billingInterval: query.billingInterval === '' ? null : query.billingInterval,
    }));
    const results = await this.periodUsage.periodUsage(queries);
    return {
      results: results.map((lines, index) => ({
        subscriptionId: queries[index].subscriptionId,
        lines: lines.map((line) => ({
          metricName: line.metricName,
          periodStart: BigInt(unixSeconds(line.period.start)),
          periodEnd: BigInt(unixSeconds(line.period.end)),
          quantity: line.quantity,
          billedBefore: line.billedBefore,
          late: line.late,
          billingInterval: line.billingInterval ?? '',
        })),
      })),
    };
  }
}
