import { Inject, Injectable } from '@nestjs/common';
import { CommandResults, PgTransactions } from '@recur/persistence';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from './prisma.service';

/** Runs each mutating RPC in one transaction with the record of its answer (safe to repeat by request id). */
@Injectable()
export class Commands extends CommandResults<Prisma.TransactionClient> {
  constructor(prisma: PrismaService) {
    super(prisma);
  }
}

/**
 * Transactions on a plain `pg` connection of Prisma's own pool, for the batch that skips the
 * ORM (the billing clock's renewal invoices, set-based SQL): wake-ups go out after the COMMIT.
 */
@Injectable()
export class PlainTransactions extends PgTransactions {
  constructor(prisma: PrismaService, @Inject(SERVICE_RUNTIME) runtime: ServiceRuntime) {
    super(prisma.pool, (error) => runtime.logger.warn('wake-up after commit failed; listeners will poll', { error: error.message }));
  }
}
