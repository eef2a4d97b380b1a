import { Injectable } from '@nestjs/common';
import { PrismaService } from '../infrastructure/prisma.service';
import { IdempotencyRecords } from './idempotency.records';

export { type Claim, IDEMPOTENCY_LOCK_TTL_MS, IDEMPOTENCY_RETENTION_MS } from './idempotency.records';

/** The records as a Nest provider on the gateway's database (kept apart so the rules load without Nest). */
@Injectable()
export class IdempotencyRepository extends IdempotencyRecords {
  constructor(prisma: PrismaService) {
    super(prisma);
  }
}
